"""Keys, drafts and undo, sequence by sequence (the numbers are issue 20's): a printable key is text, nothing
typed is lost, one undo that says what it undoes, commands by chords and slash commands, and the
small fixes of the TUI. Real app, real embedded server over loopback."""

from __future__ import annotations

from pathlib import Path

from kit.apps import make_app
from kit.pilot import (
    SIZE,
    frame_lines,
    hold_escape_clock,
    notifications,
    send,
    server_tasks,
    server_users,
    settle,
    turns,
    user_texts,
    user_texts_of,
    wait_until,
)
from rewindtui.tui.screens.confirm import ConfirmScreen
from rewindtui.tui.screens.help import HelpScreen
from rewindtui.tui.screens.path_prompt import PathPrompt
from rewindtui.tui.widgets.slash_menu import SlashMenu
from rewindtui.tui.widgets.welcome import Welcome


# -- 1: Esc Esc then typing is text; Esc x5 never leaves the preview armed ------------------------
async def test_1_escape_escape_then_typing_goes_to_the_composer_and_rewinds_nothing(server):
    app = make_app(server)
    async with app.run_test(size=SIZE) as pilot:
        await turns(app, pilot, "one", "two")
        screen = app.chat_screen
        hold_escape_clock(app)  # two Escs are a double however slowly they come
        for words in ("refactor this", "hello"):
            screen.composer.text = ""
            await pilot.press("escape", "escape")
            await pilot.pause()
            assert screen.rewind_mode  # the habit's preview: shown, nothing done
            await pilot.press(*words)
            await settle(app, pilot)
            assert screen.composer.text == words and not screen.rewind_mode
            assert app.chat.edit is None
            assert user_texts(app) == ["one", "two"] and await server_users(server, app) == ["one", "two"]
        screen.composer.text = ""
        await pilot.press(*["escape"] * 5)
        await settle(app, pilot)
        assert not screen.rewind_mode
        await pilot.press("enter")
        await settle(app, pilot)
        assert await server_users(server, app) == ["one", "two"]


# -- 2: a draft survives an edit, cancelled or sent ---------------------------------------------
async def test_2_a_draft_is_stashed_during_an_edit_and_comes_back(server):
    app = make_app(server)
    async with app.run_test(size=SIZE) as pilot:
        await turns(app, pilot, "one", "two")
        screen = app.chat_screen
        await pilot.press(*"my draft")
        await pilot.press("alt+up", "alt+e")
        await pilot.pause()
        assert app.chat.edit is not None and screen.composer.text == "two"
        await pilot.press("escape")
        await settle(app, pilot)
        assert app.chat.edit is None and screen.composer.text == "my draft"
        # and when the edit is sent, the draft comes back after it
        await pilot.press("alt+up", "alt+e")
        await pilot.pause()
        screen.composer.text = "two again"
        await pilot.press("enter")
        await settle(app, pilot)
        assert await server_users(server, app) == ["one", "two again"]
        assert screen.composer.text == "my draft"


