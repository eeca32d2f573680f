"""Rewind goes back only as far as the user confirmed, after seeing what would go: the keys users
already know (↑, Esc Esc, r) never rewind on their own, however fast they are pressed."""

from __future__ import annotations

from textual import events

from kit.apps import make_app
from kit.offline import offline_app, offline_chat
from kit.pilot import (
    SIZE,
    hold_escape_clock,
    notifications,
    screen_lines,
    server_users,
    settle,
    turns,
    user_texts,
    wait_until,
)
from rewindtui.tui.widgets.transcript import Transcript

SIX = ("t1", "t2", "t3", "t4", "t5", "t6")


async def test_up_then_typing_recalls_a_prompt_and_fires_no_command(server):
    app = make_app(server)
    async with app.run_test(size=SIZE) as pilot:
        await turns(app, pilot, "first", "weather in Oslo", "third")
        screen = app.chat_screen
        # the shell habit: ↑ on an empty composer, then type
        await pilot.press("up", *"try again")
        await settle(app, pilot)
        assert screen.composer.text == "thirdtry again"
        assert not screen.rewind_mode and screen.transcript.cursor is None
        assert user_texts(app) == ["first", "weather in Oslo", "third"]
        assert await server_users(server, app) == ["first", "weather in Oslo", "third"]
        # and no tool group was toggled by the "t"
        assert not screen.transcript.expanded


async def test_printable_keys_in_the_transcript_go_to_the_composer(server):
    app = make_app(server)
    async with app.run_test(size=SIZE) as pilot:
        await turns(app, pilot, "one", "two")
        screen = app.chat_screen
        screen.transcript.focus()  # e.g. after a click to scroll
        await pilot.press(*"try refetching")
        await settle(app, pilot)
        assert screen.composer.text == "try refetching" and screen.composer.has_focus
        assert await server_users(server, app) == ["one", "two"]
        # in rewind mode, a key that is not a command leaves the mode and goes to the composer
        screen.composer.text = ""
        await pilot.press("alt+up", "x", "y")
        await pilot.pause()
        assert not screen.rewind_mode and screen.composer.text == "xy"
        assert user_texts(app) == ["one", "two"]


async def test_escape_escape_with_a_draft_clears_it_and_ctrl_z_brings_it_back(server):
    app = make_app(server)
    async with app.run_test(size=SIZE) as pilot:
        await turns(app, pilot, "one", "two")
        screen = app.chat_screen
        hold_escape_clock(app)  # two Escs are a double however slowly a loaded machine delivers them
        await pilot.press(*"my draft")
        await pilot.press("escape")
        assert screen.composer.text == "my draft" and "clears the draft" in screen.banner.text
        await pilot.press("escape")
        await pilot.pause()
        assert screen.composer.text == ""
        assert not screen.rewind_mode
        assert "Draft cleared; ctrl+z brings it back." in notifications(app)
        await pilot.press("ctrl+z")
        assert screen.composer.text == "my draft"
        await settle(app, pilot)
        assert user_texts(app) == ["one", "two"] and await server_users(server, app) == ["one", "two"]


async def test_escape_escape_on_an_empty_composer_previews_the_last_turn_and_never_rewinds(server):
    app = make_app(server)
    async with app.run_test(size=SIZE) as pilot:
        invocations = await turns(app, pilot, "one", "two", "three")
        screen = app.chat_screen
        hold_escape_clock(app)  # two Escs are a double however slowly they come
        transcript = screen.transcript
        await pilot.press("escape", "escape")
        await pilot.pause()
        assert screen.rewind_mode and transcript.preview
        assert transcript.selected().invocation_id == invocations[2]
        assert screen.status.mode == "rewind"
        assert "Rewind mode" in screen.banner.text and "“three”: 1 turn (2 messages)" in screen.banner.text
        # the preview: a rule above the selected turn; it and what follows drawn dimmed
        lines = screen_lines(transcript)
        rule = next(i for i, line in enumerate(lines) if "rewind point: 1 turn below will be removed" in line)
        assert lines[rule + 1].startswith("you") and lines[rule + 2].strip() == "┃ three"
        await pilot.press("escape")  # leaves, nothing changed
        await settle(app, pilot)
        assert not screen.rewind_mode and screen.banner.kind == ""
        assert user_texts(app) == ["one", "two", "three"]
        assert await server_users(server, app) == ["one", "two", "three"]


