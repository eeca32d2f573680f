"""What keeps long sessions cheap must not change what they show nor hold on to memory: an item's
tool calls are read again when a result arrives later, texts read while loading equal
the texts read lazily, ``has_turns`` agrees with ``turn_invocations``, and the objects a long load
froze out of the cyclic collector's way are still freed once the session is left."""

from __future__ import annotations

import gc
import sys
import weakref
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bench"))

from rewindtui.a2a import raw
from rewindtui.a2a.classify import classify
from rewindtui.a2a.dialect import Dialect
from rewindtui.chat import Chat, gc_paused
from rewindtui.chat import limits as chat_module
from rewindtui.client.a2a_client import A2AClient, Capabilities, ServerConfig
from rewindtui.model import Conversation, extract_messages_from_tasks
from rewindtui.tui.gc_policy import DrawnLines
from synthetic import make_tasks


def _message(mid: str, parts: list[dict[str, Any]], role: str = "agent") -> dict[str, Any]:
    return {"kind": "message", "messageId": mid, "role": role, "taskId": "t1", "contextId": "s1", "parts": parts}


def _call(call_id: str) -> dict[str, Any]:
    return {
        "kind": "data",
        "data": {"id": call_id, "name": "get_weather", "args": {"city": "Oslo"}},
        "metadata": {"kagent_type": "function_call"},
    }


def _result(call_id: str, result: str) -> dict[str, Any]:
    return {
        "kind": "data",
        "data": {"id": call_id, "name": "get_weather", "response": {"result": result}},
        "metadata": {"kagent_type": "function_response"},
    }


def _event(m: dict[str, Any]) -> Any:
    return classify(
        {
            "kind": "status-update",
            "taskId": "t1",
            "contextId": "s1",
            "final": False,
            "status": {"state": "working", "message": m},
        }
    )


def test_a_tool_result_that_arrives_after_the_call_was_read_is_seen():
    conv = Conversation("s1")
    conv.apply(_event(_message("m1", [_call("c1"), _call("c2")])))
    (item,) = conv.items
    before = item.tools
    assert [(c.call_id, c.has_result) for c in before] == [("c1", False), ("c2", False)]
    conv.apply(_event(_message("m2", [_result("c1", "rain")])))
    assert conv.items == [item]  # folded into the call's item
    after = item.tools
    assert [(c.call_id, c.has_result, c.result) for c in after] == [
        ("c1", True, {"result": "rain"}),
        ("c2", False, None),
    ]
    # read again: the same answer
    assert [(c.call_id, c.has_result, c.result) for c in item.tools] == [
        (c.call_id, c.has_result, c.result) for c in after
    ]


def test_text_only_messages_have_no_tools_and_their_text_equals_the_lazy_reading():
    texts = [
        [{"kind": "text", "text": "one"}],
        [{"kind": "text", "text": "a"}, {"kind": "text", "text": "b"}],
        [{"text": "A2A 1.0 part"}],
        [{"kind": "text", "text": 7}],  # not a string: not text
        [],
    ]
    mixed = [[{"kind": "text", "text": "see "}, _call("c9")], [{"kind": "file", "file": {"uri": "x"}}]]
    messages = [_message(f"m{i}", parts) for i, parts in enumerate(texts + mixed)]
    conv = Conversation("s1")
    conv.load_tasks(
        [{"kind": "task", "id": "t1", "contextId": "s1", "history": messages, "status": {"state": "completed"}}]
    )
    assert len(conv.items) == len(messages)
    for item, m in zip(conv.items, messages, strict=True):
        assert item.text == raw.text_of(m)
    assert [len(item.tools) for item in conv.items] == [0, 0, 0, 0, 0, 1, 0]


def test_has_turns_agrees_with_turn_invocations():
    conv = Conversation("bench-session")
    assert not conv.has_turns()
    conv.load_tasks(make_tasks(40))
    assert conv.has_turns() and conv.turn_invocations()
    # a server that names no invocations: messages, but no turn to rewind to
    bare = [
        {
            "kind": "task",
            "id": "t1",
            "contextId": "s1",
            "history": [_message("m1", [{"kind": "text", "text": "hi"}], "user")],
            "status": {"state": "completed"},
        }
    ]
    conv.load_tasks(bare)
    assert conv.items and not conv.has_turns() and conv.turn_invocations() == []
    # every turn rewound away: none left
    conv.load_tasks(make_tasks(4))
    for item in conv.items:
        item.rewound = object()  # type: ignore[assignment]
    assert not conv.has_turns() and conv.turn_invocations() == []


