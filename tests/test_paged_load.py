"""Opening a session by pages: its newest tasks first, older pages put in front as they come
(``Conversation.load_tasks(..., older_token)`` then ``prepend_tasks``). Whatever the page size,
the view ends exactly as loading the whole session at once; the pages are what a server pages."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from rewindtui.a2a import contract
from rewindtui.model import Conversation, ItemKind
from rewindtui.output.export import markdown_items

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "bench"))
from synthetic import make_tasks, task_pages


def message(mid: str, role: str, parts: list[dict[str, Any]], task: str, inv: str) -> dict[str, Any]:
    return {
        "kind": "message",
        "messageId": mid,
        "role": role,
        "taskId": task,
        "contextId": "s",
        "parts": parts,
        "metadata": {"kagent_invocation_id": inv, "kagent_author": "user" if role == "user" else "demo"},
    }


def text(t: str) -> dict[str, Any]:
    return {"kind": "text", "text": t}


def call(call_id: str) -> dict[str, Any]:
    return {
        "kind": "data",
        "data": {"id": call_id, "name": "get_weather", "args": {"city": "Oslo"}},
        "metadata": {"kagent_type": "function_call"},
    }


def response(call_id: str) -> dict[str, Any]:
    return {
        "kind": "data",
        "data": {"id": call_id, "name": "get_weather", "response": {"temp_c": 3}},
        "metadata": {"kagent_type": "function_response"},
    }


def task(tid: str, history: list[dict[str, Any]], **extra: Any) -> dict[str, Any]:
    return {
        "kind": "task",
        "id": tid,
        "contextId": "s",
        "status": {"state": "completed", "timestamp": f"2026-01-01T00:00:{tid[-2:]}Z"},
        "history": history,
        **extra,
    }


def mixed_session() -> list[dict[str, Any]]:
    """Turns of text, a tool call whose response is in the next task (a page may end between
    them), a message the server repeats in a later task, and an artifact."""
    tasks = []
    for n in range(12):
        tid, inv = f"t-{n:02d}", f"e-{n}"
        history = [message(f"u{n}", "user", [text(f"question {n}")], tid, inv)]
        if n % 4 == 1:
            history.append(message(f"c{n}", "agent", [call(f"call-{n}")], tid, inv))
        elif n % 4 == 2:
            prev = f"e-{n - 1}"
            history.append(message(f"r{n - 1}", "agent", [response(f"call-{n - 1}")], tid, prev))
            history.append(message(f"a{n}", "agent", [text(f"answer {n}\nwith two lines")], tid, inv))
        elif n % 4 == 3:
            history.append(message(f"u{n - 1}", "user", [text(f"question {n - 1}")], tid, f"e-{n - 1}"))  # repeated
            history.append(message(f"a{n}", "agent", [text(f"answer {n}")], tid, inv))
        extra = {"artifacts": [{"artifactId": f"art-{n}", "parts": [text(f"report {n}")]}]} if n % 5 == 0 else {}
        tasks.append(task(tid, history, **extra))
    return tasks


def view(conv: Conversation) -> list[tuple]:
    return [
        (
            it.key if it.kind is ItemKind.MESSAGE else "",  # other items' keys are made up per load
            it.kind,
            it.role,
            it.text,
            it.invocation_id,
            it.task_id,
            tuple(it.message_ids),
            tuple((c.call_id, c.name, json.dumps(c.args), json.dumps(c.result), c.has_result) for c in it.tools),
        )
        for it in conv.items
    ]


def by_pages(tasks: list[dict[str, Any]], size: int) -> Conversation:
    """Load ``tasks`` as the app does: the newest page, then each older page in front."""
    pages = [tasks[max(0, end - size) : end] for end in range(len(tasks), 0, -size)]
    conv = Conversation("s")
    tokens = [str(i) if i < len(pages) else None for i in range(1, len(pages) + 1)]
    conv.load_tasks(json.loads(json.dumps(pages[0])) if pages else [], tokens[0] if pages else None)
    for page, token in zip(pages[1:], tokens[1:], strict=True):
        assert conv.older_token is not None
        change = conv.prepend_tasks(json.loads(json.dumps(page)), token)
        assert change.first == 0
    assert conv.older_token is None
    return conv


def whole(tasks: list[dict[str, Any]]) -> Conversation:
    conv = Conversation("s")
    conv.load_tasks(json.loads(json.dumps(tasks)))
    return conv


@settings(max_examples=40, deadline=None)
@given(st.integers(min_value=1, max_value=13))
def test_any_page_size_gives_the_view_of_the_whole_load(size):
    tasks = mixed_session()
    paged, full = by_pages(tasks, size), whole(tasks)
    assert view(paged) == view(full)
    assert paged.message_ids() == full.message_ids()
    assert paged.task_times == full.task_times
    assert paged.turn_invocations() == full.turn_invocations()
    assert markdown_items(paged.items) == markdown_items(full.items)


def test_a_tool_response_shown_alone_is_folded_into_its_call_from_an_older_page():
    tasks = mixed_session()[:3]  # the call in t-01, its response in t-02
    conv = Conversation("s")
    conv.load_tasks(tasks[2:], "older")
    alone = [it for it in conv.items if it.key == "r1"]
    assert alone and alone[0].tools[0].has_result  # shown on its own while its call is not loaded
    change = conv.prepend_tasks(tasks[:2], None)
    assert change.prepended == 0 and change.first == 0  # not a plain prepend: the view re-measures
    holder = next(it for it in conv.items if it.key == "c1")
    assert [(c.call_id, c.has_result, c.result) for c in holder.tools] == [("call-1", True, {"temp_c": 3})]
    assert not any(it.key == "r1" for it in conv.items)
    assert view(conv) == view(whole(tasks))


def test_a_plain_prepend_says_how_many_items_went_in_front():
    tasks = make_tasks(40)
    conv = Conversation("s")
    conv.load_tasks(tasks[10:], "older")
    first_newer = conv.items[0]
    change = conv.prepend_tasks(tasks[:10], None)
    assert change.prepended == 20 and conv.items[20] is first_newer and len(conv.items) == 40
    assert conv.older_token is None


def test_a_rewind_task_in_a_newer_page_makes_the_older_pages_moot():
    tasks = mixed_session()[:6]
    effective = task(
        "t-99",
        [message("u0", "user", [text("question 0")], "t-99", "e-0")],
        metadata={contract.EFFECTIVE_HISTORY_KEY: True},
    )
    conv = Conversation("s")
    conv.load_tasks([*tasks[4:], effective], "older")
    assert conv.older_token is None  # the rewind's Task holds the whole conversation
    assert [it.key for it in conv.items] == ["u0"]
    # and in an older page: what came before it in that page is moot, and so is everything older
    conv.load_tasks(tasks[4:], "older")
    conv.prepend_tasks([*tasks[2:3], effective, *tasks[3:4]], "older still")
    assert conv.older_token is None
    assert view(conv) == view(whole([effective, *tasks[3:]]))


def test_putting_a_checkpoint_back_brings_back_its_older_token():
    tasks = make_tasks(40)
    conv = Conversation("s")
    conv.load_tasks(tasks[10:], "older")
    token = conv.checkpoint()
    conv.prepend_tasks(tasks[:10], None)  # the older turns came in while a send was under way
    conv.restore(token)  # ... and the send was refused: the view is as it was, older turns still to load
    assert conv.older_token == "older" and len(conv.items) == 20
    conv.prepend_tasks(tasks[:10], None)
    assert view(conv) == view(whole(tasks))


def test_a_text_only_message_keeps_its_text_not_its_wire_dict():
    marked = message("u1", "user", [text("hi")], "t-01", "e-1")
    marked["metadata"][contract.STATE_CHANGED_KEY] = ["city"]
    conv = whole([task("t-01", [marked, message("c1", "agent", [call("call-1")], "t-01", "e-1")])])
    user, agent = conv.items
    assert user.text == "hi" and user.other_parts == [] and user.tools == () and user.call_ids() == []
    assert user.raw == {"metadata": {contract.STATE_CHANGED_KEY: ["city"]}}  # what the turn list reads
    assert agent.raw["parts"][0]["data"]["id"] == "call-1"  # a tool call keeps its wire dict
    plain = whole(make_tasks(4)).items[0]
    assert plain.raw == {} and plain.text.startswith("message number 1")


def test_the_bench_pages_are_the_synthetic_session_newest_first():
    assert [t for page in reversed(list(task_pages(101, 7))) for t in page] == make_tasks(101)
    assert view(by_pages(make_tasks(101), 7)) == view(whole(make_tasks(101)))
    assert all(it.kind is ItemKind.MESSAGE for it in whole(make_tasks(101)).items)
