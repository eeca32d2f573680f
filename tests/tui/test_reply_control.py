"""Replies in flight: Esc stops one, ctrl+q and a session switch ask first, a switch during a
rewind waits for it, the status says what is true, and a dead server is restarted from the app."""

from __future__ import annotations

import asyncio

from captures import load
from fakeserver import FakeServer, Reply
from kit.apps import connector_for, make_app
from kit.fakes import rewind_gate
from kit.pilot import SIZE, notifications, send, server_tasks, settle, turns, user_texts, user_texts_of, wait_until
from rewindtui.client.a2a_client import A2AClient, ServerConfig
from rewindtui.model import ItemKind
from rewindtui.server import EmbeddedServer
from rewindtui.tui.app import RewindApp
from rewindtui.tui.screens.confirm import ConfirmScreen

LONG = " ".join(["and tell it at length"] * 8)  # the demo model echoes it slowly: seconds of streaming


async def start_reply(app: RewindApp, pilot, text: str) -> None:
    """Send ``text`` and return while its reply is streaming in (the turn bar laid out)."""
    app.chat_screen.composer.text = f"{text} {LONG}"
    await pilot.press("enter")
    await wait_until(pilot, lambda: any(it.streaming for it in app.chat.conversation.items))
    await wait_until(pilot, lambda: app.chat_screen.turn_bar.kind == "replying")
    await pilot.pause()


async def test_escape_stops_a_streaming_reply_on_the_server(slow_server):
    app = make_app(slow_server)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        await start_reply(app, pilot, "tell me a long story about rewinding")
        screen = app.chat_screen
        assert screen.replying and screen.status.turn == "working"
        assert screen.turn_bar.kind == "replying"  # the visible control
        await pilot.press("escape")
        await settle(app, pilot)
        conv = app.chat.conversation
        # the server was asked (CancelTask) and ended the turn: the view is what it holds
        (task,) = await server_tasks(slow_server, app.chat.session_id)
        assert task["status"]["state"] == "canceled"
        assert conv.turn_state == "canceled" and screen.status.turn == "canceled"
        assert not any(it.streaming for it in conv.items)
        # issue 20 (4): what came stays, under its author, marked stopped
        assert conv.items[-1].text.startswith("You said: tell") and conv.items[-1].author == "demo"
        assert getattr(conv.items[-1], "stopped", False)
        assert "Stopped: the turn is canceled; what came before the stop stays, marked stopped." in notifications(app)
        assert not app.chat.sending and not screen.replying and screen.turn_bar.kind == ""
        assert not screen.rewind_mode  # a stop is not the first half of an Esc Esc
        await pilot.press("escape")
        await pilot.pause()
        assert not screen.rewind_mode and screen.banner.kind == "hint"


async def test_the_stop_button_and_the_palette_stop_a_reply(slow_server):
    app = make_app(slow_server)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        screen = app.chat_screen
        await start_reply(app, pilot, "a long answer, please")
        await pilot.click("#turn-stop")
        await settle(app, pilot)
        assert app.chat.conversation.turn_state == "canceled"
        await start_reply(app, pilot, "and another long one")
        screen.action_stop_reply()  # what the palette's "Stop the reply" runs
        assert screen.status.turn == "stopping…" and screen.turn_bar.kind == "stopping"
        await settle(app, pilot)
        assert app.chat.conversation.turn_state == "canceled"
        tasks = await server_tasks(slow_server, app.chat.session_id)
        assert [t["status"]["state"] for t in tasks] == ["canceled", "canceled"]
        screen.action_stop_reply()  # nothing to stop: it says so
        await pilot.pause()
        assert notifications(app)[-1] == "No reply is streaming in."


async def test_ctrl_q_during_a_reply_asks_first(slow_server):
    app = make_app(slow_server)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        await start_reply(app, pilot, "a question with a long answer")
        await pilot.press("ctrl+q")
        await pilot.pause()
        assert isinstance(app.screen, ConfirmScreen) and app.screen.purpose == "quit"
        await pilot.press("escape")  # stay: the reply carries on to its end
        await settle(app, pilot)
        assert app.return_value is None and app.chat.conversation.turn_state == "completed"
        await start_reply(app, pilot, "another one")
        await pilot.press("ctrl+q")
        await pilot.pause()
        await pilot.press("ctrl+q")  # ctrl+q again: quit
        await pilot.pause()
    assert app.return_value == 0


async def test_ctrl_q_when_idle_quits_at_once(server):
    app = make_app(server)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        await pilot.press("ctrl+q")
        await pilot.pause()
    assert app.return_value == 0


