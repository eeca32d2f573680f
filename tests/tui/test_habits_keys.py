"""Habits people bring from Claude Code and Codex (issue 33): ctrl+c clears a draft, stops a reply,
and quits on a second press on an empty composer; ctrl+d on an empty composer quits; /exit and
/quit quit; /clear starts a new session and keeps the old one; ctrl+q and ctrl+c are in the footer."""

from __future__ import annotations

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
    app.exit = lambda result=None, return_code=0, message=None: exits.append(result if result is not None else return_code)  # type: ignore[method-assign]
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
            await wait_until(pilot, lambda: bool(exits))
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
