"""Any A2A server, fully: servers built on a2a-sdk's own classes (A2A 1.0 with ListTasks, and one
speaking only 0.3), no REST API. History back from A2A itself, remembered sessions, stop, resume a
dropped stream, reattach on open, approvals — each against the server's own record."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from a2a_servers import EchoExecutor
from rewindtui.a2a import Dialect
from rewindtui.chat import Chat
from rewindtui.client.a2a_client import A2AClient, ServerConfig
from rewindtui.model import INTERRUPTED, ItemKind


def config(server, tmp_path: Path, **kw) -> ServerConfig:
    return ServerConfig(url=server.url + "/", local_store=tmp_path / "sessions.db", **kw)


def users(chat: Chat) -> list[str]:
    return [i.text for i in chat.conversation.items if i.role == "user" and i.kind is ItemKind.MESSAGE]


def agents(chat: Chat) -> list[str]:
    """What the agent said: messages and artifacts (these servers answer in artifacts)."""
    return [
        i.text for i in chat.conversation.items if i.role == "agent" and i.kind in (ItemKind.MESSAGE, ItemKind.ARTIFACT)
    ]


async def streaming(chat: Chat, text: str) -> asyncio.Future[None]:
    """Send ``text`` and return once the agent's answer has begun to stream (the send still running)."""
    running = asyncio.ensure_future(chat.send(text))
    while not agents(chat):
        await asyncio.sleep(0.02)
    return running


def shown(chat: Chat) -> list[tuple[str, str, str]]:
    return [
        (i.kind.value, i.role, i.text)
        for i in chat.conversation.items
        if i.kind in (ItemKind.MESSAGE, ItemKind.ARTIFACT)
    ]


async def truth(server, tmp_path: Path, session_id: str) -> list[tuple[str, str, str]]:
    """The session as the server gives it back (a fresh client, same local store)."""
    async with A2AClient(config(server, tmp_path)) as client:
        chat = Chat(client)
        await chat.open(session_id)
        return shown(chat)


async def test_dialect_is_read_from_the_card(sdk_server, tmp_path):
    async with A2AClient(config(sdk_server, tmp_path)) as client:
        caps = await client.connect()
    expected = Dialect.V03 if caps.name.endswith("-03") else Dialect.V10
    assert caps.dialect is expected and not caps.can_rewind and not caps.fork


async def test_history_comes_back_from_a2a_alone(sdk_server, tmp_path):
    async with A2AClient(config(sdk_server, tmp_path)) as client:
        chat = Chat(client)
        await chat.open(None)
        await chat.send("one")
        await chat.send("two")
        sid = chat.session_id
        assert sid and users(chat) == ["one", "two"]
        live = shown(chat)
    again = await truth(sdk_server, tmp_path, sid)
    assert again == live
    assert [t for _, r, t in again if r == "agent"] == ["You said: one (turn 1)", "You said: two (turn 2)"]


async def test_a_session_not_used_from_here(sdk_server, tmp_path):
    """1.0: ListTasks gives any context's turns back. 0.3 cannot list: the view says so plainly."""
    async with A2AClient(config(sdk_server, tmp_path)) as client:
        chat = Chat(client)
        await chat.open(None)
        await chat.send("elsewhere")
        sid = chat.session_id
        dialect = client.dialect
    assert sid
    async with A2AClient(config(sdk_server, tmp_path / "another-machine")) as client:
        other = Chat(client)
        await other.open(sid)
        if dialect is Dialect.V10:
            assert users(other) == ["elsewhere"] and agents(other) == ["You said: elsewhere (turn 1)"]
            assert other.history_note == ""
        else:
            assert other.conversation.items == []
            assert "cannot give a conversation back" in other.history_note
            assert other.permissions().history_note == other.history_note


async def test_sessions_are_remembered_and_gone_ones_marked(serve, tmp_path):
    server = serve()
    key = "the-same-server"
    async with A2AClient(config(server, tmp_path, local_store_key=key)) as client:
        chat = Chat(client)
        await chat.open(None)
        await chat.send("remember me")
        sid = chat.session_id
        listed = await chat.list_sessions()
        assert [(s.id, s.name, s.gone) for s in listed] == [(sid, "remember me", False)]
    # the same server restarted with an empty memory: it no longer knows the session
    server.stop()
    restarted = serve()
    async with A2AClient(config(restarted, tmp_path, local_store_key=key)) as client:
        listed = await Chat(client).list_sessions()
    assert [(s.id, s.name, s.gone) for s in listed] == [(sid, "remember me", True)]  # marked, not dropped


