"""Habits people bring from Claude Code and Codex (issue 33): ctrl+c clears a draft, stops a reply,
and quits on a second press on an empty composer; ctrl+d on an empty composer quits; /exit and
/quit quit; /clear starts a new session and keeps the old one; ctrl+q and ctrl+c are in the footer."""

from __future__ import annotations

import pytest

from kit.apps import make_app
from kit.offline import offline_app
from kit.pilot import SIZE, ManualClock, notifications, send, settle, wait_until
from rewindtui.tui.app import RewindApp

LONG = " ".join(["and tell it at length"] * 8)  # the demo model echoes it slowly: seconds of streaming


async def start_reply(app: RewindApp, pilot, text: str) -> None:
    """Send ``text`` and return while its reply is streaming in."""
    app.chat_screen.composer.text = f"{text} {LONG}"
    await pilot.press("enter")
    await wait_until(pilot, lambda: any(it.streaming for it in app.chat.conversation.items))
    await wait_until(pilot, lambda: app.chat_screen.turn_bar.kind == "replying")


def hold_interrupt_clock(app: RewindApp) -> ManualClock:
    clock = ManualClock()
    app.chat_screen.interrupt.clock = clock
    return clock


def record_exit(app: RewindApp) -> list[int]:
    """Replace ``app.exit`` with a recorder: the test sees the quit and the app keeps running."""
    exits: list[int] = []
    app.exit = lambda result=None, return_code=0, message=None: exits.append(
        result if result is not None else return_code
    )  # type: ignore[method-assign]
    return exits


async def test_ctrl_c_clears_a_draft_and_ctrl_z_brings_it_back():
    app = offline_app()
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        exits = record_exit(app)
        composer = app.chat_screen.composer
        await pilot.press(*"half a thought")
        await pilot.press("ctrl+c")
        await pilot.pause()
        assert composer.text == ""
        assert "Draft cleared; ctrl+z brings it back." in notifications(app)
        assert not exits
        await pilot.press("ctrl+z")
        await pilot.pause()
        assert composer.text == "half a thought"


async def test_ctrl_c_twice_on_an_empty_composer_quits_within_the_window_only():
    app = offline_app()
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        exits = record_exit(app)
        clock = hold_interrupt_clock(app)
        screen = app.chat_screen
        await pilot.press("ctrl+c")
        await pilot.pause()
        assert not exits
        assert screen.banner.kind == "hint" and "ctrl+c again to quit" in screen.banner.text
        clock.advance(screen.interrupt.window + 0.5)  # too late: this press asks again
        await pilot.press("ctrl+c")
        await pilot.pause()
        assert not exits
        clock.advance(1.0)
        await pilot.press("ctrl+c")
        await wait_until(pilot, lambda: bool(exits))
        assert exits == [0]


async def test_ctrl_c_after_clearing_asks_before_it_quits():
    """A draft cleared by ctrl+c is not the first half of a quit: two presses on a draft clear it and arm."""
    app = offline_app()
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        exits = record_exit(app)
        hold_interrupt_clock(app)
        await pilot.press(*"abc")
        await pilot.press("ctrl+c", "ctrl+c")
        await pilot.pause()
        assert not exits and app.chat_screen.banner.kind == "hint"


@pytest.mark.slow  # streams a paced reply or restarts the app: seconds
async def test_ctrl_c_during_a_reply_stops_it_and_keeps_what_came_and_the_draft(slow_server):
    app = make_app(slow_server)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        exits = record_exit(app)
        await start_reply(app, pilot, "a long story")
        await pilot.press(*"next question")
        await pilot.press("ctrl+c")
        await settle(app, pilot)
        conv = app.chat.conversation
        assert conv.turn_state == "canceled"
        assert conv.items[-1].text.startswith("You said: a long story")
        assert app.chat_screen.composer.text == "next question"
        assert not exits


async def test_ctrl_c_leaves_a_rewind_preview():
    app = offline_app()
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        exits = record_exit(app)
        await pilot.press("alt+up")
        await pilot.pause()
        assert app.chat_screen.rewind_mode
        await pilot.press("ctrl+c")
        await pilot.pause()
        assert not app.chat_screen.rewind_mode and not exits


async def test_ctrl_d_quits_on_an_empty_composer_and_deletes_otherwise():
    app = offline_app()
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        exits = record_exit(app)
        composer = app.chat_screen.composer
        await pilot.press(*"abc", "home", "ctrl+d")
        await pilot.pause()
        assert composer.text == "bc" and not exits
        composer.text = ""
        await pilot.press("ctrl+d")
        await wait_until(pilot, lambda: bool(exits))


