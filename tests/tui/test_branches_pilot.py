"""Branches in the app, against the real embedded server: undo right after a rewind (ctrl+z), redo
(ctrl+r), rewound turns shown in place (F4) and brought back or forked by their buttons, the
turn picker (ctrl+g) by keyboard and by mouse, copy, export, and the sessions panel's forks,
rename and delete. The demo model's answers say what it sees (history, weather_calls)."""

from __future__ import annotations

import ast
from pathlib import Path

from kit.apps import make_app
from kit.offline import offline_app, offline_chat
from kit.pilot import (
    SIZE,
    header_offset,
    notifications,
    screen_lines,
    server_users,
    settle,
    three_turns,
    turns,
    user_texts,
    wait_until,
)
from rewindtui.tui.screens.confirm import ConfirmScreen
from rewindtui.tui.screens.rename import RenameScreen
from rewindtui.tui.screens.rewind_picker import RewindPicker
from rewindtui.tui.widgets.sessions_panel import SessionsPanel
from rewindtui.tui.widgets.transcript import Transcript


def seen(app) -> tuple[list[str], int]:
    """(the user texts the demo model saw, weather_calls) from the last answer."""
    answer = next(i.text for i in reversed(app.chat.conversation.items) if i.role == "agent" and i.text)
    history = ast.literal_eval(answer.split("history: ", 1)[1].rsplit("; weather_calls", 1)[0])
    return history, int(answer.rsplit("weather_calls=", 1)[1].rstrip(")"))


async def rewind_to(app, pilot, index_of_turn: int) -> None:
    """Rewind mode on a turn (the preview), then Enter: the confirmed rewind."""
    screen = app.chat_screen
    invocation = app.chat.conversation.turn_invocations()[index_of_turn]
    assert screen.enter_rewind_mode(app.chat.conversation.index_of_invocation(invocation))
    await pilot.press("enter")
    await settle(app, pilot)


def entry_texts(panel: SessionsPanel) -> dict[str, str]:
    """Each listed session's entry as shown (its lines' text)."""
    out = {}
    for session in panel.sessions:
        group = panel.get_option(session.id).prompt
        out[session.id] = "\n".join(getattr(r, "renderable", r).plain for r in group.renderables)
    return out


def current_users(app) -> list[str]:
    """The conversation's user messages (rewound ones shown in place left out)."""
    return [i.text for i in app.chat.conversation.items if i.rewound is None and i.role == "user"]


def rewound_users(app) -> list[str]:
    return [i.text for i in app.chat.conversation.items if i.rewound is not None and i.role == "user"]


# -- undo right after a rewind, and redo ----------------------------------------------------------
async def test_ctrl_z_right_after_a_rewind_undoes_it_on_the_server(server):
    app = make_app(server)
    async with app.run_test(size=SIZE) as pilot:
        await three_turns(app, pilot)
        await rewind_to(app, pilot, 1)
        assert user_texts(app) == ["first"]
        assert "Rewound 2 turns — ctrl+z undoes it." in notifications(app)
        await pilot.press("ctrl+z")
        await settle(app, pilot)
        assert user_texts(app) == ["first", "weather in Oslo", "third"]
        assert await server_users(server, app) == ["first", "weather in Oslo", "third"]
        assert "Undid the rewind: 2 turns back, with the agent's state as it was." in notifications(app)
        await turns(app, pilot, "after")
        assert seen(app) == (["first", "weather in Oslo", "third", "after"], 1)


async def test_ctrl_z_after_typing_still_undoes_the_rewind_and_keeps_the_typing(server):
    """Issue 20 (3): composer undo never hides a rewind undo; the status line names it."""
    app = make_app(server)
    async with app.run_test(size=SIZE) as pilot:
        await three_turns(app, pilot)
        await rewind_to(app, pilot, 2)
        screen = app.chat_screen
        assert screen.status.undo == "ctrl+z: undo the rewind of 1 turn"
        await pilot.press(*"abc")
        await pilot.press("ctrl+z")
        await settle(app, pilot)
        assert screen.composer.text == "abc"
        assert user_texts(app) == ["first", "weather in Oslo", "third"]
        assert await server_users(server, app) == ["first", "weather in Oslo", "third"]
        assert screen.status.undo == ""


