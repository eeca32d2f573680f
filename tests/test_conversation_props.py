"""Property tests for the conversation model over generated stream events in both dialect shapes.

Events are drawn from small id pools (so ids collide: echoes, repeats, tool call/response pairs,
tasks replacing tasks) and serialised as A2A 0.3 (``kind`` tags) or A2A 1.0 (wrapper keys,
``ROLE_*``, ``TASK_STATE_*``, kind-less parts). Runs are derandomised: the same examples every run.
"""

from __future__ import annotations

import json
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from rewindtui.a2a.classify import classify_frame
from rewindtui.model import EFFECTIVE_HISTORY_KEY, Conversation

SETTINGS = settings(
    max_examples=75,
    deadline=None,
    derandomize=True,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)

TASKS = ["t1", "t2", "t3"]
MIDS = [f"m{i}" for i in range(8)]
INVOCATIONS = ["e-1", "e-2", "e-3", "header_update"]
CALLS = ["c1", "c2"]
STATES = [
    "submitted",
    "working",
    "input-required",
    "completed",
    "canceled",
    "failed",
    "rejected",
    "auth-required",
    "unknown-state",
]
#: Weighted towards what a turn mostly consists of.
COMMON_STATES = ["working"] * 6 + ["submitted", "completed", "completed"] + STATES
STATES_10 = {
    "submitted": "TASK_STATE_SUBMITTED",
    "working": "TASK_STATE_WORKING",
    "input-required": "TASK_STATE_INPUT_REQUIRED",
    "completed": "TASK_STATE_COMPLETED",
    "canceled": "TASK_STATE_CANCELED",
    "failed": "TASK_STATE_FAILED",
    "rejected": "TASK_STATE_REJECTED",
    "auth-required": "TASK_STATE_AUTH_REQUIRED",
    "unknown-state": "TASK_STATE_UNSPECIFIED",
}
texts = st.sampled_from(["", "a", "b ", "hello", "You said: hello", "ab"])


# -- canonical events (dialect-neutral), then serialised per dialect ------------------------------
def _part(draw, kind: str) -> dict[str, Any]:
    if kind == "text":
        return {"t": "text", "text": draw(texts)}
    if kind == "call":
        return {"t": "call", "id": draw(st.sampled_from(CALLS)), "name": "get_weather", "args": {"city": draw(texts)}}
    if kind == "response":
        return {
            "t": "response",
            "id": draw(st.sampled_from(CALLS)),
            "name": "get_weather",
            "response": {"v": draw(st.integers(0, 3))},
        }
    if kind == "file":
        return {"t": "file", "url": "https://example.invalid/f", "mime": "text/plain"}
    if kind == "data":
        return {"t": "data", "data": {"x": draw(st.integers(0, 3))}}
    return {"t": "weird"}


@st.composite
def parts(draw) -> list[dict[str, Any]]:
    """Mostly the shapes kagent sends (one text, one call, one response), sometimes a mixture."""
    flavour = draw(st.sampled_from(["text", "text", "text", "call", "response", "empty", "mixed"]))
    if flavour == "empty":
        return []
    if flavour != "mixed":
        return [_part(draw, flavour)]
    kinds = draw(
        st.lists(st.sampled_from(["text", "call", "response", "file", "data", "weird"]), min_size=1, max_size=3)
    )
    return [_part(draw, k) for k in kinds]


@st.composite
def message_bodies(draw, mid: str | None, role: str | None = None, task: str | None = None) -> dict[str, Any]:
    meta: dict[str, Any] = {}
    if draw(st.booleans()):
        meta[draw(st.sampled_from(["kagent_invocation_id", "adk_invocation_id"]))] = draw(st.sampled_from(INVOCATIONS))
    partial = draw(st.sampled_from([None, None, True, False]))
    if partial is not None:
        meta[draw(st.sampled_from(["kagent_adk_partial", "adk_partial"]))] = partial
    return {
        "mid": mid,
        "role": role or draw(st.sampled_from(["user", "agent", "agent"])),
        "task": task or draw(st.sampled_from(TASKS + [None])),
        "context": draw(st.sampled_from(["s1", None])),
        "meta": meta,
        "parts": draw(parts()),
    }


