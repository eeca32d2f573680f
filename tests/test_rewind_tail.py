"""A rewind's (redo's) bounded answer: the newest messages of the effective history and the whole
count (``contract.EFFECTIVE_HISTORY_TOTAL_KEY``). The view keeps its prefix and takes the tail only
when the ids show the join (``Conversation.apply_effective_tail``); otherwise the chat re-reads the
server. Pure conversation tests; Chat against a loopback server that answers the bound, one that
ignores it (the whole history, as the kagent add-on and older servers answer) and one that cuts
without saying so; and Chat against the embedded server (real ADK and SQLite)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

import rewindtui.chat.limits as chat_module
from fakeserver import FakeServer, Reply, sse_body
from rewindtui.a2a import contract
from rewindtui.a2a.classify import EventKind, StreamEvent
from rewindtui.chat import Chat
from rewindtui.client.a2a_client import REWIND_EXTENSION, A2AClient, ServerConfig
from rewindtui.model import Conversation
from rewindtui.server import EmbeddedServer

CARD = "/.well-known/agent-card.json"
TOTAL = contract.EFFECTIVE_HISTORY_TOTAL_KEY


def msg(mid: str, role: str, text: str, inv: str, parts: list | None = None) -> dict[str, Any]:
    return {
        "kind": "message",
        "messageId": mid,
        "role": role,
        "parts": parts or [{"kind": "text", "text": text}],
        "metadata": {"kagent_invocation_id": inv},
    }


def turns(n: int) -> list[dict[str, Any]]:
    return [
        {
            "id": f"t{i}",
            "kind": "task",
            "status": {"state": "completed"},
            "history": [msg(f"u{i}", "user", f"q{i}", f"e-{i}"), msg(f"a{i}", "agent", f"r{i}", f"e-{i}")],
        }
        for i in range(1, n + 1)
    ]


def answer(history: list[dict[str, Any]], total: int | None) -> dict[str, Any]:
    meta: dict[str, Any] = {contract.EFFECTIVE_HISTORY_KEY: True}
    if total is not None:
        meta[TOTAL] = total
    return {
        "kind": "task",
        "id": "t-rw",
        "contextId": "s1",
        "status": {"state": "completed"},
        "history": history,
        "metadata": meta,
    }


def event(body: dict[str, Any]) -> StreamEvent:
    return StreamEvent(EventKind.TASK, body)


def history_of(tasks: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [m for t in tasks for m in t["history"]]


def texts(conv: Conversation) -> list[str]:
    return [item.text for item in conv.items]


# -- the join, pure ------------------------------------------------------------------------------
def test_a_tail_that_joins_keeps_the_view_prefix_and_takes_the_tail() -> None:
    conv = Conversation("s1")
    tasks = turns(4)
    conv.load_tasks(tasks)
    conv.truncate_before("e-4")
    kept = list(conv.items[:4])
    change = conv.apply_effective_tail(event(answer(history_of(tasks[:3])[-2:], total=6)), 6)
    assert change is not None and change.first == 4
    assert texts(conv) == ["q1", "r1", "q2", "r2", "q3", "r3"]
    assert conv.items[:4] == kept and all(a is b for a, b in zip(conv.items, kept, strict=False))  # not rebuilt
    assert conv.message_ids() == {m["messageId"] for m in history_of(tasks[:3])}
    assert conv.current_task_id == "t-rw"


def test_a_tail_of_the_whole_history_replaces_the_view() -> None:
    conv = Conversation("s1")
    tasks = turns(2)
    conv.load_tasks(tasks)
    conv.truncate_before("e-2")
    change = conv.apply_effective_tail(event(answer(history_of(tasks[:1]), total=2)), 2)
    assert change is not None and texts(conv) == ["q1", "r1"]


@pytest.mark.parametrize(
    ("why", "tail", "total"),
    [
        ("the count puts the tail elsewhere", ["u3", "a3"], 7),
        ("the view lacks the messages before the tail", ["u3", "a3"], 40),
        ("the tail disagrees with the view where they overlap", ["u3", "a2"], 6),
        ("the tail is new to the view", ["x1", "x2"], 8),
        ("more messages than the total", ["u1", "a1", "u2"], 2),
    ],
)
def test_a_tail_that_does_not_join_changes_nothing(why: str, tail: list[str], total: int) -> None:
    conv = Conversation("s1")
    tasks = turns(4)
    conv.load_tasks(tasks)
    conv.truncate_before("e-4")
    before = list(conv.items)
    by_id = {m["messageId"]: m for m in history_of(tasks)}
    history = [by_id.get(mid) or msg(mid, "agent", mid, "e-x") for mid in tail]
    assert conv.apply_effective_tail(event(answer(history, total)), total) is None, why
    assert conv.items == before


def test_a_join_inside_a_tool_call_and_its_folded_result_is_refused() -> None:
    call = msg(
        "c1",
        "agent",
        "",
        "e-1",
        parts=[
            {
                "kind": "data",
                "data": {"id": "k1", "name": "f", "args": {}},
                "metadata": {"kagent_type": "function_call"},
            }
        ],
    )
    result = msg(
        "c2",
        "agent",
        "",
        "e-1",
        parts=[
            {
                "kind": "data",
                "data": {"id": "k1", "name": "f", "response": {}},
                "metadata": {"kagent_type": "function_response"},
            }
        ],
    )
    tasks = [
        {"id": "t1", "history": [msg("u1", "user", "q1", "e-1"), call, result, msg("a1", "agent", "r1", "e-1")]},
        *turns(3)[1:],
    ]
    conv = Conversation("s1")
    conv.load_tasks(tasks)
    assert conv.items[1].message_ids == ["c1", "c2"]  # folded into one item
    conv.truncate_before("e-3")
    before = list(conv.items)
    assert conv.apply_effective_tail(event(answer([result, *history_of(tasks)[3:6]], total=6)), 6) is None
    assert conv.items == before
    assert conv.apply_effective_tail(event(answer(history_of(tasks)[3:6], total=6)), 6) is not None  # after it


# -- Chat against loopback servers: bounded, ignoring the bound, cutting without the count ---------
@pytest.fixture
def server():
    with FakeServer() as s:
        yield s


def card() -> dict[str, Any]:
    ext = {"uri": REWIND_EXTENSION, "params": {"rewind": ["a2a"]}}
    return {"name": "helper", "protocolVersion": "0.3.0", "capabilities": {"streaming": True, "extensions": [ext]}}


async def chat_on(server: FakeServer, tasks: list[dict[str, Any]]) -> Chat:
    client = A2AClient(ServerConfig(url=server.url + "/", api=server.url + "/api"))
    await client.connect()
    chat = Chat(client)
    chat.conversation.session_id = "s1"
    chat.conversation.load_tasks(tasks)
    return chat


def sse(task: dict[str, Any]) -> Reply:
    return Reply.sse(sse_body([json.dumps({"jsonrpc": "2.0", "id": 1, "result": task})]))


def stream_requests(server: FakeServer) -> list[dict[str, Any]]:
    return [r.json for r in server.requests_to("POST", "/") if r.json.get("method") == "message/stream"]


async def test_chat_asks_for_a_bounded_answer_and_joins_it(server, monkeypatch) -> None:
    monkeypatch.setattr(chat_module, "ANSWER_TAIL", 2)
    tasks = turns(4)
    server.route("GET", CARD, Reply.json(card()))
    server.route("POST", "/", sse(answer(history_of(tasks[:3])[-2:], total=6)))
    chat = await chat_on(server, tasks)
    await chat.rewind("e-4")
    assert texts(chat.conversation) == ["q1", "r1", "q2", "r2", "q3", "r3"]
    (request,) = stream_requests(server)
    assert request["params"]["configuration"] == {"historyLength": 2}
    assert server.requests_to("GET", "/api/sessions/s1/tasks") == []  # joined: no re-read


async def test_chat_takes_the_whole_history_from_a_server_that_ignores_the_bound(server, monkeypatch) -> None:
    """The kagent add-on and older servers answer the whole effective history, without the count."""
    monkeypatch.setattr(chat_module, "ANSWER_TAIL", 2)
    tasks = turns(4)
    server.route("GET", CARD, Reply.json(card()))
    server.route("POST", "/", sse(answer(history_of(tasks[:3]), total=None)))
    chat = await chat_on(server, tasks)
    await chat.rewind("e-4")
    assert texts(chat.conversation) == ["q1", "r1", "q2", "r2", "q3", "r3"]
    assert server.requests_to("GET", "/api/sessions/s1/tasks") == []


async def test_a_tail_that_does_not_join_rereads_the_server(server, monkeypatch) -> None:
    """A tail cut at the bound without the count, and a tail whose ids do not join: the view is
    the server's, re-read -- never a guess."""
    monkeypatch.setattr(chat_module, "ANSWER_TAIL", 2)
    tasks = turns(4)
    on_server = [
        *tasks[:2],
        {**tasks[2], "history": [msg("u3", "user", "q3", "e-3"), msg("a3x", "agent", "r3 (server)", "e-3")]},
    ]
    server.route("GET", CARD, Reply.json(card()))
    server.route("GET", "/api/sessions/s1/tasks", Reply.json({"error": False, "data": on_server}))
    for history, total in ((history_of(tasks[:3])[-2:], None), (history_of(on_server)[-2:], 6)):
        server.route("POST", "/", sse(answer(history, total)))
        chat = await chat_on(server, tasks)
        await chat.rewind("e-4")
        assert texts(chat.conversation) == ["q1", "r1", "q2", "r2", "q3", "r3 (server)"]
    assert len(server.requests_to("GET", "/api/sessions/s1/tasks")) == 2


