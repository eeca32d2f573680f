"""The live view (``rewindtui.tui.live_view``): the idle app follows another client's turn, rewind
and redo on its session without a key and says what changed; it does not move while a rewind point
is being chosen, and applies the change once the user leaves; its checks back off; and it notices
that its embedded server died, says so, starts it again, reconnects and keeps the draft. The real
app on the embedded server over loopback; the other client a ``Chat`` of its own (as the CLI is)."""

from __future__ import annotations

import asyncio
import os
import signal

import pytest

from kit.apps import connector_for, new_app
from kit.pilot import SIZE, ManualClock, notifications, send, server_users, settle, texts, turns, user_texts, wait_until
from kit.servers import chat_for, settings_in
from rewindtui.config.connection import AppConnector
from rewindtui.tui.live_view import FIRST, LONGEST, RESTARTS

pytestmark = pytest.mark.slow  # real turns on the embedded server, a real timer: seconds


def live_app(server, session_id: str | None = None):
    return new_app(connector_for(server.agent_url, server.api_url), session_id=session_id, live=True)


async def test_another_clients_rewind_turn_and_redo_are_followed_without_a_key(server):
    app = live_app(server)
    async with app.run_test(size=SIZE) as pilot:
        await turns(app, pilot, "one", "two", "three")
        other = await chat_for(server, app.chat.session_id)
        try:
            await other.rewind(other.conversation.turn_invocations()[1])  # before "two"
            said = "Another client rewound this session: 2 turns went."
            await wait_until(pilot, lambda: said in notifications(app), timeout=20)  # the real timer, no key
            assert user_texts(app) == ["one"] == await server_users(server, app)

            await other.redo()
            said = "Another client brought rewound turns back (redo): 2 turns came."
            await wait_until(pilot, lambda: said in app.live.said, timeout=20)
            assert user_texts(app) == ["one", "two", "three"]

            await other.send("four")
            said = "Another client sent a turn in this session: 1 turn came."
            await wait_until(pilot, lambda: said in app.live.said, timeout=20)
            await settle(app, pilot)
            assert user_texts(app) == ["one", "two", "three", "four"] == await server_users(server, app)
        finally:
            await other.client.aclose()


async def test_another_clients_running_turn_is_followed_to_its_end(slow_server):
    app = live_app(slow_server)
    async with app.run_test(size=SIZE) as pilot:
        await turns(app, pilot, "one")
        other = await chat_for(slow_server, app.chat.session_id)
        try:
            sending = asyncio.create_task(other.send("tell me a long story"))  # streams for seconds
            await wait_until(
                pilot, lambda: any(it.role != "user" and it.text for it in other.conversation.items[2:]), timeout=60
            )
            app.live.due = app.live.clock()  # the reply is streaming: the next tick checks (not after a back-off)
            # "(still running)" when the check lands mid-reply, as it does unless the machine is slow
            await wait_until(pilot, lambda: any("1 turn came" in n for n in notifications(app)), timeout=60)
            await sending
            await wait_until(
                pilot,
                lambda: app.chat.conversation.turn_state in ("completed", "idle") and not app.chat.sending,
                timeout=30,
            )
            await settle(app, pilot)
        finally:
            await other.client.aclose()
        assert user_texts(app) == ["one", "tell me a long story"] == await server_users(slow_server, app)
        assert texts(app)[-1] == texts_of(other)[-1]  # the whole reply, as the other client has it


def texts_of(chat) -> list[tuple[str, str]]:
    return [(it.role, it.text) for it in chat.conversation.items if it.text and it.kind.name == "MESSAGE"]


async def test_a_question_answered_by_another_client_is_followed(server):
    app = live_app(server)
    async with app.run_test(size=SIZE) as pilot:
        await turns(app, pilot, "please delete live.txt")
        screen = app.chat_screen
        assert screen.turn_bar.kind == "question"
        other = await chat_for(server, app.chat.session_id)
        try:
            await other.confirm(True)  # as `rewindtui send --approve`
        finally:
            await other.client.aclose()
        await wait_until(pilot, lambda: "Another client answered the question." in notifications(app), timeout=20)
        await settle(app, pilot)
        assert screen.turn_bar.kind == "" and app.chat.conversation.pending_confirmation() is None
        assert "'status': 'deleted'" in texts(app)[-1][1]


async def _check_now(app, pilot) -> None:
    """Make a check due and let one tick run it (the timer's own ticks are stopped)."""
    app.live.due = app.live.clock()
    app.live.tick()
    await settle(app, pilot)


async def test_the_view_does_not_move_while_a_rewind_point_is_chosen(server):
    app = live_app(server)
    async with app.run_test(size=SIZE) as pilot:
        await turns(app, pilot, "one", "two")
        app.live.stop()  # the test ticks by hand
        screen = app.chat_screen
        await pilot.press("alt+up")  # choosing a rewind point: the preview
        await settle(app, pilot)
        assert screen.rewind_mode
        other = await chat_for(server, app.chat.session_id)
        try:
            await other.send("three")
        finally:
            await other.client.aclose()
        checks = app.live._watch.checks if app.live._watch else 0
        await _check_now(app, pilot)
        assert screen.rewind_mode and user_texts(app) == ["one", "two"]  # nothing moved under the user
        assert (app.live._watch.checks if app.live._watch else 0) == checks  # not even asked
        await pilot.press("escape")  # leaves the preview
        await settle(app, pilot)
        assert not screen.rewind_mode
        app.live.tick()  # back to idle: a check is due soon
        await _check_now(app, pilot)
        assert user_texts(app) == ["one", "two", "three"]
        assert "Another client sent a turn in this session: 1 turn came." in app.live.said