@st.composite
def universes(draw) -> dict[str, dict[str, Any]]:
    """The messages of one example, by id. As on a real server, a messageId always stands for the
    same message (same task, role, parts): echoes and repeated histories carry it unchanged."""
    return {mid: draw(message_bodies(mid)) for mid in MIDS}


def pick(draw, universe: dict[str, dict[str, Any]], role: str | None = None, task: str | None = None) -> dict[str, Any]:
    """A message of the universe (matching role / task when asked), or now and then an id-less one."""
    choices = [
        m for m in universe.values() if (role is None or m["role"] == role) and (task is None or m["task"] == task)
    ]
    if not choices or draw(st.integers(0, 5)) == 0:
        return draw(message_bodies(None, role=role, task=task))
    return draw(st.sampled_from(choices))


@st.composite
def events(draw, universe: dict[str, dict[str, Any]]) -> dict[str, Any]:
    kind = draw(
        st.sampled_from(["status", "status", "status", "artifact", "message", "task", "task", "error", "unknown"])
    )
    task = draw(st.sampled_from(TASKS))
    if kind == "status":
        event_meta = {}
        if draw(st.booleans()):
            event_meta["kagent_invocation_id"] = draw(st.sampled_from(INVOCATIONS))
        if draw(st.booleans()):
            event_meta["kagent_adk_partial"] = draw(st.booleans())
        message = pick(draw, universe) if draw(st.integers(0, 2)) else None
        return {
            "k": "status",
            "task": (message or {}).get("task") or task,
            "state": draw(st.sampled_from(COMMON_STATES)),
            "message": message,
            "final": draw(st.sampled_from([None, True, False])),
            "meta": event_meta,
        }
    if kind == "artifact":
        return {
            "k": "artifact",
            "task": task,
            "id": draw(st.sampled_from(["a1", "a2"])),
            "parts": draw(parts()),
            "append": draw(st.sampled_from([None, True, False])),
        }
    if kind == "message":
        return {"k": "message", "message": pick(draw, universe)}
    if kind == "task":
        meta = {}
        if draw(st.booleans()):
            meta["kagent_invocation_id"] = draw(st.sampled_from(INVOCATIONS))
        effective = draw(st.integers(0, 9)) == 0
        task_id = draw(st.sampled_from(TASKS + ["s1"]))
        if effective:
            meta[EFFECTIVE_HISTORY_KEY] = True
        # an ordinary Task holds its own task's messages; the effective history holds any
        scope = None if effective or task_id == "s1" else task_id
        size = draw(st.integers(0, 4))
        return {
            "k": "task",
            "id": task_id,
            "history": [pick(draw, universe, task=scope) for _ in range(size)],
            "state": draw(st.sampled_from(STATES)),
            "artifacts": draw(st.lists(parts(), max_size=2)),
            "meta": meta,
            "kindless": draw(st.booleans()),  # 0.3 only: a task-like payload without kind
        }
    if kind == "error":
        return {"k": "error", "code": draw(st.sampled_from([-32602, -32001, None])), "message": draw(texts)}
    return {
        "k": "unknown",
        "body": draw(st.sampled_from([{"kind": "hologram"}, {"weird": [1, 2]}, None, 7, "text", {"task": "x"}])),
    }


def wire_part(p: dict[str, Any], v10: bool) -> Any:
    t = p["t"]
    if t == "text":
        out: dict[str, Any] = {"text": p["text"]}
        kind = "text"
    elif t in ("call", "response"):
        body = {"id": p["id"], "name": p["name"]}
        body.update({"args": p["args"]} if t == "call" else {"response": p["response"]})
        key = "adk_type" if v10 else "kagent_type"
        out = {"data": body, "metadata": {key: "function_call" if t == "call" else "function_response"}}
        kind = "data"
    elif t == "file":
        if v10:
            return {"url": p["url"], "mediaType": p["mime"]}
        out = {"file": {"uri": p["url"], "mimeType": p["mime"]}}
        kind = "file"
    elif t == "data":
        out = {"data": p["data"]}
        kind = "data"
    else:
        return {"kind": "hologram", "beam": 1} if not v10 else {"hologram": 1}
    if not v10:
        out["kind"] = kind
    return out