# -- Chat against the embedded server ------------------------------------------------------------
async def test_rewind_and_redo_on_the_embedded_server_join_bounded_answers(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setattr(chat_module, "ANSWER_TAIL", 3)
    with EmbeddedServer(tmp_path) as srv:
        for rewind in ("a2a", "rest"):
            client = A2AClient(ServerConfig(url=srv.agent_url, api=srv.api_url, rewind=rewind))
            chat = Chat(client)
            await chat.open(None)
            for text in ("one", "two", "three", "four"):
                await chat.send(text)
            invocations = chat.conversation.turn_invocations()
            reread: list[bool] = []
            real_refresh = chat.refresh

            async def refresh(real=real_refresh, log=reread) -> bool:
                log.append(True)
                return await real()

            monkeypatch.setattr(chat, "refresh", refresh)
            kept = list(chat.conversation.items[:4])
            await chat.rewind(invocations[2])
            # joined, nothing re-read: the item before the tail of 3 is the view's own, the tail's are new
            assert reread == [] and chat.conversation.items[0] is kept[0]
            assert [i.key for i in chat.conversation.items] == [i.key for i in kept]
            assert [i.text for i in chat.conversation.items if i.role == "user"] == ["one", "two"]
            shown = [mid for item in chat.conversation.items for mid in item.message_ids]
            await chat.open(chat.session_id)  # what the server holds, read afresh
            assert [mid for item in chat.conversation.items for mid in item.message_ids] == shown
            await chat.redo()
            assert [i.text for i in chat.conversation.items if i.role == "user"] == ["one", "two", "three", "four"]
            await client.aclose()
