"""The running turn in the app, against the real embedded server (a fault proxy in front where a
network has to break): a cut stream shows the turn interrupted and what the server holds, and the
turn bar follows it again; opening a session whose last turn still runs reattaches (and Esc stops
it on the server); a rewind whose answer is lost says the view was re-read; a server that gives
no invocation ids keeps rewind out of the footer and says why on the keys."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from faults.proxy import Fault, FaultProxy, is_a2a_rewind, is_rpc, is_turn
from kit.apps import make_app, proxied_app
from kit.offline import offline_app, offline_chat
from kit.pilot import SIZE, hold_escape_clock, notifications, server_tasks, server_users, settle, turns, wait_until
from rewindtui.chat import Chat, kagent1_hook
from rewindtui.client.a2a_client import A2AClient, ServerConfig
from rewindtui.model import INTERRUPTED, ItemKind

NOT_OFFERED = json.dumps({"jsonrpc": "2.0", "id": 1, "error": {"code": -32004, "message": "not supported"}}).encode()
SLOW = "a slow one " + " ".join(["with many words to say"] * 4)


async def test_a_cut_stream_shows_the_turn_interrupted_and_reattach_follows_it(slow_server):
    with FaultProxy(slow_server.base_url) as proxy:
        proxy.add(Fault(is_rpc("SubscribeToTask", "tasks/resubscribe"), times=10, status=200, body=NOT_OFFERED))
        proxy.add(Fault(is_turn, live=True, cut_after=3, how="chunked"))
        app = proxied_app(proxy, slow_server)
        async with app.run_test(size=SIZE) as pilot:
            await settle(app, pilot)
            screen = app.chat_screen
            screen.composer.text = SLOW
            await pilot.press("enter")
            await settle(app, pilot)
            conv = app.chat.conversation
            # not finished, not failed: interrupted, and it says what the server holds
            assert conv.turn_state == INTERRUPTED and screen.status.turn == INTERRUPTED
            error = [it.text for it in conv.items if it.kind is ItemKind.ERROR][-1]
            assert error.startswith("Interrupted: ") and "still running on the server" in error
            assert screen.composer.text == ""  # the server has the message: no draft to give back
            assert any(n.startswith("The turn was interrupted") and "Reattach" in n for n in notifications(app))
            assert screen.turn_bar.kind == "running"
            await pilot.click("#turn-reattach")
            await wait_until(pilot, lambda: conv.turn_state == "completed", timeout=20)
            await settle(app, pilot)
            assert screen.turn_bar.kind == "" and screen.status.turn == "completed"
            (task,) = await server_tasks(slow_server, app.chat.session_id)
            assert task["status"]["state"] == "completed"
            answer = [it.text for it in conv.items if it.role == "agent"][-1]
            assert answer.startswith(f"You said: {SLOW} (turn 1;")


@asynccontextmanager
async def another_clients_long_turn(server) -> AsyncIterator[tuple[Chat, asyncio.Future[object]]]:
    """Another client's chat, with a long turn of it streaming (and the task that sends it)."""
    async with A2AClient(ServerConfig(url=server.agent_url, api=server.api_url)) as client:
        other = Chat(client)
        await other.open(None)
        running = asyncio.ensure_future(other.send(SLOW))
        while not any(it.streaming for it in other.conversation.items):
            await asyncio.sleep(0.02)
        yield other, running


async def test_opening_a_session_whose_turn_runs_reattaches_and_esc_stops_it_on_the_server(slow_server):
    async with another_clients_long_turn(slow_server) as (other, running):
        app = make_app(slow_server, other.session_id)
        async with app.run_test(size=SIZE) as pilot:
            screen = app.chat_screen
            await wait_until(pilot, lambda: app.chat is not None and screen.replying)
            assert screen.status.turn == "working" and screen.turn_bar.kind == "replying"
            assert "Following the turn the server is still running (Esc stops it)." in notifications(app)
            await pilot.press("escape")
            await settle(app, pilot)
            assert app.chat.conversation.turn_state == "canceled"
        await running
        (task,) = await server_tasks(slow_server, other.session_id)
        assert task["status"]["state"] == "canceled"  # the server cancelled it, for every client
        assert other.conversation.turn_state == "canceled"