# -- 3: one undo, named; never a sent message back; it survives a restart -----------------------
async def test_3_ctrl_z_undoes_the_rewind_not_the_typing_and_never_brings_a_sent_message_back(server, tmp_path: Path):
    app = make_app(server, data_dir=tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await turns(app, pilot, "one", "two", "three")
        screen = app.chat_screen
        await pilot.press("ctrl+z")  # after an ordinary send: the message never comes back
        await pilot.pause()
        assert screen.composer.text == ""
        await pilot.press("alt+up", "enter")
        await settle(app, pilot)
        assert "Rewound 1 turn — ctrl+z undoes it." in notifications(app)
        assert screen.status.undo.startswith("ctrl+z: undo")
        session = app.chat.session_id
    # a restart: the undo is read from the server, named, and works
    again = make_app(server, session, data_dir=tmp_path)
    async with again.run_test(size=SIZE) as pilot:
        await settle(again, pilot)
        screen = again.chat_screen
        assert screen.status.undo.startswith("ctrl+z: undo")
        await pilot.press(*"typed")
        await pilot.press("ctrl+z")
        await settle(again, pilot)
        assert screen.composer.text == "typed"
        assert await server_users(server, again) == ["one", "two", "three"]


# -- 7: a send while a question waits: said in the app's words, the status stays true ------------
async def test_7_sending_while_a_question_waits_says_what_to_do(server):
    app = make_app(server)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        screen = app.chat_screen
        await send(app, pilot, "please delete temp.txt")
        assert screen.turn_bar.kind == "question"
        await send(app, pilot, "go on")
        assert screen.composer.text == "go on"
        said = notifications(app)[-1]
        assert "alt+y" in said and "-32602" not in said and "decision_type" not in said
        assert screen.status.turn != "failed"
        await pilot.press("alt+n")
        await settle(app, pilot)
        assert screen.status.turn == "completed"


# -- 8: slash commands are never sent; // is a literal slash; unknown keeps the draft -------------
async def test_8_slash_commands_complete_run_and_are_never_sent(server):
    app = make_app(server)
    async with app.run_test(size=SIZE) as pilot:
        await turns(app, pilot, "one", "two")
        screen = app.chat_screen
        menu = screen.query_one(SlashMenu)
        await pilot.press("/")
        await pilot.pause()
        assert menu.has_class("-shown") and "rewind" in menu.names and "help" in menu.names
        await pilot.press(*"rew", "tab")
        assert screen.composer.text == "/rewind "
        await pilot.press("enter")
        await settle(app, pilot)
        assert screen.rewind_mode  # a preview, nothing rewound
        assert await server_users(server, app) == ["one", "two"]
        await pilot.press("escape")
        for text in ("/undo", "/help"):
            screen.composer.text = text
            await pilot.press("enter")
            await settle(app, pilot)
            if isinstance(app.screen, HelpScreen):
                await pilot.press("escape")
        (undo_note,) = [n for n in notifications(app) if "undo" in n.lower()]
        assert undo_note.count("othing to undo") == 1, (
            undo_note
        )  # one sentence, not "Nothing to undo here: Nothing to undo."
        screen.composer.text = "/frobnicate now"
        await pilot.press("enter")
        await settle(app, pilot)
        assert screen.composer.text == "/frobnicate now"
        assert any("No command /frobnicate" in n for n in notifications(app))
        screen.composer.text = "//etc/hosts is a file"
        await pilot.press("enter")
        await settle(app, pilot)
        assert await server_users(server, app) == ["one", "two", "/etc/hosts is a file"]


# -- 9: export asks where and never overwrites without asking ------------------------------------
async def test_9_export_asks_where_and_asks_before_replacing(server, tmp_path: Path):
    app = make_app(server)
    async with app.run_test(size=SIZE) as pilot:
        await turns(app, pilot, "one")
        screen = app.chat_screen
        target = tmp_path / "out.md"
        target.write_text("keep me")
        screen.composer.text = "/export"
        await pilot.press("enter")
        await pilot.pause()
        assert isinstance(app.screen, PathPrompt)
        await pilot.press(*str(target))  # the suggestion is selected: typing replaces it
        await pilot.press("enter")
        await pilot.pause()
        assert isinstance(app.screen, ConfirmScreen)
        await pilot.press("escape")  # stay: nothing written
        await settle(app, pilot)
        assert target.read_text() == "keep me"


# -- 10: 60 columns, a question waiting, F2 open -------------------------------------------------
async def test_10_question_bar_at_60_columns_with_the_sessions_panel(server):
    app = make_app(server)
    async with app.run_test(size=(60, 24)) as pilot:
        await settle(app, pilot)
        screen = app.chat_screen
        await send(app, pilot, "please delete temp.txt")
        await pilot.press("f2")
        await settle(app, pilot)
        bar, composer, panel = screen.turn_bar, screen.composer, screen.sessions
        assert bar.kind == "question"
        text = bar.query_one("#turn-text")
        assert text.size.width >= 30 and text.size.height <= 6  # never a letter per line
        assert composer.region.bottom <= app.size.height - 1 and composer.region.height >= 3  # on screen
        assert panel.size.width < 34


# -- 12: ctrl+o's path is pre-filled and selected ------------------------------------------------
async def test_12_attach_prompt_typing_replaces_the_suggestion(server, tmp_path: Path):
    app = make_app(server)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        file = tmp_path / "note.txt"
        file.write_text("hi")
        await pilot.press("ctrl+o")
        await pilot.pause()
        assert isinstance(app.screen, PathPrompt)
        await pilot.press(*str(file), "enter")
        await settle(app, pilot)
        assert not isinstance(app.screen, PathPrompt)
        assert [a.name for a in app.chat_screen.files.bar.attachments] == ["note.txt"]


# -- 13: F2, open a session: focus and the panel agree -------------------------------------------
async def test_13_opening_a_session_from_the_panel_closes_it_and_d_is_text(server):
    app = make_app(server)
    async with app.run_test(size=SIZE) as pilot:
        await turns(app, pilot, "first session")
        first = app.chat.session_id
        await pilot.press("ctrl+n")
        await settle(app, pilot)
        await turns(app, pilot, "second session")
        screen = app.chat_screen
        await pilot.press("f2")
        await settle(app, pilot)
        panel = screen.sessions
        assert panel.has_focus
        index = next(i for i, s in enumerate(panel.sessions) if s.id == first)
        panel.highlighted = index
        await pilot.press("enter")
        await settle(app, pilot)
        assert app.chat.session_id == first
        assert panel.has_class("hidden") and screen.composer.has_focus
        await pilot.press("d")
        assert screen.composer.text == "d"


# -- a draft left for a new session ---------------------------------------------------------------
async def open_from_panel(app, pilot, session_id: str) -> None:
    """F2, highlight ``session_id``, Enter: as a user opens a session from the panel."""
    await pilot.press("f2")
    await settle(app, pilot)
    panel = app.chat_screen.sessions
    panel.highlighted = next(i for i, s in enumerate(panel.sessions) if s.id == session_id)
    await pilot.press("enter")
    await settle(app, pilot)
    assert app.chat.session_id == session_id


async def test_a_draft_left_for_a_new_session_is_back_when_its_session_opens_again(server, tmp_path: Path):
    """Found using the app: in a session opened from F2, a draft typed, ctrl+n, a turn in the new
    session, then the first session opened again from F2: its draft was gone. The composer took
    that opening for a re-read of the session it had loaded last (the new session had no id when
    it was loaded, so the first one stayed "the session loaded last")."""
    app = make_app(server, data_dir=tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await turns(app, pilot, "first session")
        first = app.chat.session_id
        screen = app.chat_screen
        await pilot.press("ctrl+n")
        await turns(app, pilot, "second session")
        await open_from_panel(app, pilot, first)
        await pilot.press(*"half a thought", "ctrl+n")
        await settle(app, pilot)
        assert app.chat.session_id != first and screen.composer.text == ""
        await turns(app, pilot, "third session")
        await open_from_panel(app, pilot, first)
        assert screen.composer.text == "half a thought"


# -- 15: ctrl+q with a draft keeps it ------------------------------------------------------------
async def test_15_ctrl_q_keeps_the_draft_for_the_next_start(server, tmp_path: Path):
    app = make_app(server, data_dir=tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await turns(app, pilot, "one")
        session = app.chat.session_id
        await pilot.press(*"half a thought")
        await pilot.press("ctrl+q")
        await pilot.pause()
    assert app.return_code == 0
    again = make_app(server, session, data_dir=tmp_path)
    async with again.run_test(size=SIZE) as pilot:
        await settle(again, pilot)
        assert again.chat_screen.composer.text == "half a thought"


async def test_15_a_kept_draft_cleared_or_sent_does_not_come_back(server, tmp_path: Path):
    """Found by the tour: the kept draft's file outlived the draft. Cleared, then ctrl+q: it came
    back at every start; sent, then the app ended: it came back and Enter sent it twice."""
    app = make_app(server, data_dir=tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await turns(app, pilot, "one")
        session = app.chat.session_id
        await pilot.press(*"keep me", "ctrl+q")
        await pilot.pause()
    cleared = make_app(server, session, data_dir=tmp_path)
    async with cleared.run_test(size=SIZE) as pilot:
        await settle(cleared, pilot)
        assert cleared.chat_screen.composer.text == "keep me"
        cleared.chat_screen.composer.clear()
        await pilot.press("ctrl+q")
        await pilot.pause()
    sent = make_app(server, session, data_dir=tmp_path)
    async with sent.run_test(size=SIZE) as pilot:
        await settle(sent, pilot)
        assert sent.chat_screen.composer.text == ""  # cleared stays cleared
        await pilot.press(*"said once")
        await pilot.press("ctrl+q")
        await pilot.pause()
    crash = make_app(server, session, data_dir=tmp_path)
    async with crash.run_test(size=SIZE) as pilot:
        await settle(crash, pilot)
        assert crash.chat_screen.composer.text == "said once"
        crash.chat_screen.composer.focus()
        await pilot.press("enter")
        await settle(crash, pilot)
        assert user_texts(crash) == ["one", "said once"]
    # the app ended without ctrl+q (as a crash would): the sent draft is not kept
    after = make_app(server, session, data_dir=tmp_path)
    async with after.run_test(size=SIZE) as pilot:
        await settle(after, pilot)
        assert after.chat_screen.composer.text == ""


# -- 16: words and small fixes -------------------------------------------------------------------
async def test_16_welcome_help_says_esc_and_wide_tool_lines(server):
    app = make_app(server)
    async with app.run_test(size=(160, 40)) as pilot:
        await settle(app, pilot)
        screen = app.chat_screen
        welcome = screen.query_one(Welcome)
        assert welcome.has_class("-shown") and "F1" in str(welcome.render()) and "/" in str(welcome.render())
        await pilot.press("f1")
        await pilot.pause()
        assert isinstance(app.screen, HelpScreen) and "Esc closes it" in str(
            app.screen.query_one("#help-title").render()
        )
        await pilot.press("escape")
        await send(app, pilot, "weather in Reykjavik please, and in full detail")
        assert not welcome.has_class("-shown")
        lines = [screen.transcript.render_line(y).text for y in range(screen.transcript.size.height)]
        tool = next(line for line in lines if "get_weather(" in line)
        assert "…" not in tool and "Reykjavik" in tool and "→" in tool


async def test_16_clipboard_fallback_stays_in_the_data_dir(server, tmp_path: Path):
    app = make_app(server, data_dir=tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await turns(app, pilot, "one")
        screen = app.chat_screen
        screen.composer.text = "/copy"
        await pilot.press("enter")
        await settle(app, pilot)
        assert (tmp_path / "clipboard.txt").exists()


# -- 5 / 6: approvals survive rewind and undo; rewound turns reachable by keys -------------------
async def test_5_question_comes_back_with_its_buttons_after_rewind_and_undo(server):
    app = make_app(server)
    async with app.run_test(size=SIZE) as pilot:
        await turns(app, pilot, "one")
        screen = app.chat_screen
        await send(app, pilot, "please delete temp.txt")
        assert screen.turn_bar.kind == "question"
        await pilot.press("alt+up", "enter")
        await settle(app, pilot)
        assert screen.turn_bar.kind == ""
        await pilot.press("ctrl+z")
        await settle(app, pilot)
        await wait_until(pilot, lambda: screen.turn_bar.kind == "question")
        await pilot.press("alt+y")
        await settle(app, pilot)
        assert "'deleted_files': ['temp.txt']" in app.chat.conversation.items[-1].text


async def test_6_rewound_turns_are_reached_by_the_cursor_and_restored_by_a_key(server):
    app = make_app(server)
    async with app.run_test(size=SIZE) as pilot:
        await turns(app, pilot, "one", "two")
        screen = app.chat_screen
        await pilot.press("alt+up", "enter")
        await settle(app, pilot)
        await turns(app, pilot, "three")
        await pilot.press("f4")
        await settle(app, pilot)
        await wait_until(pilot, lambda: any(it.rewound is not None for it in app.chat.conversation.items))
        await pilot.press("alt+up", "up")
        await pilot.pause()
        selected = screen.transcript.selected()
        assert selected is not None and selected.rewound is not None and selected.text == "two"
        await pilot.press("alt+enter")
        await settle(app, pilot)
        users = user_texts_of(await server_tasks(server, app.chat.session_id))
        assert "two" in users


# -- 4: Stop keeps what came, under the same author, marked stopped -------------------------------
async def test_4_stop_keeps_the_streamed_text_under_its_author_marked_stopped(slow_server):
    app = make_app(slow_server)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        screen = app.chat_screen
        screen.composer.text = "tell me a long story " + " ".join(["and tell it at length"] * 8)
        await pilot.press("enter")
        await wait_until(pilot, lambda: any(it.streaming and len(it.text) > 20 for it in app.chat.conversation.items))
        streamed = next(it for it in app.chat.conversation.items if it.streaming)
        author, partial = streamed.author, streamed.text
        await pilot.press("escape")
        await settle(app, pilot)
        last = app.chat.conversation.items[-1]
        assert last.author == author and last.text.startswith(partial[:20])
        assert getattr(last, "stopped", False)
        lines = [screen.transcript.render_line(y).text for y in range(screen.transcript.size.height)]
        assert any("■ stopped" in line for line in lines)


def test_16_card_words_for_the_embedded_server_and_the_cards_own_version():
    from rewindtui.tui.screens.card import CardScreen

    screen = CardScreen({}, embedded=True)
    label, value = screen._words("Security", "bearer", "HTTP bearer token -> --bearer-env VAR")
    assert "--bearer-env" not in value and "nothing to set" in value
    label, value = screen._words("Agent", "protocol version", "0.3.0")
    assert label == "card's protocolVersion" and "in use is marked" in value
    other = CardScreen({}, embedded=False)
    assert "--bearer-env" in other._words("Security", "bearer", "HTTP bearer token -> --bearer-env VAR")[1]


# -- 11: scrolling keeps working after F4 and a redo ---------------------------------------------
async def test_11_the_transcript_scrolls_after_f4_and_redo(server):
    app = make_app(server)
    async with app.run_test(size=(100, 20)) as pilot:
        await turns(app, pilot, *[f"turn number {n}" for n in range(8)])
        screen = app.chat_screen
        await pilot.press("alt+up", "up", "enter")
        await settle(app, pilot)
        await pilot.press("ctrl+r")
        await settle(app, pilot)
        await pilot.press("f4")
        await settle(app, pilot)
        transcript = screen.transcript
        transcript.focus()
        await pilot.pause()
        before = frame_lines(transcript)
        await pilot.press("pageup", "pageup")
        await pilot.pause()
        # what the frame shows moved, not only the offset (the keys' scroll once left the lines on
        # screen and the scrollbar where they were until a resize repainted them)
        assert transcript.scroll_y < transcript.max_scroll_y and frame_lines(transcript) != before
        assert transcript.vertical_scrollbar.position == transcript.scroll_y


# -- the undo belongs to its session -------------------------------------------------------------
async def test_ctrl_z_never_undoes_another_sessions_rewind(server):
    app = make_app(server)
    async with app.run_test(size=SIZE) as pilot:
        await turns(app, pilot, "a one", "a two")
        first = app.chat.session_id
        screen = app.chat_screen
        await pilot.press("alt+up", "enter")
        await settle(app, pilot)
        assert screen.status.undo.startswith("ctrl+z:")
        await pilot.press("ctrl+n")
        await settle(app, pilot)
        await turns(app, pilot, "b one")
        assert screen.status.undo == ""
        await pilot.press("ctrl+z")
        await settle(app, pilot)
        assert user_texts_of(await server_tasks(server, first)) == ["a one"]
        assert await server_users(server, app) == ["b one"]