async def test_slash_exit_and_quit_quit():
    for word in ("/exit", "/quit"):
        app = offline_app()
        async with app.run_test(size=SIZE) as pilot:
            await pilot.pause()
            exits = record_exit(app)
            app.chat_screen.composer.text = word
            await pilot.press("enter")
            await wait_until(pilot, lambda exits=exits: bool(exits))
            assert app.chat_screen.composer.text == ""


async def test_ctrl_q_and_ctrl_c_are_in_the_footer():
    app = offline_app()
    async with app.run_test(size=(160, 40)) as pilot:
        await pilot.pause()
        shown = {b.key for (_, b, enabled, _) in app.screen.active_bindings.values() if b.show and enabled}
        assert {"ctrl+q", "ctrl+c"} <= shown


async def test_slash_clear_starts_a_new_session_and_keeps_the_old(server):
    app = make_app(server)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        await send(app, pilot, "remember this")
        old = app.chat.session_id
        await send(app, pilot, "/clear")
        assert app.chat.session_id != old and not app.chat.conversation.items
        assert any("is kept (F2 lists it)" in n for n in notifications(app))
        sessions = await app.chat.client.list_sessions()
        assert old in {s.id for s in sessions}


# -- queued messages --------------------------------------------------------------------------------


@pytest.mark.slow  # streams a paced reply or restarts the app: seconds
async def test_enter_during_a_reply_queues_and_the_queue_is_sent_in_order(slow_server):
    app = make_app(slow_server)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        screen = app.chat_screen
        await start_reply(app, pilot, "first")
        for text in ("second", "third"):
            screen.composer.text = text
            await pilot.press("enter")
            await pilot.pause()
        assert screen.queue.texts == ["second", "third"]
        assert screen.composer.text == ""
        bar = screen.query_one("#queued")
        assert "⏳ 1. second" in str(bar.render()) and "⏳ 2. third" in str(bar.render())
        assert "take back the last queued message" in screen.status.undo
        await wait_until(pilot, lambda: len([t for r, t in texts_of(app) if r == "user"]) == 3, timeout=60)
        await settle(app, pilot)
        assert [t.split(" and tell")[0] for r, t in texts_of(app) if r == "user"] == ["first", "second", "third"]
        assert not screen.queue and not bar.has_class("-shown")


@pytest.mark.slow  # streams a paced reply or restarts the app: seconds
async def test_ctrl_z_and_up_take_a_queued_message_back(slow_server):
    app = make_app(slow_server)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        screen = app.chat_screen
        await start_reply(app, pilot, "first")
        for text in ("second", "third"):
            screen.composer.text = text
            await pilot.press("enter")
        await pilot.pause()
        await pilot.press("ctrl+z")
        await pilot.pause()
        assert screen.composer.text == "third" and screen.queue.texts == ["second"]
        screen.composer.text = ""
        await pilot.press("up")
        await pilot.pause()
        assert screen.composer.text == "second" and not screen.queue
        await pilot.press("ctrl+c")  # the reply: stopped; the taken-back text stays
        await settle(app, pilot)
        assert screen.composer.text == "second"
        assert [t.split(" and tell")[0] for r, t in texts_of(app) if r == "user"] == ["first"]


@pytest.mark.slow  # streams a paced reply or restarts the app: seconds
async def test_a_stopped_turn_asks_whether_to_send_the_queue(slow_server):
    from rewindtui.tui.screens.confirm import ConfirmScreen

    app = make_app(slow_server)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        screen = app.chat_screen
        await start_reply(app, pilot, "first")
        screen.composer.text = "queued one"
        await pilot.press("enter")
        await pilot.pause()
        await pilot.press("escape")
        await wait_until(pilot, lambda: isinstance(app.screen, ConfirmScreen))
        assert "1 queued message wait" in app.screen.title_text
        await answer(app, pilot, False)  # back to the composer
        await settle(app, pilot)
        assert screen.composer.text == "queued one" and not screen.queue
        # again, and this time send it
        screen.composer.text = ""
        await start_reply(app, pilot, "again")
        screen.composer.text = "queued two"
        await pilot.press("enter")
        await pilot.pause()
        await pilot.press("escape")
        await wait_until(pilot, lambda: isinstance(app.screen, ConfirmScreen))
        await answer(app, pilot, True)
        await wait_until(pilot, lambda: any(t == "queued two" for r, t in texts_of(app) if r == "user"), timeout=60)
        await settle(app, pilot)