async def test_checks_back_off_and_typing_resets_them(server):
    app = live_app(server)
    async with app.run_test(size=SIZE) as pilot:
        await turns(app, pilot, "one")
        live = app.live
        live.stop()
        clock = ManualClock()
        live.clock = clock
        live.wait, live.due = FIRST, clock.now
        waits = []
        for _ in range(6):
            clock.now = live.due
            live.tick()
            await settle(app, pilot)
            waits.append(live.wait)
        assert waits == [4.0, 8.0, LONGEST, LONGEST, LONGEST, LONGEST]  # bounded
        assert live._watch is not None and live._watch.checks == 6
        clock.advance(1)
        live.tick()  # not due: no request
        assert live._watch.checks == 6 and not live.checking
        app.chat_screen.composer.text = "typing"
        live.tick()  # the user is active: checks come soon again
        assert live.wait == FIRST and live.due <= clock.now + FIRST


async def test_a_killed_embedded_server_is_restarted_and_the_draft_kept(tmp_path):
    connector = AppConnector(settings_in(tmp_path))
    app = new_app(connector, hint=connector.hint, new_session=True, live=True)
    async with app.run_test(size=SIZE) as pilot:
        await turns(app, pilot, "before the crash")
        session_id = app.chat.session_id
        screen = app.chat_screen
        screen.composer.text = "a draft half typed"
        first = connector.connection.server
        os.kill(first.pid, signal.SIGKILL)  # the child dies, as under the OOM killer
        await wait_until(
            pilot,
            lambda: any("The embedded server stopped (killed by signal 9)" in n for n in notifications(app)),
            timeout=20,
        )
        restarted = "The embedded server was restarted and the app is connected again."
        await wait_until(pilot, lambda: restarted in app.live.said, timeout=60)
        await settle(app, pilot)
        second = connector.connection.server
        assert second is not first and second.running and second.pid != first.pid
        assert app.chat.session_id == session_id and user_texts(app) == ["before the crash"]
        assert screen.composer.text == "a draft half typed"  # untouched
        await send(app, pilot, "after the restart")
        assert user_texts(app) == ["before the crash", "after the restart"]
        assert screen.status.turn == "completed"


async def test_a_server_that_keeps_dying_is_not_restarted_forever(tmp_path):
    connector = AppConnector(settings_in(tmp_path))
    app = new_app(connector, hint=connector.hint, new_session=True, live=True)
    async with app.run_test(size=SIZE) as pilot:
        await turns(app, pilot, "one")
        live = app.live
        live._restarts = [live.clock()] * RESTARTS  # it was restarted that often just now
        app.chat_screen.composer.text = "kept"
        first = connector.connection.server
        os.kill(first.pid, signal.SIGKILL)
        await wait_until(pilot, lambda: any("not restarted again" in s for s in live.said), timeout=20)
        await settle(app, pilot)
        assert connector.connection.server is first and not first.running  # no new server started
        assert not any("restarted and the app is connected" in s for s in live.said)
        assert sum("stopped" in s for s in live.said) == 1  # said once, not on every tick
        live.tick()
        assert sum("stopped" in s for s in live.said) == 1
        assert app.chat_screen.composer.text == "kept"
        worker = app.reconnect()  # the palette's Reconnect, by hand
        assert worker is not None
        await worker.wait()
        await settle(app, pilot)
        assert connector.connection.server.running and user_texts(app) == ["one"]
        assert app.chat_screen.composer.text == "kept"


async def test_a_cleared_kept_draft_does_not_come_back_when_the_view_follows(server, tmp_path):
    first = new_app(connector_for(server.agent_url, server.api_url), data_dir=tmp_path)
    async with first.run_test(size=SIZE) as pilot:
        await turns(first, pilot, "one")
        session_id = first.chat.session_id
        first.chat_screen.composer.text = "kept for later"
        assert first.chat_screen.memory.keep_draft()  # as ctrl+q keeps it
    app = new_app(connector_for(server.agent_url, server.api_url), session_id=session_id, data_dir=tmp_path, live=True)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        screen = app.chat_screen
        assert screen.composer.text == "kept for later"  # back at start
        screen.composer.text = ""  # the user clears it
        other = await chat_for(server, session_id)
        try:
            await other.send("two")
        finally:
            await other.client.aclose()
        await wait_until(
            pilot, lambda: "Another client sent a turn in this session: 1 turn came." in notifications(app), timeout=20
        )
        await settle(app, pilot)
        assert user_texts(app) == ["one", "two"]
        assert screen.composer.text == ""  # the cleared draft stays cleared


async def test_no_check_while_a_turn_is_edited_or_a_turn_of_ours_runs(slow_server):
    app = live_app(slow_server)
    async with app.run_test(size=SIZE) as pilot:
        await turns(app, pilot, "one", "two")
        app.live.stop()  # the test ticks by hand
        screen = app.chat_screen
        await pilot.press("alt+up", "alt+e")  # edit the last turn: the composer holds its text
        await settle(app, pilot)
        assert app.chat.edit is not None
        before = app.live._watch.checks if app.live._watch else 0
        app.live.due = app.live.clock()
        app.live.tick()
        assert not app.live.checking and (app.live._watch.checks if app.live._watch else 0) == before
        await pilot.press("escape")  # the edit is cancelled
        await settle(app, pilot)
        assert app.chat.edit is None
        screen.composer.text = "three"
        await pilot.press("enter")  # a turn of ours, streaming for a while
        await wait_until(pilot, lambda: screen.replying)
        app.live.due = app.live.clock()
        app.live.tick()
        assert not app.live.checking  # not during our own turn
        await settle(app, pilot)
        await _check_now(app, pilot)
        assert app.live._watch is not None and app.live._watch.checks == before + 1  # idle again: it asks
        assert not any(n.startswith("Another client") for n in notifications(app))  # our turn is ours