async def test_a_read_only_session_follows_a_running_turn_and_never_says_esc_stops_it(slow_server, monkeypatch):
    # read-only as a session opened from a kagent 1.0 read-only share is: the core's one source of it
    monkeypatch.setattr(kagent1_hook, "read_only_reason", lambda chat: "this session was opened from a read-only share")
    async with another_clients_long_turn(slow_server) as (other, running):  # the session's writer's turn
        app = make_app(slow_server, other.session_id)
        async with app.run_test(size=SIZE) as pilot:
            screen = app.chat_screen
            await wait_until(pilot, lambda: app.chat is not None and screen.replying)
            assert screen.turn_bar.kind == "replying"
            assert "Esc stops it" not in screen.turn_bar.text and "Read-only here" in screen.turn_bar.text
            assert "Following the turn the server is still running (read-only here)." in notifications(app)
            assert not any("Esc stops it" in n for n in notifications(app))
            await pilot.press("escape")  # refused: the turn goes on for its writer
            await wait_until(pilot, lambda: app.chat.conversation.turn_state == "completed", timeout=30)
        await running
        assert other.conversation.turn_state == "completed"


async def test_a_rewind_whose_answer_is_lost_says_the_view_was_reread(server):
    with FaultProxy(server.base_url) as proxy:
        app = proxied_app(proxy, server)
        async with app.run_test(size=SIZE) as pilot:
            await turns(app, pilot, "one", "two", "three")
            proxy.add(Fault(is_a2a_rewind, reset=True))  # the server rewinds; its answer never arrives
            await pilot.press("alt+up", "alt+up", "enter")
            await settle(app, pilot)
            (said,) = [n for n in notifications(app) if "re-read from the server" in n]
            assert (
                said.startswith("The view was re-read from the server and shows what it holds:")
                and "is rewound" in said
            )
            assert [it.text for it in app.chat.conversation.items if it.role == "user"] == ["one"]
            assert await server_users(server, app) == ["one"]


def chat_without_invocation_ids() -> Chat:
    """A conversation from a server that says nothing about turns (no invocation ids anywhere)."""
    chat = offline_chat([])
    conv = chat.conversation
    conv.add_user_message(
        {"kind": "message", "role": "user", "messageId": "u1", "parts": [{"kind": "text", "text": "hi"}]}
    )
    reply = {"kind": "message", "role": "agent", "messageId": "a1", "parts": [{"kind": "text", "text": "hello"}]}
    from rewindtui.client.a2a_client import parse_frame

    conv.apply(
        parse_frame(
            json.dumps(
                {
                    "jsonrpc": "2.0",
                    "id": 1,
                    "result": {
                        "kind": "status-update",
                        "taskId": "t1",
                        "contextId": "s1",
                        "status": {"state": "completed", "message": reply},
                        "final": True,
                    },
                }
            )
        )
    )
    return chat


async def test_no_invocation_ids_no_rewind_keys_and_the_keys_say_why():
    chat = chat_without_invocation_ids()
    assert chat.client.capabilities is not None and chat.client.capabilities.can_rewind  # the card says yes
    app = offline_app(chat)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        screen = app.chat_screen
        hold_escape_clock(app)  # two Escs are a double however slowly they come
        shown = {key for key, active in screen.active_bindings.items() if active.binding.show}
        assert "alt+up" not in shown and not {"r", "e", "f"} & shown
        await pilot.press("alt+up")
        await pilot.pause()
        why = "This server does not say which turn a message belongs to"
        assert notifications(app)[-1].startswith(why)
        await pilot.press("escape", "escape")  # Esc Esc on an empty composer: the same answer
        await pilot.pause()
        assert notifications(app)[-1].startswith(why) and not screen.rewind_mode
        assert "Nothing to rewind" not in " ".join(notifications(app))