async def test_mashed_keys_never_rewind_more_than_was_confirmed(server):
    app = make_app(server)
    async with app.run_test(size=SIZE) as pilot:
        await turns(app, pilot, *SIX)
        screen = app.chat_screen
        hold_escape_clock(app)  # quick means quick, however slowly a loaded machine delivers the keys
        # six quick Esc on an empty composer: into rewind mode and out again, then nothing more
        # (Esc backs out one level; the rest of the burst never re-arms the preview)
        await pilot.press(*["escape"] * 6)
        await settle(app, pilot)
        assert user_texts(app) == list(SIX)
        assert await server_users(server, app) == list(SIX)
        assert not screen.rewind_mode
        # r four times in rewind mode: text, never a command (issue 20: a printable key is text)
        await pilot.press("alt+up", "r", "r", "r", "r")
        await settle(app, pilot)
        assert user_texts(app) == list(SIX) and await server_users(server, app) == list(SIX)
        assert screen.composer.text == "rrrr" and not screen.rewind_mode
        # only Enter on the preview rewinds
        screen.composer.text = ""
        await pilot.press("alt+up", "enter")
        await settle(app, pilot)
        assert user_texts(app) == list(SIX[:5])
        assert await server_users(server, app) == list(SIX[:5])
        assert "Rewound 1 turn — ctrl+z undoes it." in notifications(app)
        # Esc three times while editing: the edit is cancelled, the view restored, nothing rewound
        screen.composer.text = ""
        await pilot.press("alt+up", "up", "alt+e")
        await pilot.pause()
        assert screen.composer.text == "t4" and user_texts(app) == ["t1", "t2", "t3"]
        await pilot.press("escape", "escape", "escape")
        await settle(app, pilot)
        assert user_texts(app) == list(SIX[:5])
        assert await server_users(server, app) == list(SIX[:5])
        assert app.chat.edit is None and screen.composer.text == ""


async def test_keys_queued_in_one_burst_never_rewind(server):
    """The same mashing, with every key already queued before the first is handled."""
    app = make_app(server)
    async with app.run_test(size=SIZE) as pilot:
        await turns(app, pilot, *SIX[:3])
        for key in ["escape"] * 6 + ["alt+up", "r", "r", "r", "r"]:
            app.post_message(events.Key(key, key if len(key) == 1 else None))
        await settle(app, pilot)
        # every key reached the composer before the rewind mode could take focus: the r's are
        # text, their typing left the mode, and nothing was rewound
        screen = app.chat_screen
        assert screen.composer.text == "rrrr" and screen.composer.has_focus and not screen.rewind_mode
        assert user_texts(app) == list(SIX[:3]) and await server_users(server, app) == list(SIX[:3])


async def test_palette_rewind_only_opens_the_preview_and_enter_rewinds(server):
    """Issue 20: the palette's Rewind shows what would go; only Enter on that preview rewinds."""
    app = make_app(server)
    async with app.run_test(size=SIZE) as pilot:
        await turns(app, pilot, "one", "two")
        screen = app.chat_screen
        await pilot.press("ctrl+p")
        await pilot.pause()
        await pilot.press(*"Rewind")
        await pilot.pause(0.3)
        await pilot.press("enter")
        await settle(app, pilot)
        await wait_until(pilot, lambda: screen.rewind_mode)
        assert user_texts(app) == ["one", "two"] and await server_users(server, app) == ["one", "two"]
        await pilot.press("up", "enter")
        await settle(app, pilot)
        assert user_texts(app) == [] and await server_users(server, app) == []
        assert "Rewound 2 turns — ctrl+z undoes it." in notifications(app) and not screen.rewind_mode


async def test_clicks_in_rewind_mode_choose_the_turn_and_never_confirm(server):
    app = make_app(server)
    async with app.run_test(size=SIZE) as pilot:
        invocations = await turns(app, pilot, "one", "two", "three")
        screen = app.chat_screen
        transcript = screen.transcript
        await pilot.press("alt+up")
        await pilot.pause()
        # click the first turn's text: it becomes the selected turn (header and all in view)
        line = next(i for i, text in enumerate(screen_lines(transcript)) if text.strip() == "▏ one")
        await pilot.click(Transcript, offset=(4, line))
        await pilot.pause()
        assert transcript.selected().invocation_id == invocations[0]
        assert "3 turns" in screen.banner.text
        # a click on a message's own rewind button only moves the selection, even twice
        lines = screen_lines(transcript)
        line = next(i for i, text in enumerate(lines) if text.strip() == "▏ two") - 1
        x = lines[line].index("Rewind to here")
        await pilot.click(Transcript, offset=(x, line))
        await pilot.click(Transcript, offset=(x, line))
        await settle(app, pilot)
        assert transcript.selected().invocation_id == invocations[1]
        assert await server_users(server, app) == ["one", "two", "three"]
        await wait_until(pilot, lambda: screen.rewind_mode)


async def test_escape_escape_is_two_presses_within_the_window_on_the_keys_clock():
    """Two Escs are an Esc Esc when they fall within the window on the Esc key's own clock (given
    to it, so a loaded machine that delivers keys slowly changes nothing); two presses further
    apart than the window are two single Escs: the hint again, no preview."""
    app = offline_app(offline_chat())
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        screen = app.chat_screen
        clock = hold_escape_clock(app)
        await pilot.press("escape")
        await pilot.pause()
        assert screen.banner.kind == "hint" and not screen.rewind_mode
        clock.advance(screen.escape.window + 0.1)
        await pilot.press("escape")  # too late for a double: a single Esc, the hint again
        await pilot.pause()
        assert screen.banner.kind == "hint" and not screen.rewind_mode
        clock.advance(screen.escape.window - 0.1)
        await pilot.press("escape")  # within the window: Esc Esc on an empty composer, the preview
        await pilot.pause()
        assert screen.rewind_mode and screen.transcript.preview