class _Probe:
    """An object that can be watched with a weak reference, riding in a message's metadata."""


@pytest.fixture
def frozen_gc():
    """gc_paused freezes objects for the whole process: leave it as it was found."""
    yield
    gc.unfreeze()
    gc.collect()


def _long_tasks(probe: _Probe) -> list[dict[str, Any]]:
    tasks = make_tasks(12_000)  # more than FREEZE_AFTER_OBJECTS objects
    call = tasks[9]["history"][1]  # a tool call: its item keeps its wire dict (a text-only one is compacted)
    assert call["parts"][0]["kind"] == "data"
    call["metadata"]["probe"] = probe
    return tasks


def test_a_long_load_freezes_and_leaving_the_session_still_frees_it(frozen_gc):
    conv = Conversation("bench-session")
    probe = _Probe()
    watch = weakref.ref(probe)
    tasks = _long_tasks(probe)
    del probe
    with gc_paused():
        conv.load_tasks(tasks)
    del tasks
    assert gc.get_freeze_count() >= chat_module.FREEZE_AFTER_OBJECTS  # the load was frozen
    assert watch() is not None
    # the user opens another, short session: the long one's objects go (by reference counting,
    # frozen or not: parsed JSON holds no cycles)
    with gc_paused():
        conv.load_tasks(make_tasks(10))
    assert watch() is None


def test_garbage_the_long_load_made_is_collected_not_frozen(frozen_gc):
    probe = _Probe()
    probe.self = probe  # type: ignore[attr-defined]  # a cycle: only the cyclic collector frees it
    watch = weakref.ref(probe)
    conv = Conversation("bench-session")
    with gc_paused():
        conv.load_tasks(_long_tasks(probe))
        del probe
        conv.load_tasks(make_tasks(10))  # the long session is left while the collector is paused
        assert watch() is not None
        conv.load_tasks(make_tasks(12_000))
    assert gc.get_freeze_count() > 0  # a long load: frozen...
    assert watch() is None  # ...but not before its own garbage was collected


def test_a_short_load_freezes_nothing(frozen_gc):
    gc.unfreeze()
    with gc_paused():
        extract_messages_from_tasks(make_tasks(200))
    assert gc.get_freeze_count() == 0
    assert gc.isenabled()


def test_the_permissions_ask_for_turns_only_when_there_are_messages():
    client = A2AClient(ServerConfig(url="http://127.0.0.1:9/"))
    client.capabilities = Capabilities(name="bench", dialect=Dialect.V03, rewind_modes=("a2a",), fork=True, api=None)
    chat = Chat(client)
    assert chat.permissions().can_rewind and chat.permissions().can_fork  # a new, empty session
    chat.conversation.load_tasks(make_tasks(6))
    assert chat.permissions().can_rewind
    chat.conversation.load_tasks(
        [
            {
                "kind": "task",
                "id": "t1",
                "contextId": "s1",
                "history": [_message("m1", [{"kind": "text", "text": "hi"}], "user")],
                "status": {"state": "completed"},
            }
        ]
    )
    perms = chat.permissions()
    assert not perms.can_rewind and not perms.can_fork and "no invocation ids" in perms.rewind_reason


def test_lines_drawn_in_a_long_session_are_frozen_a_batch_at_a_time(frozen_gc):
    # counts, not equalities: a frozen object that dies meanwhile (refcount) leaves the count
    drawn = DrawnLines(every=3)
    gc.freeze()
    base = gc.get_freeze_count()
    kept = [[object()] for _ in range(1000)]  # what the last frames drew, still in the cache
    for _ in range(2):
        drawn.drew()
    assert not drawn.settle(chat_module.LONG_SESSION_ITEMS)  # not enough drawn yet
    drawn.drew()
    assert not drawn.settle(chat_module.LONG_SESSION_ITEMS - 1)  # a short session: the collector is left as it is
    assert gc.get_freeze_count() <= base
    before = gc.get_freeze_count()
    assert drawn.settle(chat_module.LONG_SESSION_ITEMS)
    assert gc.get_freeze_count() >= before + 900 and drawn.drawn == 0 and len(kept) == 1000
    assert not drawn.settle(chat_module.LONG_SESSION_ITEMS)  # nothing drawn since