def wire_message(m: dict[str, Any], v10: bool) -> dict[str, Any]:
    out: dict[str, Any] = {
        "role": ("ROLE_USER" if m["role"] == "user" else "ROLE_AGENT") if v10 else m["role"],
        "parts": [wire_part(p, v10) for p in m["parts"]],
    }
    if m["mid"] is not None:
        out["messageId"] = m["mid"]
    if m["task"] is not None:
        out["taskId"] = m["task"]
    if m["context"] is not None:
        out["contextId"] = m["context"]
    if m["meta"]:
        out["metadata"] = dict(m["meta"])
    if not v10:
        out["kind"] = "message"
    return out


def wire(e: dict[str, Any], v10: bool) -> dict[str, Any]:
    """One JSON-RPC frame in the chosen dialect."""
    state = (lambda s: STATES_10[s]) if v10 else (lambda s: s)
    k = e["k"]
    if k == "error":
        err: dict[str, Any] = {"message": e["message"]}
        if e["code"] is not None:
            err["code"] = e["code"]
        return {"jsonrpc": "2.0", "id": "1", "error": err}
    if k == "unknown":
        return {"jsonrpc": "2.0", "id": "1", "result": e["body"]}
    if k == "status":
        status: dict[str, Any] = {"state": state(e["state"])}
        if e["message"] is not None:
            status["message"] = wire_message(e["message"], v10)
        body: dict[str, Any] = {"taskId": e["task"], "contextId": "s1", "status": status}
        if e["meta"]:
            body["metadata"] = dict(e["meta"])
        if not v10 and e["final"] is not None:
            body["final"] = e["final"]
        result = {"statusUpdate": body} if v10 else {**body, "kind": "status-update"}
    elif k == "artifact":
        body = {
            "taskId": e["task"],
            "contextId": "s1",
            "artifact": {"artifactId": e["id"], "parts": [wire_part(p, v10) for p in e["parts"]]},
        }
        if e["append"] is not None:
            body["append"] = e["append"]
        result = {"artifactUpdate": body} if v10 else {**body, "kind": "artifact-update"}
    elif k == "message":
        m = wire_message(e["message"], v10)
        result = {"message": m} if v10 else m
    else:
        body = {
            "id": e["id"],
            "contextId": "s1",
            "status": {"state": state(e["state"])},
            "history": [wire_message(m, v10) for m in e["history"]],
            "artifacts": [
                {"artifactId": f"ta{i}", "parts": [wire_part(p, v10) for p in ps]}
                for i, ps in enumerate(e["artifacts"])
            ],
        }
        if e["meta"]:
            body["metadata"] = dict(e["meta"])
        if v10:
            result = {"task": body}
        elif e["kindless"]:
            result = body
        else:
            result = {**body, "kind": "task"}
    return {"jsonrpc": "2.0", "id": "1", "result": result}


@st.composite
def sequences(draw) -> list[tuple]:
    """Steps: mostly stream frames, sometimes what the app does between frames."""
    universe = draw(universes())
    out = []
    for _ in range(draw(st.integers(4, 30))):
        roll = draw(st.integers(0, 9))
        if roll < 7:
            out.append(("frame", draw(events(universe)), draw(st.booleans())))
        elif roll < 9:
            out.append(("user", pick(draw, universe, role="user"), draw(st.booleans())))
        elif draw(st.booleans()):
            out.append(("end", draw(st.sampled_from(["completed", "failed"])), False))
        else:
            out.append(("error", draw(texts), False))
    return out


def run(conv: Conversation, step: tuple) -> Any:
    what, payload, v10 = step
    if what == "frame":
        frame = json.loads(json.dumps(wire(payload, v10)))  # exactly what a parser would hand over
        return conv.apply(classify_frame(frame))
    if what == "user":
        return conv.add_user_message(wire_message(payload, v10))
    if what == "end":
        return conv.end_turn(payload)
    return conv.add_error(payload)