async def test_nested_rewinds_undo_newest_first_and_ctrl_r_redoes_them_on_the_server(server):
    """Redo means redo (issue 33): ctrl+z undoes the rewinds newest first; ctrl+r applies the same
    rewinds again, on the server, in the reverse order; the status line names both keys' work."""
    app = make_app(server)
    async with app.run_test(size=SIZE) as pilot:
        await turns(app, pilot, "one", "weather in Lima", "three", "four")
        await rewind_to(app, pilot, 3)
        await rewind_to(app, pilot, 1)
        assert user_texts(app) == ["one"]
        screen = app.chat_screen
        await pilot.press("ctrl+z")
        await settle(app, pilot)
        assert user_texts(app) == ["one", "weather in Lima", "three"]
        assert screen.status.undo == "ctrl+z: undo the rewind of 1 turn"
        assert screen.status.redo == "ctrl+r: redo the rewind of 2 turns"
        await pilot.press("ctrl+z")
        await settle(app, pilot)
        assert await server_users(server, app) == ["one", "weather in Lima", "three", "four"]
        assert screen.status.redo == "ctrl+r: redo the rewind of 1 turn"
        await pilot.press("ctrl+r")
        await settle(app, pilot)
        assert user_texts(app) == ["one", "weather in Lima", "three"]
        assert await server_users(server, app) == ["one", "weather in Lima", "three"]
        assert "Redid the rewind: 1 turn rewound again — ctrl+z undoes it." in notifications(app)
        assert screen.status.redo == "ctrl+r: redo the rewind of 2 turns"
        await pilot.press("ctrl+r")
        await settle(app, pilot)
        assert await server_users(server, app) == ["one"]
        assert screen.status.redo == ""
        await pilot.press("ctrl+r")
        await settle(app, pilot)
        assert any("nothing to redo" in n.lower() for n in notifications(app))
        await turns(app, pilot, "five")
        assert seen(app) == (["one", "five"], 0)


async def test_a_restore_from_f4_is_undone_by_ctrl_z_and_redone_by_ctrl_r(server):
    """Issue 33: a restore of a rewound branch (F4, Enter on it) can be undone, and redone."""
    app = make_app(server)
    async with app.run_test(size=SIZE) as pilot:
        await three_turns(app, pilot)
        await rewind_to(app, pilot, 1)
        screen = app.chat_screen
        await pilot.press("f4")
        await settle(app, pilot)
        last = max(i for i, item in enumerate(app.chat.conversation.items) if item.rewound is not None)
        assert screen.enter_rewind_mode(last)
        await pilot.press("enter")  # Enter on a rewound turn restores its branch
        await settle(app, pilot)
        assert current_users(app) == ["first", "weather in Oslo", "third"]
        assert screen.status.undo == "ctrl+z: undo the restore of 2 turns"
        await pilot.press("ctrl+z")
        await settle(app, pilot)
        assert await server_users(server, app) == ["first"]
        assert any(
            n.startswith("Undid the restore: 2 turns went back to the rewound turns.") for n in notifications(app)
        )
        assert screen.status.redo == "ctrl+r: redo the restore of 2 turns"
        await pilot.press("ctrl+r")
        await settle(app, pilot)
        assert await server_users(server, app) == ["first", "weather in Oslo", "third"]


async def test_redo_on_a_server_without_it_is_disabled_with_the_reason_and_sends_nothing():
    chat = offline_chat()  # its client points at a closed port: anything sent would fail to connect
    app = offline_app(chat)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        await pilot.press("ctrl+r")
        await pilot.pause()
        (note,) = [n for n in app._notifications if n.title == "Redo unavailable"]
        assert note.message == "echo_agent does not support redo (its agent card does not advertise it)."
        assert not app.chat_screen.rewinding and app.chat_screen.ops.activity is None


# -- rewound turns in place ----------------------------------------------------------------------
async def test_rewound_turns_are_shown_dimmed_in_place_and_restored_by_their_button(server):
    app = make_app(server)
    async with app.run_test(size=SIZE) as pilot:
        await three_turns(app, pilot)
        await rewind_to(app, pilot, 1)
        await turns(app, pilot, "other")
        await pilot.press("f4")
        await settle(app, pilot)
        transcript = app.chat_screen.transcript
        assert rewound_users(app) == ["weather in Oslo", "third"]
        assert [i.text for i in app.chat.conversation.items if i.role == "user"] == [
            "first",
            "weather in Oslo",
            "third",
            "other",
        ]
        items = app.chat.conversation.items
        # the branch's last turn: the whole branch comes back
        index = next(n for n, i in enumerate(items) if i.rewound is not None and i.role == "user" and i.text == "third")
        x, y = header_offset(transcript, index, "⟲ Restore")
        assert any("⟲ rewound" in line and "not in the conversation" in line for line in screen_lines(transcript))
        await pilot.click(Transcript, offset=(x, y))
        await settle(app, pilot)
        assert current_users(app) == ["first", "weather in Oslo", "third"]
        assert await server_users(server, app) == ["first", "weather in Oslo", "third"]
        # still shown: now "other" is the rewound branch
        await wait_until(pilot, lambda: rewound_users(app) == ["other"])
        await pilot.press("f4")
        await pilot.pause()
        assert rewound_users(app) == [] and not app.chat.conversation.shows_rewound
        await turns(app, pilot, "probe")
        assert seen(app) == (["first", "weather in Oslo", "third", "probe"], 1)


