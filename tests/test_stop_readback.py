"""Stop keeps what came, after a restart too (issue 20): a stopped turn read back through a fresh
server process and a fresh client shows the reply the user saw, under its author, marked stopped
-- also when the stop came between ADK committing the reply and the store storing it."""

from __future__ import annotations

import asyncio
import sys
import threading
from pathlib import Path

import pytest

from rewindtui.chat import Chat
from rewindtui.client.a2a_client import A2AClient, ServerConfig
from rewindtui.model import ItemKind
from rewindtui.server import EmbeddedServer
from rewindtui.server.http.options import ServerOptions
from rewindtui.server.service.faults import TURN_AFTER_AGENT_MESSAGE

sys.path.insert(0, str(Path(__file__).resolve().parent / "server"))  # srvkit
from srvkit import Served

from faults.proxy import Fault, FaultProxy, is_turn

pytestmark = pytest.mark.slow


async def chat_on(url: str, api: str, session_id: str | None = None) -> Chat:
    client = A2AClient(ServerConfig(url=url, api=api))
    await client.connect()
    chat = Chat(client)
    await chat.open(session_id)
    return chat


async def wait_until(condition, timeout: float = 30.0) -> None:
    deadline = asyncio.get_running_loop().time() + timeout
    while not condition():
        assert asyncio.get_running_loop().time() < deadline, "timed out waiting"
        await asyncio.sleep(0.02)


def agent_items(chat: Chat) -> list:
    return [i for i in chat.conversation.items if i.role == "agent" and i.kind is ItemKind.MESSAGE]


def canceled(chat: Chat) -> bool:
    """The view says the last turn was canceled (its outcome line, after the reply)."""
    last = chat.conversation.items[-1]
    return last.kind is ItemKind.ERROR and last.text == "This turn was canceled."


async def read_back(data: Path, session_id: str) -> Chat:
    """A fresh ``rewindtui serve`` process on ``data`` and a fresh client of it, the session open."""
    served = await asyncio.to_thread(Served, data)
    try:
        chat = await chat_on(served.agent_url, served.api_url, session_id)
        await chat.client.aclose()
        return chat
    finally:
        await asyncio.to_thread(served.close)


async def test_a_stopped_reply_reads_back_after_a_restart_under_its_author_marked_stopped(tmp_path):
    data = tmp_path / "data"
    with EmbeddedServer(data, demo_delay=0.15) as srv:
        chat = await chat_on(srv.agent_url, srv.api_url)
        turn = asyncio.ensure_future(chat.send("tell me a long story about the sea and its ships and its harbours"))
        await wait_until(lambda: any(i.streaming and len(i.text) > 15 for i in agent_items(chat)))
        await chat.stop()
        await turn
        (shown,) = [i for i in agent_items(chat) if i.stopped]
        session_id = chat.session_id
        await chat.client.aclose()
    assert session_id is not None
    again = await read_back(data, session_id)
    assert not canceled(again)  # the stopped mark says it, as in the live view: no 'canceled' line under it
    (reply,) = agent_items(again)
    assert (reply.author, reply.text, reply.stopped) == ("demo", shown.text, True)
    assert not any("turn was canceled" in i.text for i in agent_items(again))


async def test_a_stop_between_adk_and_the_store_keeps_the_reply(tmp_path):
    """The stop lands after ADK committed the whole reply (every delta shown) and before the store
    had it: the server stores what ADK holds (before: the turn held "The turn was canceled." and
    the reply was gone after a restart)."""
    data, marker = tmp_path / "data", tmp_path / "paused"
    options = ServerOptions(pause_at={TURN_AFTER_AGENT_MESSAGE: str(marker)})
    with EmbeddedServer(data, options=options) as srv:
        chat = await chat_on(srv.agent_url, srv.api_url)
        turn = asyncio.ensure_future(chat.send("a short one"))
        # ADK has committed the reply and every delta of it is on screen
        await wait_until(lambda: marker.exists() and any(i.text.endswith("=0)") for i in agent_items(chat)))
        await chat.stop()
        await turn
        live = [(i.author, i.text) for i in agent_items(chat)]
        session_id = chat.session_id
        await chat.client.aclose()
    assert session_id is not None
    assert live == [("demo", "You said: a short one (turn 1; history: ['a short one']; weather_calls=0)")]
    with EmbeddedServer(data) as fresh:  # a fresh server on the same data (in this process)
        again = await chat_on(fresh.agent_url, fresh.api_url, session_id)
        await again.client.aclose()
    assert canceled(again)
    assert [(i.author, i.text) for i in agent_items(again)] == live