def shown_ids(conv: Conversation) -> set[str]:
    return {mid for item in conv.items for mid in item.message_ids}


def snapshot(conv: Conversation) -> tuple:
    items = tuple(
        (
            item.key,
            item.kind,
            item.role,
            item.text,
            item.invocation_id,
            item.task_id,
            item.rev,
            item.streaming,
            tuple(item.message_ids),
            tuple(
                (
                    t.call_id,
                    t.name,
                    json.dumps(t.args, sort_keys=True),
                    json.dumps(t.result, sort_keys=True),
                    t.has_result,
                )
                for t in item.tools
            ),
        )
        for item in conv.items
    )
    return items, conv.turn_state, conv.current_task_id, conv.input_task_id, frozenset(conv.message_ids())


def is_replace(step: tuple) -> bool:
    """A Task carrying a history, or one flagged as the effective history (which may be empty:
    a rewind to before the first turn)."""
    what, payload, _ = step
    return what == "frame" and payload["k"] == "task" and (bool(payload["history"]) or is_whole(payload))


def is_whole(task: dict[str, Any]) -> bool:
    return task["meta"].get(EFFECTIVE_HISTORY_KEY) is True or (task["id"] == "s1" and bool(task["history"]))


# -- properties ------------------------------------------------------------------------------------
@SETTINGS
@given(sequences())
def test_any_sequence_applies_without_raising(seq):
    conv = Conversation("s1")
    for step in seq:
        change = run(conv, step)
        assert change is not None
        assert change.first is None or 0 <= change.first <= len(conv.items)
    # everything stored is shown, and everything shown can be drawn
    assert shown_ids(conv) == conv.message_ids()
    assert len({id(i) for i in conv.items}) == len(conv.items)
    assert all(len(item.message_ids) == len(set(item.message_ids)) for item in conv.items)
    for item in conv.items:
        assert isinstance(item.text, str)
        item.tools  # noqa: B018 - building the tool pairs must not raise either


@SETTINGS
@given(sequences())
def test_no_stored_message_is_lost_except_by_a_task_replace(seq):
    conv = Conversation("s1")
    for step in seq:
        before_ids = shown_ids(conv)
        owners = {mid: item.task_id for item in conv.items for mid in item.message_ids}
        run(conv, step)
        lost = before_ids - shown_ids(conv)
        if not is_replace(step):
            assert not lost, (step, lost)
            continue
        payload = step[1]
        if not is_whole(payload):
            # a scoped replace only touches its own task and the messages it carries again
            history_ids = {m["mid"] for m in payload["history"] if m["mid"]}
            assert all(owners[mid] == payload["id"] or mid in history_ids for mid in lost), (step, lost, owners)


@SETTINGS
@given(sequences(), st.data())
def test_truncate_then_rollback_restores_the_view_exactly(seq, data):
    conv = Conversation("s1")
    for step in seq:
        run(conv, step)
    invocations = sorted({i.invocation_id for i in conv.items if i.invocation_id})
    if not invocations:
        return
    target = data.draw(st.sampled_from(invocations))
    before = snapshot(conv)
    token, change = conv.truncate_before(target)
    assert all(i.invocation_id != target for i in conv.items)
    assert change.first == len(conv.items)
    assert snapshot(conv)[0] == before[0][: len(conv.items)]
    conv.rollback(token)
    assert snapshot(conv) == before


@SETTINGS
@given(sequences(), st.data())
def test_truncated_view_is_usable_and_rollback_after_local_additions_is_exact(seq, data):
    """After a truncate the view takes new local messages (rewind-and-send shows the new text);
    rolling back drops them and restores the pre-truncate view exactly."""
    conv = Conversation("s1")
    for step in seq:
        run(conv, step)
    invocations = sorted({i.invocation_id for i in conv.items if i.invocation_id})
    if not invocations:
        return
    before = snapshot(conv)
    token, _ = conv.truncate_before(data.draw(st.sampled_from(invocations)))
    conv.add_user_message({"messageId": "fresh-1", "role": "user", "parts": [{"kind": "text", "text": "again"}]})
    conv.add_error("connection dropped")
    conv.rollback(token)
    assert snapshot(conv) == before