async def test_new_session_during_a_reply_asks_and_never_drops_it_unseen(slow_server):
    app = make_app(slow_server)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        await start_reply(app, pilot, "first question")
        original = app.chat.session_id  # sessions are created by their first message
        assert original is not None
        await pilot.press("ctrl+n")
        await pilot.pause()
        assert isinstance(app.screen, ConfirmScreen) and app.screen.purpose == "switch"
        await pilot.press("escape")  # stay
        await settle(app, pilot)
        assert app.chat.session_id == original and app.chat.conversation.turn_state == "completed"
        assert user_texts(app) == [f"first question {LONG}"]
        # asked again, and told to go ahead: the reply is stopped visibly, then the switch happens
        await start_reply(app, pilot, "second question")
        await pilot.press("ctrl+n")
        await pilot.pause()
        await pilot.press("y")
        await settle(app, pilot)
        assert app.chat.session_id != original and app.chat.conversation.items == []


async def test_new_session_during_a_rewind_waits_for_it(server):
    gate = rewind_gate()
    app = make_app(server, transport=gate)
    async with app.run_test(size=SIZE) as pilot:
        await turns(app, pilot, "one", "two")
        original = app.chat.session_id
        await pilot.press("alt+up", "enter")
        await wait_until(pilot, gate.held.is_set)
        await pilot.press("ctrl+n")
        await pilot.pause()
        assert "Opening it once the rewind in flight is done." in notifications(app)
        assert app.chat.session_id == original and app.chat.rewinding  # not cancelled, not switched
        gate.open()
        await settle(app, pilot)
        assert user_texts_of(await server_tasks(server, original)) == ["one"]  # the rewind went through
        assert app.chat.session_id != original  # and then the new session opened


async def test_status_tells_the_truth_after_a_failed_send_and_a_dead_server_restarts_from_the_app(tmp_path):
    started: list[EmbeddedServer] = []

    async def connector():
        # the app's embedded server: a fresh server process-alike on the same data dir per call
        server = await asyncio.to_thread(EmbeddedServer(tmp_path / "data").start)
        started.append(server)
        client = A2AClient(ServerConfig(url=server.agent_url, api=server.api_url))

        async def close() -> None:
            await client.aclose()
            await asyncio.to_thread(server.stop)

        return client, close

    app = RewindApp(connector, new_session=True)
    app.animation_level = "none"
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        await send(app, pilot, "before the crash")
        session_id = app.chat.session_id
        screen = app.chat_screen
        await asyncio.to_thread(started[0].stop)  # the server dies
        await send(app, pilot, "lost in transit?")
        assert screen.status.turn == "not sent"  # not "completed" (nor "failed": the server was gone)
        assert screen.composer.text == "lost in transit?"  # the draft survives
        assert any("Reconnect" in n for n in notifications(app))
        # restart from the app, no quitting: a new server on the same data, the same session
        app.reconnect()
        await settle(app, pilot)
        assert len(started) == 2 and started[1].port != started[0].port
        assert app.chat.session_id == session_id and user_texts(app)[0] == "before the crash"
        assert screen.status.turn != "failed"  # a fresh connection: the old failure is history
        await pilot.press("enter")  # the kept draft
        await settle(app, pilot)
        assert user_texts(app)[-1] == "lost in transit?" and screen.status.turn == "completed"
    await asyncio.to_thread(started[-1].stop)


async def test_reloaded_failed_and_canceled_turns_show_their_reason():
    card = load("kagent-0.10.4/01_agent_card.txt")
    user = {"kind": "message", "role": "user", "messageId": "u1", "parts": [{"kind": "text", "text": "do it"}]}
    user2 = dict(user, messageId="u2", parts=[{"kind": "text", "text": "again"}])
    failed = {
        "kind": "task",
        "id": "t1",
        "contextId": "s1",
        "history": [user],
        "status": {
            "state": "failed",
            "message": {
                "kind": "message",
                "role": "agent",
                "messageId": "f1",
                "parts": [{"kind": "text", "text": "model quota exceeded"}],
            },
        },
    }
    canceled = {"kind": "task", "id": "t2", "contextId": "s1", "history": [user2], "status": {"state": "canceled"}}
    with FakeServer() as api:
        api.route("GET", "/.well-known/agent-card.json", Reply.capture(card))
        # the REST routes as the embedded server answers them (server/rest.py: get_session,
        # session_tasks): a session in a data envelope, and the session's tasks oldest first
        api.route("GET", "/api/sessions/s1", Reply.json({"error": False, "data": {"id": "s1", "name": "s"}}))
        api.route("GET", "/api/sessions/s1/tasks", Reply.json({"error": False, "data": [failed, canceled]}))
        app = RewindApp(connector_for(api.url + "/", api.url + "/api"), session_id="s1")
        async with app.run_test(size=SIZE) as pilot:
            await settle(app, pilot)
            assert app.chat is not None, getattr(app.screen, "error", None)
            errors = [it.text for it in app.chat.conversation.items if it.kind is ItemKind.ERROR]
            # as a stream shows them: a failed status message without ids is the failure's text;
            # a canceled turn without a message says so
            assert errors == ["model quota exceeded", "This turn was canceled."]
            lines = "\n".join(app.chat_screen.transcript.render_line(y).text for y in range(30))
            assert "model quota exceeded" in lines and "This turn was canceled." in lines
            assert not api.requests_to("POST", "/")  # reading a session sends nothing