async def test_a_rewound_branch_is_forked_by_its_button(server):
    app = make_app(server)
    async with app.run_test(size=SIZE) as pilot:
        await three_turns(app, pilot)
        original = app.chat.session_id
        await rewind_to(app, pilot, 1)
        await pilot.press("f4")
        await settle(app, pilot)
        items = app.chat.conversation.items
        index = next(n for n, i in enumerate(items) if i.rewound is not None and i.text == "weather in Oslo")
        x, y = header_offset(app.chat_screen.transcript, index, "fork branch")
        await pilot.click(Transcript, offset=(x, y))
        await settle(app, pilot)
        assert app.chat.session_id != original
        assert current_users(app) == ["first", "weather in Oslo"]
        assert await server_users(server, app) == ["first", "weather in Oslo"]


# -- the turn picker -----------------------------------------------------------------------------
async def test_picker_by_keyboard_rewinds_edits_and_forks(server):
    app = make_app(server)
    async with app.run_test(size=SIZE) as pilot:
        await three_turns(app, pilot)
        screen = app.chat_screen
        await pilot.press("ctrl+g")
        await pilot.pause()
        picker = app.screen
        assert isinstance(picker, RewindPicker)
        assert [e.preview for e in picker.entries] == ["third", "weather in Oslo", "first"]
        assert picker.entries[1].state_changed == ["weather_calls"]
        await pilot.press("down", "enter")  # "weather in Oslo": rewind mode shows what would go
        await pilot.pause()
        assert screen.rewind_mode and screen.transcript.selected().text == "weather in Oslo"
        assert user_texts(app) == ["first", "weather in Oslo", "third"]  # nothing sent yet
        await pilot.press("escape")
        await pilot.press("ctrl+g", "down", "down", "e")  # edit "first"
        await pilot.pause()
        assert screen.composer.text == "first" and app.chat.edit is not None
        await pilot.press("escape")
        await settle(app, pilot)  # the edit cancelled and its draft back before the picker opens
        assert user_texts(app) == ["first", "weather in Oslo", "third"]
        original = app.chat.session_id
        await pilot.press("ctrl+g", "f")  # fork from before "third"
        await settle(app, pilot)
        assert app.chat.session_id != original and user_texts(app) == ["first", "weather in Oslo"]


async def test_picker_by_mouse(server):
    app = make_app(server)
    async with app.run_test(size=SIZE) as pilot:
        await turns(app, pilot, "one", "two")
        await pilot.press("ctrl+g")
        await pilot.pause()
        picker = app.screen
        assert isinstance(picker, RewindPicker)
        await pilot.click("#picker-list", offset=(10, 2))  # the second entry ("one"): highlight + choose
        await pilot.pause()
        screen = app.chat_screen
        assert screen.rewind_mode and screen.transcript.selected().text == "one"
        await pilot.click("#banner")  # nothing sent by a stray click
        await pilot.press("escape")
        await pilot.press("ctrl+g")
        await pilot.pause()
        await pilot.click("#picker-close")
        await pilot.pause()
        assert not isinstance(app.screen, RewindPicker)
        assert user_texts(app) == ["one", "two"]


# -- copy and export -----------------------------------------------------------------------------
async def test_copy_the_selected_turn_and_export_the_transcript(server, tmp_path: Path):
    app = make_app(server)
    async with app.run_test(size=SIZE) as pilot:
        await turns(app, pilot, "one", "two")
        screen = app.chat_screen
        screen.exports.files_dir = tmp_path
        screen.exports.export_dir = tmp_path
        await pilot.press("alt+up")  # rewind mode on the last turn
        await pilot.press("alt+c")
        await pilot.pause()
        assert screen.rewind_mode  # alt+c is a command here, not typing
        assert app.clipboard.startswith("### You\n\ntwo\n")
        assert (tmp_path / "clipboard.txt").read_text() == app.clipboard
        assert any(str(tmp_path / "clipboard.txt") in n for n in notifications(app))
        await pilot.press("escape")
        screen.exports.copy()  # the palette's "Copy message": the last reply
        assert app.clipboard.startswith("You said: two")
        for fmt in ("md", "json"):  # asks where (the suggested name, selected), Enter accepts
            screen.exports.export(fmt)
            await pilot.pause()
            await pilot.press("enter")
            await settle(app, pilot)
        (md,) = tmp_path.glob("*.md")
        (js,) = tmp_path.glob("*.json")
        assert "### You\n\ntwo" in md.read_text() and '"text": "two"' in js.read_text()