async def test_stop_a_running_turn(sdk_server, tmp_path):
    async with A2AClient(config(sdk_server, tmp_path)) as client:
        chat = Chat(client)
        await chat.open(None)
        running = await streaming(chat, "a slow answer with many many words to say")
        assert chat.permissions().can_stop
        await chat.stop(grace=2.0)
        await running
        assert chat.conversation.turn_state == "canceled"
        assert not chat.sending
        sid = chat.session_id
        live = shown(chat)
    assert sid
    assert await truth(sdk_server, tmp_path, sid) == live  # nothing stored is lost, nothing extra shown


async def test_approve_and_reject(sdk_server, tmp_path):
    async with A2AClient(config(sdk_server, tmp_path)) as client:
        chat = Chat(client)
        await chat.open(None)
        await chat.send("please delete build-cache")
        question = chat.pending_confirmation()
        assert question is not None and chat.conversation.turn_state == "input-required"
        assert (question.tool, question.args, question.hint) == (
            "delete_thing",
            {"thing": "build-cache"},
            "Delete build-cache?",
        )
        await chat.confirm(True)
        assert chat.conversation.turn_state == "completed" and agents(chat)[-1] == "Deleted build-cache."
        await chat.send("and delete logs")
        await chat.confirm(False)
        assert agents(chat)[-1] == "Kept logs."
        sid = chat.session_id
        live = shown(chat)
    assert sid
    assert await truth(sdk_server, tmp_path, sid) == live


async def test_reattach_on_open_when_the_last_task_still_runs(serve, tmp_path):
    """A 1.0 server lists a context's tasks: opening a session whose last task is working
    reattaches to it (SubscribeToTask) and follows it to the end."""
    server = serve()
    async with A2AClient(config(server, tmp_path)) as a, A2AClient(config(server, tmp_path)) as b:
        first = Chat(a)
        await first.open(None)
        await first.send("hello")
        running = asyncio.ensure_future(first.send("a slow one to follow from elsewhere"))
        while not first.conversation.busy or not agents(first)[1:]:
            await asyncio.sleep(0.02)
        second = Chat(b)
        assert first.session_id
        await second.open(first.session_id)
        assert second.conversation.running_task_id is not None and second.conversation.turn_state == "working"
        await second.resume()
        await running
        assert second.conversation.turn_state == "completed"
        assert agents(second)[-1] == agents(first)[-1] == "You said: a slow one to follow from elsewhere (turn 2)"


@pytest.mark.parametrize("only_03", [False, True])
async def test_a_dropped_stream_is_resumed(serve, tmp_path, only_03):
    """The stream is cut mid-turn; the server offers SubscribeToTask / tasks/resubscribe, so the
    turn is followed to its end: no interruption left, and the view is the server's."""
    from faults.proxy import Fault, FaultProxy, is_turn

    server = serve(only_03=only_03)
    with FaultProxy(server.url) as proxy:
        proxy.add(Fault(is_turn, live=True, cut_after=3, how="chunked"))
        async with A2AClient(
            ServerConfig(url=proxy.url + "/", local_store=tmp_path / "sessions.db", local_store_key=server.url + "/")
        ) as client:
            chat = Chat(client)
            await chat.open(None)
            await chat.send("a slow one that will be cut")
            assert chat.conversation.turn_state == "completed" != INTERRUPTED
            resumed = [r for r in proxy.seen if r.rpc_method in ("SubscribeToTask", "tasks/resubscribe")]
            assert len(resumed) == 1
            sid = chat.session_id
            live = shown(chat)
    assert sid and live[-1][2] == "You said: a slow one that will be cut (turn 1)"
    assert await truth(server, tmp_path, sid) == live


class _SilentOnCancel(EchoExecutor):
    """An agent whose ``cancel`` does nothing: it sends no canceled status of its own (a2a-sdk
    then closes the stream and marks the task canceled by itself)."""

    async def cancel(self, context, event_queue) -> None:
        return None


async def test_stop_where_the_agent_sends_no_canceled_status_is_a_stop_not_an_interruption(serve, tmp_path):
    server = serve(executor=_SilentOnCancel(slow_delay=0.2))
    async with A2AClient(config(server, tmp_path)) as client:
        chat = Chat(client)
        await chat.open(None)
        running = await streaming(chat, "a slow answer with quite a few words to say")
        started = asyncio.get_running_loop().time()
        await chat.stop(grace=0.5)
        await running  # no TurnInterrupted: the user stopped it
        assert asyncio.get_running_loop().time() - started < 3
        assert not chat.sending and chat.interrupted_task_id is None
        assert chat.conversation.turn_state == "canceled"
        assert not any(i.kind is ItemKind.ERROR and i.text.startswith("Interrupted") for i in chat.conversation.items)
        sid = chat.session_id
        live = shown(chat)
    assert sid
    assert await truth(server, tmp_path, sid) == live  # what the server holds, nothing extra shown