async def test_a_stop_before_the_first_frame_still_cancels_on_the_server(tmp_path):
    """Esc (or Ctrl+C in send) pressed before the server's first frame named the turn: the stop
    waits for that frame (up to its grace) and cancels the turn on the server (before: it only
    stopped reading, and the turn ran on, holding the session)."""
    with EmbeddedServer(tmp_path / "data", demo_delay=0.3) as srv:
        chat = await chat_on(srv.agent_url, srv.api_url)
        await chat.send("hello")  # the agent is warm: the next turn's first frame comes within the grace
        turn = asyncio.ensure_future(chat.send("a long message that takes a while to answer " * 4))
        while chat._watch is None:  # the message is on its way; no frame of it can have come back yet
            await asyncio.sleep(0)
        assert chat._watch.task_id is None
        await chat.stop()
        await turn
        tasks = await chat.client.session_tasks(chat.session_id or "")
        assert [t["status"]["state"] for t in tasks] == ["completed", "canceled"]
        await chat.client.aclose()


async def test_a_stop_waits_past_its_grace_for_a_slow_first_frame_and_cancels(tmp_path):
    """The server's first frame comes well after the stop's grace (a loaded machine; under four
    test workers on two cores it took over 2 s): the stop still waits for the turn's name and
    cancels it on the server (before: it gave up after its grace, sent no cancel, and the turn
    completed -- the stop was lost)."""
    grace = 0.3
    with EmbeddedServer(tmp_path / "data", demo_delay=0.3) as srv, FaultProxy(srv.base_url) as proxy:
        chat = await chat_on(proxy.rewrite(srv.agent_url), proxy.rewrite(srv.api_url))
        await chat.send("hello")
        first_frame = threading.Event()
        proxy.add(Fault(is_turn, live=True, hold=first_frame))
        turn = asyncio.ensure_future(chat.send("a long message that takes a while to answer " * 6))
        await wait_until(lambda: proxy.seen_by(is_turn)[1:])  # the message reached the server
        stop = asyncio.ensure_future(chat.stop(grace))
        loop = asyncio.get_running_loop()
        waited_from = loop.time()
        await wait_until(lambda: stop.done() or loop.time() - waited_from > 4 * grace)
        assert not stop.done() and chat._watch is not None and chat._watch.task_id is None
        first_frame.set()
        await stop
        await turn
        tasks = await chat.client.session_tasks(chat.session_id or "")
        assert [t["status"]["state"] for t in tasks] == ["completed", "canceled"]
        reply = agent_items(chat)[-1]  # what came after the late first frame stays, marked stopped
        assert reply.stopped and reply.text.startswith("You said: a long message")
        await chat.client.aclose()


async def test_a_stopped_answer_keeps_its_reply_and_adds_nothing_of_the_question(tmp_path):
    """A stop while the turn resumed by an approval streams: the reply so far is kept, marked
    stopped; nothing of the waiting turn's question (which ADK holds and the store left out) is
    added to it."""
    with EmbeddedServer(tmp_path / "data", demo_delay=0.3) as srv:
        chat = await chat_on(srv.agent_url, srv.api_url)
        await chat.send("please delete notes.txt")
        assert chat.pending_confirmation() is not None
        before = [(i.role, i.text, len(i.tools)) for i in chat.conversation.items if i.kind is ItemKind.MESSAGE]
        answer = asyncio.ensure_future(chat.confirm(True))
        await wait_until(lambda: any(i.streaming and len(i.text) > 10 for i in agent_items(chat)))
        await chat.stop()
        await answer
        again = await chat_on(srv.agent_url, srv.api_url, chat.session_id)
        for c in (chat, again):
            shown = [(i.role, i.text, len(i.tools)) for i in c.conversation.items if i.kind is ItemKind.MESSAGE]
            *rest, last = shown
            assert rest[: len(before)] == before and len(rest) == len(before) + 1  # + the approval
            reply = agent_items(c)[-1]
            assert reply.stopped and reply.text.startswith("Tool delete_file returned") and last[0] == "agent"
            await c.client.aclose()