@pytest.mark.slow  # streams a paced reply or restarts the app: seconds
async def test_the_queue_survives_a_restart(slow_server, tmp_path):
    from rewindtui.tui.screens.confirm import ConfirmScreen

    app = make_app(slow_server, data_dir=tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        await start_reply(app, pilot, "first")
        app.chat_screen.composer.text = "after the restart"
        await pilot.press("enter")
        await pilot.pause()
        session = app.chat.session_id
        app.chat_screen.turns.stop_reply()
        await wait_until(pilot, lambda: isinstance(app.screen, ConfirmScreen))
        await settle(app, pilot)
        assert "1 queued message wait" in app.screen.title_text  # not answered: the app quits
    again = make_app(slow_server, session_id=session, data_dir=tmp_path)
    async with again.run_test(size=SIZE) as pilot:
        await wait_until(pilot, lambda: isinstance(again.screen, ConfirmScreen), timeout=30)
        assert "from before the app closed" in again.screen.title_text
        await answer(again, pilot, True)
        await wait_until(
            pilot, lambda: any(t == "after the restart" for r, t in texts_of(again) if r == "user"), timeout=60
        )
        await settle(again, pilot)
        assert not again.chat_screen.queue


async def answer(app: RewindApp, pilot, go: bool) -> None:
    """Press a button of the confirm screen on top, once it is drawn."""
    asking = app.screen
    await wait_until(pilot, lambda: bool(asking.query("#confirm-go")))
    await pilot.pause()
    await pilot.press("y" if go else "n")
    await wait_until(pilot, lambda: app.screen is not asking)


def texts_of(app: RewindApp) -> list[tuple[str, str]]:
    from kit.pilot import texts

    return texts(app) if app.chat is not None else []


async def test_enter_reads_restore_on_a_rewound_turn_and_rewind_elsewhere(server):
    from tui.test_f4_keys import rewound_shown

    app = make_app(server)
    async with app.run_test(size=(160, 40)) as pilot:
        await rewound_shown(app, pilot)
        screen = app.chat_screen
        await pilot.press("alt+up")  # the last current turn
        await pilot.pause()
        assert screen.transcript.selected().rewound is None
        assert screen.active_bindings["enter"].binding.description == "Rewind"
        await pilot.press("alt+down")  # the rewound turn after it
        await pilot.pause()
        assert screen.transcript.selected().rewound is not None
        assert screen.active_bindings["enter"].binding.description == "Restore"
        shown = {b.description for (_, b, enabled, _) in screen.active_bindings.values() if b.show and enabled}
        assert "Edit" not in shown  # edit does nothing on a rewound turn: not offered


async def test_a_server_that_cannot_restore_shows_no_restore_on_a_rewound_turn():
    from tui.test_branches_snapshots import chat_with_a_rewound_turn

    app = offline_app(chat_with_a_rewound_turn())  # its server keeps no list of rewound turns
    async with app.run_test(size=(160, 40)) as pilot:
        await pilot.pause()
        await pilot.press("alt+up", "alt+down")
        await pilot.pause()
        screen = app.chat_screen
        assert screen.transcript.selected().rewound is not None
        shown = {b.description for (_, b, enabled, _) in screen.active_bindings.values() if b.show and enabled}
        assert "Restore" not in shown and "Rewind" not in shown


def test_unknown_commands_suggest_what_people_meant():
    from rewindtui.tui import interaction

    assert interaction.slash_suggestions("reset")[0] == "/new"
    assert interaction.slash_suggestions("exti")[0] == "/exit"
    assert interaction.slash_suggestions("clera") == ["/clear"]
    assert interaction.SLASH["exit"].id == "app.quit"


async def test_the_edit_banner_says_it_for_one_turn_and_them_for_several():
    app = offline_app()
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        chat = app.chat
        last = chat.conversation.turn_invocations()[-1]
        item = next(it for it in chat.conversation.items if it.invocation_id == last and it.role == "user")
        app.chat_screen.handle_action("edit", item)
        await pilot.pause()
        assert "set aside; sending replaces it." in app.chat_screen.banner.text


async def test_the_rename_box_selects_the_old_name_so_typing_replaces_it():
    from rewindtui.tui.screens.rename import RenameScreen

    app = offline_app()
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        names: list[str | None] = []
        app.push_screen(RenameScreen("old name"), names.append)
        await pilot.pause()
        await pilot.press(*"new", "enter")
        await wait_until(pilot, lambda: bool(names))
        assert names == ["new"]


def test_the_status_line_keeps_the_session_name_at_any_width():
    from rewindtui.tui.widgets.status_line import Status, status_text

    status = Status(
        server="127.0.0.1:43125",
        agent="demo",
        dialect="1.0",
        session="1a2b3c4d-5e6f-7a8b-9c0d-112233445566",
        session_name="weather questions for the trip",
        turn="completed",
        rewind="a2a",
    )
    for width in (80, 60, 50):
        text = status_text(status, width).plain
        assert len(text) <= width and "weather" in text and "1a2b3c4d" in text, text
