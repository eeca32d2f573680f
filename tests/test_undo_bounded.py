"""Undo (and redo) of a rewind in a long session asks for bounded answers only: the redo's answer is
a tail (``limits.ANSWER_TAIL``), the undo point is read without histories, and the view is re-read by
pages whose rewind Tasks are cut and joined (``chat.pages``) -- never the whole session in one
request (a 25,000-turn session's re-read timed out after 91 s). The view then equals a fresh open.

The bounds are made small (a tail of 3, pages of 10 tasks cut to 5 messages) so that a session of
60 turns shows what a long one does: any answer holding a task history longer than the bounds is
the whole session's."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest

import rewindtui.chat.limits as limits_module
import rewindtui.chat.pages as pages_module
from rewindtui.a2a import contract
from rewindtui.a2a.classify import EventKind, StreamEvent
from rewindtui.chat import Chat
from rewindtui.chat.pages import joined_rewinds
from rewindtui.client import wire_log
from rewindtui.client.a2a_client import A2AClient, ServerConfig
from rewindtui.model import Conversation
from rewindtui.server import EmbeddedServer

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "bench"))
from seed_turns import seed_session

TURNS = 60
TAIL, PAGE_HISTORY, PAGE_TASKS = 3, 5, 10


# -- the join of a cut rewind Task, pure -----------------------------------------------------------
def msg(mid: str) -> dict[str, Any]:
    return {"kind": "message", "messageId": mid, "role": "user", "parts": [{"kind": "text", "text": mid}]}


def turn(tid: str, *mids: str) -> dict[str, Any]:
    return {"kind": "task", "id": tid, "history": [msg(m) for m in mids]}


def rewind(tid: str, total: int, *mids: str) -> dict[str, Any]:
    meta = {contract.EFFECTIVE_HISTORY_KEY: True, contract.EFFECTIVE_HISTORY_TOTAL_KEY: total}
    return {**turn(tid, *mids), "metadata": meta}


@pytest.fixture
def cut_at_3(monkeypatch):
    monkeypatch.setattr(pages_module, "PAGE_HISTORY", 3)


def test_a_cut_rewind_that_ends_the_messages_before_it_joins(cut_at_3) -> None:
    tasks = [turn("t1", "a", "b"), turn("t2", "c", "d"), rewind("r", 4, "b", "c", "d")]
    assert joined_rewinds(tasks, oldest=True) == {"r"}
    assert joined_rewinds(tasks[1:], oldest=False) is None  # fewer messages before it than its tail
    view = Conversation("s")
    view.load_tasks(tasks, None, joined_rewinds(tasks, oldest=True) or ())
    assert [i.text for i in view.items] == ["a", "b", "c", "d"] and view.current_task_id == "r"


@pytest.mark.parametrize(
    ("why", "tasks", "oldest"),
    [
        (
            "its ids are not the last ones",
            [turn("t1", "a", "b"), turn("t2", "c", "d"), rewind("r", 4, "b", "d", "c")],
            True,
        ),
        (
            "the count differs where the page starts it",
            [turn("t1", "a", "b"), turn("t2", "x"), rewind("r", 5, "a", "b", "x")],
            True,
        ),
        ("a turn may be cut", [turn("t1", "a", "b", "c"), rewind("r", 4, "a", "b", "c")], False),
        ("a message repeated", [turn("t1", "a", "b"), turn("t2", "b", "c"), rewind("r", 4, "b", "b", "c")], False),
    ],
)
def test_a_page_that_does_not_show_the_whole_history_is_read_whole(cut_at_3, why, tasks, oldest) -> None:
    assert joined_rewinds(tasks, oldest=oldest) is None, why


def test_a_whole_rewind_task_starts_the_history_the_next_one_joins(cut_at_3) -> None:
    tasks = [
        turn("t1", "a", "b"),
        rewind("r1", 1, "a"),
        turn("t2", "c", "d"),
        turn("t3", "e"),
        rewind("r2", 4, "c", "d", "e"),
    ]
    assert joined_rewinds(tasks, oldest=False) == {"r2"}
    tasks[-1] = rewind("r2", 5, "c", "d", "e")  # the count says one more than the history holds
    assert joined_rewinds(tasks, oldest=False) is None


def test_a_graft_shows_the_turns_that_came_back_as_a_reload_does() -> None:
    """A redo's joined tail holds the messages only; read back from the newest page, the turns
    that came back bring their own tasks, artifacts and outcome lines."""
    tasks = [turn(f"t{n}", f"u{n}", f"a{n}") for n in range(1, 5)]
    tasks[3]["status"] = {"state": "failed"}
    tasks[3]["artifacts"] = [{"artifactId": "f", "name": "report.txt", "parts": [{"kind": "text", "text": "a file"}]}]
    redo = rewind("r", 8, "a3", "u4", "a4")
    view = Conversation("s")
    view.load_tasks(tasks[:3])  # the view after a rewind of the last turn
    joined = view.apply_effective_tail(StreamEvent(EventKind.TASK, redo), 8)
    assert joined is not None and joined.first == 5
    reload = Conversation("s")
    reload.load_tasks([*tasks, redo], None, joined_rewinds([*tasks, redo], oldest=True) or ())
    looks = [(i.kind, i.text, i.task_id) for i in reload.items]
    assert [(i.kind, i.text, i.task_id) for i in view.items] != looks  # the tail: no artifact, no outcome
    newer = Conversation("s")
    newer.load_tasks([*tasks[2:], redo], "older", frozenset({"r"}))  # the newest page only
    change = view.graft_newest(5, newer)
    assert change is not None and change.first == 5
    assert [(i.kind, i.text, i.task_id) for i in view.items] == looks
    assert view.message_ids() == reload.message_ids() and view.current_task_id == "r"
    assert view.graft_newest(5, Conversation("s")) is None  # pages without those messages: nothing changes


# -- a Chat on the embedded server, every request's answer looked at --------------------------------
def longest_history(body: str) -> int:
    """The most messages any one task of a JSON answer (REST envelope, or an SSE frame) holds."""
    data = json.loads(body)
    data = data.get("data", data.get("result", data)) if isinstance(data, dict) else data
    tasks = data if isinstance(data, list) else [data]
    return max((len(t.get("history") or []) for t in tasks if isinstance(t, dict)), default=0)


class Answers:
    """The wire log's requests and the longest task history each answer held."""

    def __init__(self) -> None:
        self.log = wire_log.WireLog(max_entries=100_000, max_bytes=1 << 30)

    def __enter__(self) -> Answers:
        self.previous = wire_log.activate(self.log)
        return self

    def __exit__(self, *exc: object) -> None:
        wire_log.activate(self.previous)

    def take(self) -> list[tuple[str, str, int]]:
        """(method, URL path and query, longest history) per request since the last take."""
        asked: dict[int, list[Any]] = {}
        for e in self.log.entries:
            if e["kind"] == "request":
                asked[e["id"]] = [e["method"], e["url"].split("/", 3)[3], 0]
            elif e["kind"] in ("frame", "end") and e.get("body") and e["id"] in asked:
                asked[e["id"]][2] = max(asked[e["id"]][2], longest_history(e["body"]))
        self.log.entries.clear()
        return [tuple(a) for a in asked.values()]  # type: ignore[misc]