# -- the sessions panel --------------------------------------------------------------------------
async def test_sessions_panel_forks_rename_and_delete(server):
    app = make_app(server)
    async with app.run_test(size=SIZE) as pilot:
        await turns(app, pilot, "panel one", "panel two")
        original = app.chat.session_id
        invocation = app.chat.conversation.turn_invocations()[1]
        screen = app.chat_screen
        screen.handle_action("fork", app.chat.conversation.items[app.chat.conversation.index_of_invocation(invocation)])
        await settle(app, pilot)
        fork = app.chat.session_id
        await pilot.press("f2")
        await settle(app, pilot)
        panel = screen.query_one(SessionsPanel)
        labels = entry_texts(panel)
        assert "↳ fork of panel one @ turn 2" in labels[fork]
        # rename the original: the fork's line follows
        panel.highlighted = next(n for n, s in enumerate(panel.sessions) if s.id == original)
        await pilot.press("r")
        await pilot.pause()
        assert isinstance(app.screen, RenameScreen)
        await pilot.press("ctrl+u", *"Renamed", "enter")
        await settle(app, pilot)
        labels = entry_texts(panel)
        assert labels[original].startswith("Renamed")
        assert "↳ fork of Renamed @ turn 2" in labels[fork]
        # delete it (after a question): the fork says its original is gone
        panel.highlighted = next(n for n, s in enumerate(panel.sessions) if s.id == original)
        await pilot.press("d")
        await pilot.pause()
        assert isinstance(app.screen, ConfirmScreen)
        await pilot.press("y")
        await settle(app, pilot)
        assert original not in [s.id for s in panel.sessions]
        assert "↳ fork of a deleted session @ turn 2" in entry_texts(panel)[fork]
        # the open session cannot be deleted from under the view
        panel.highlighted = next(n for n, s in enumerate(panel.sessions) if s.id == fork)
        await pilot.press("d")
        await pilot.pause()
        assert not isinstance(app.screen, ConfirmScreen)
        assert any("open session" in n for n in notifications(app))


async def test_f4_on_a_session_without_rewound_turns_says_so_and_the_next_f4_looks_again(server):
    app = make_app(server)
    async with app.run_test(size=SIZE) as pilot:
        await three_turns(app, pilot)
        await pilot.press("f4")
        await wait_until(pilot, lambda: "This session has no rewound turns." in notifications(app))
        await settle(app, pilot)
        assert not app.chat_screen.branches.showing  # not a toggle left on with nothing shown
        await rewind_to(app, pilot, 2)
        await pilot.press("f4")  # looks again (it does not "hide" what was never shown)
        await settle(app, pilot)
        assert rewound_users(app) == ["third"]
        assert "Rewound turns hidden." not in notifications(app)


async def test_restore_on_an_earlier_turn_of_a_branch_brings_it_back_only_up_to_there(server):
    app = make_app(server)
    async with app.run_test(size=SIZE) as pilot:
        await three_turns(app, pilot)
        await rewind_to(app, pilot, 1)  # "weather in Oslo" and "third" go
        await pilot.press("f4")
        await settle(app, pilot)
        assert rewound_users(app) == ["weather in Oslo", "third"]
        items = app.chat.conversation.items
        index = next(n for n, i in enumerate(items) if i.rewound is not None and i.text == "weather in Oslo")
        x, y = header_offset(app.chat_screen.transcript, index, "⟲ Restore")
        await pilot.click(Transcript, offset=(x, y))
        await settle(app, pilot)
        await wait_until(pilot, lambda: current_users(app) == ["first", "weather in Oslo"])
        assert await server_users(server, app) == ["first", "weather in Oslo"]
        await wait_until(pilot, lambda: rewound_users(app) == ["third"])  # kept, not lost
        await pilot.press("f4")
        await settle(app, pilot)
        await turns(app, pilot, "probe")
        assert seen(app) == (["first", "weather in Oslo", "probe"], 1)  # the tool's state came back