def message_ids(chat: Chat) -> list[str]:
    return [mid for item in chat.conversation.items for mid in item.message_ids]


@pytest.mark.slow
async def test_undo_and_redo_of_a_long_rewind_ask_only_for_bounded_answers(tmp_path, monkeypatch) -> None:
    monkeypatch.setattr(limits_module, "ANSWER_TAIL", TAIL)
    monkeypatch.setattr(limits_module, "OPEN_PAGE_TASKS", PAGE_TASKS)
    monkeypatch.setattr(pages_module, "PAGE_HISTORY", PAGE_HISTORY)
    monkeypatch.setattr(wire_log, "MAX_BODY", 1 << 30)  # each answer logged whole, to be counted
    bound = max(TAIL, PAGE_HISTORY)
    with EmbeddedServer(tmp_path) as srv:
        invocations = srv.call(seed_session(srv.app.state.parts, "long", TURNS))
        async with A2AClient(ServerConfig(url=srv.agent_url, api=srv.api_url)) as client:
            chat = Chat(client)
            await chat.open("long")
            whole = message_ids(chat)
            assert len(whole) == 2 * TURNS
            with Answers() as answers:
                for step in (lambda: chat.rewind(invocations[1]), chat.undo, chat.reapply, chat.undo):
                    outcome = await step()
                    asked = answers.take()
                    assert all(longest <= bound for _, _, longest in asked), (outcome.said, asked)
                    whole_reads = [url for method, url, _ in asked if method == "GET" and "limit=" not in url]
                    assert whole_reads == [], (outcome.said, whole_reads)
                assert outcome.turns_back == TURNS - 1
                assert message_ids(chat) == whole
                again = Chat(client)
                await again.open("long")  # a fresh open: its pages are bounded too, and show the same
                assert all(longest <= bound for _, _, longest in answers.take())
            assert message_ids(again) == whole
            assert chat.undo_label() is None and chat.redo_label() == f"redo the rewind of {TURNS - 1} turns"


def shown(chat: Chat) -> list[tuple]:
    """The view as the user sees it, and whose task each item is."""
    return [(i.kind, i.role, i.text, i.task_id, tuple(i.message_ids)) for i in chat.conversation.items]


@pytest.mark.slow
async def test_undo_of_a_short_rewind_in_a_long_session_reads_only_the_newest_page(tmp_path, monkeypatch) -> None:
    """The redo's tail joins the view; the turn that came back is then read back from the newest
    page alone (as a reload shows it: its own task, its outcome), never the whole session."""
    monkeypatch.setattr(limits_module, "ANSWER_TAIL", TAIL)
    monkeypatch.setattr(limits_module, "OPEN_PAGE_TASKS", PAGE_TASKS)
    monkeypatch.setattr(pages_module, "PAGE_HISTORY", PAGE_HISTORY)
    monkeypatch.setattr(wire_log, "MAX_BODY", 1 << 30)
    with EmbeddedServer(tmp_path) as srv:
        invocations = srv.call(seed_session(srv.app.state.parts, "long", TURNS))
        async with A2AClient(ServerConfig(url=srv.agent_url, api=srv.api_url)) as client:
            chat = Chat(client)
            await chat.open("long")
            await chat.rewind(invocations[-1])
            with Answers() as answers:
                outcome = await chat.undo()
                asked = answers.take()
            assert outcome.turns_back == 1
            pages = [url for method, url, _ in asked if method == "GET" and "include_rewound" not in url]
            assert pages == [f"api/sessions/long/tasks?limit={PAGE_TASKS}&history_length={PAGE_HISTORY}"]
            assert all(longest <= max(TAIL, PAGE_HISTORY) for _, _, longest in asked)
            again = Chat(client)
            await again.open("long")
            assert shown(chat) == shown(again)
