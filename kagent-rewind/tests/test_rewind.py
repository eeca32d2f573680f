"""The add-on in the real kagent-adk 0.10.4 app (local mode), over loopback HTTP."""

from __future__ import annotations

import threading
import time
import uuid
from typing import Any

import httpx
import pytest

from echo_agent import (
    HELD,
    Served,
    adk_session,
    build_app,
    kagent_app,
    merged_messages,
    message,
    request_handler,
    rpc,
    serve,
    stored_tasks,
    stream,
    text_of,
)
from kagent_rewind import contract, enable_rewind, rewind_lifespan
from kagent_rewind.executor import RewindExecutor

KEY = contract.REWIND_METADATA_KEY


def new_session() -> str:
    return f"s-{uuid.uuid4().hex[:8]}"


def answer(results: list[dict[str, Any]]) -> str:
    """The turn's answer: its artifact's text (kagent sends the last agent text as the artifact)."""
    texts = [text_of(r["artifact"]) for r in results if r["kind"] == "artifact-update"]
    assert texts, f"no answer in {results}"
    return texts[-1]


def turn(served: Served, sid: str, text: str) -> tuple[str, str]:
    """Send one turn; its answer and invocation id."""
    results = stream(served.url, message(text, sid))
    final = results[-1]
    assert final["kind"] == "status-update" and final["final"] and final["status"]["state"] == "completed", final
    return answer(results), final["metadata"]["kagent_invocation_id"]


def three_turns(served: Served, sid: str) -> list[str]:
    invocations = []
    for text in ("first", "weather in Oslo", "third"):
        reply, inv = turn(served, sid, text)
        invocations.append(inv)
    assert reply == "You said: third (turn 3; history: ['first', 'weather in Oslo', 'third']; weather_calls=1)"
    return invocations


def rewind(served: Served, sid: str, before: Any, text: str = "") -> list[dict[str, Any]]:
    return stream(served.url, message(text, sid, **{KEY: before}))


def user_texts(messages: list[dict[str, Any]]) -> list[str]:
    return [text_of(m) for m in messages if m["role"] == "user"]


def snapshot(served: Served, sid: str) -> tuple[Any, ...]:
    session = adk_session(served, sid)
    events = [(e.id, e.invocation_id) for e in session.events] if session else None
    return events, dict(session.state) if session else None, stored_tasks(served, sid)


# -- the agent card --------------------------------------------------------------------------------
def test_card_advertises_rewind_only_with_the_add_on(served: Served, stock: Served) -> None:
    card = httpx.get(served.url + ".well-known/agent-card.json").json()
    extensions = card["capabilities"]["extensions"]
    assert extensions == [
        {
            "uri": "urn:rewindtui:ext:rewind:v1",
            "description": extensions[0]["description"],
            "params": {"rewind": ["a2a"], "metadata_key": "kagent_rewind_before_invocation_id", "redo": True},
            "required": False,
        }
    ]
    plain = httpx.get(stock.url + ".well-known/agent-card.json").json()
    assert "extensions" not in plain["capabilities"]


# -- rewind ----------------------------------------------------------------------------------------
def test_rewind_before_turn_two_takes_history_and_state_back(served: Served) -> None:
    sid = new_session()
    invocations = three_turns(served, sid)
    before = stored_tasks(served, sid)
    turn_one = [m for m in merged_messages(before) if m.get("taskId") == before[0]["id"]]
    events_before = len(adk_session(served, sid).events)
    assert adk_session(served, sid).state["weather_calls"] == 1

    results = rewind(served, sid, invocations[1])

    assert len(results) == 1  # one full Task, nothing else
    task = results[0]
    assert task["kind"] == "task" and task["status"]["state"] == "completed" and task["contextId"] == sid
    meta = task["metadata"]
    assert meta[contract.EFFECTIVE_HISTORY_KEY] is True
    assert meta[contract.REWOUND_BEFORE_KEY] == invocations[1]
    # the original messages of turn 1, with their messageIds; the user's now names its invocation
    assert [m["messageId"] for m in task["history"]] == [m["messageId"] for m in turn_one]
    assert [text_of(m) for m in task["history"]] == ["first", "You said: first (turn 1; history: ['first']; weather_calls=0)"]
    assert {m["metadata"]["kagent_invocation_id"] for m in task["history"]} == {invocations[0]}
    # ADK: one rewind event appended (nothing deleted), its id reported, the tool's state gone
    session = adk_session(served, sid)
    assert len(session.events) == events_before + 1
    assert session.events[-1].actions.rewind_before_invocation_id == invocations[1]
    assert meta[contract.REWIND_INVOCATION_KEY] == session.events[-1].invocation_id
    assert session.state.get("weather_calls") is None
    # the model sees the history without turns 2-3, and the state went back
    reply, _ = turn(served, sid, "again")
    assert reply == "You said: again (turn 2; history: ['first', 'again']; weather_calls=0)"


def test_reload_shows_the_rewound_view(served: Served) -> None:
    sid = new_session()
    invocations = three_turns(served, sid)
    rewind_task = rewind(served, sid, invocations[1])[0]
    # tasks/get of the rewind's Task: the effective history
    got = rpc(served.url, "tasks/get", {"id": rewind_task["id"]})["result"]
    assert got["history"] == rewind_task["history"] and got["metadata"][contract.EFFECTIVE_HISTORY_KEY] is True
    # everything stored for the session (what a controller lists): the rewound view
    tasks = stored_tasks(served, sid)
    assert user_texts(merged_messages(tasks)) == ["first"]
    # the rewound turns' tasks keep their messages, out of the history
    second = tasks[1]
    assert second["history"] == [] and "artifacts" not in second
    assert user_texts(second["metadata"][contract.REWOUND_HISTORY_KEY])[:1] == ["weather in Oslo"]
    assert second["metadata"][contract.REWOUND_BY_KEY] == [rewind_task["id"]]
    assert rpc(served.url, "tasks/get", {"id": second["id"]})["result"]["history"] == []
    turn(served, sid, "again")
    assert user_texts(merged_messages(stored_tasks(served, sid))) == ["first", "again"]


def test_rewind_and_send(served: Served) -> None:
    sid = new_session()
    invocations = three_turns(served, sid)
    results = rewind(served, sid, invocations[1], "weather in Lima")

    first = results[0]
    assert first["kind"] == "task" and first["status"]["state"] == "working"
    assert first["metadata"][contract.EFFECTIVE_HISTORY_KEY] is True
    assert user_texts(first["history"]) == ["first"]
    assert all(r.get("taskId", r.get("id")) == first["id"] for r in results)  # one task, one stream
    final = results[-1]
    assert final["kind"] == "status-update" and final["final"] and final["status"]["state"] == "completed"
    assert answer(results) == "Tool get_weather returned: {'city': 'Lima', 'forecast': 'sunny', 'call_no': 1} (weather_calls=1)"
    new_invocation = final["metadata"]["kagent_invocation_id"]
    assert new_invocation not in invocations
    # the stored task holds the whole effective history; the user's message without the control key
    got = rpc(served.url, "tasks/get", {"id": first["id"]})["result"]
    assert user_texts(got["history"]) == ["first", "weather in Lima"]
    assert all(KEY not in (m.get("metadata") or {}) for m in got["history"])
    assert user_texts(merged_messages(stored_tasks(served, sid))) == ["first", "weather in Lima"]
    reply, _ = turn(served, sid, "next")
    assert reply == "You said: next (turn 3; history: ['first', 'weather in Lima', 'next']; weather_calls=1)"


def test_rewinds_one_after_another(served: Served) -> None:
    sid = new_session()
    invocations = three_turns(served, sid)
    r1 = rewind(served, sid, invocations[2])[0]
    assert user_texts(r1["history"]) == ["first", "weather in Oslo"]
    reply, fourth = turn(served, sid, "fourth")
    assert "history: ['first', 'weather in Oslo', 'fourth']" in reply
    r2 = rewind(served, sid, invocations[1])[0]
    assert user_texts(r2["history"]) == ["first"]
    # the first rewind's Task no longer shows turn 2 either
    tasks = {t["id"]: t for t in stored_tasks(served, sid)}
    assert user_texts(tasks[r1["id"]]["history"]) == ["first"]
    assert user_texts(merged_messages(list(tasks.values()))) == ["first"]
    # then the whole conversation
    r3 = rewind(served, sid, invocations[0])[0]
    assert r3["history"] == [] and r3["metadata"][contract.EFFECTIVE_HISTORY_KEY] is True
    assert merged_messages(stored_tasks(served, sid)) == []
    assert turn(served, sid, "anew")[0] == "You said: anew (turn 1; history: ['anew']; weather_calls=0)"
    # a turn rewound earlier stays refused
    assert rewind(served, sid, fourth)[0]["metadata"][contract.ERROR_CODE_KEY] == "invalid_invocation"


def test_a_store_that_fails_after_the_rewind_is_reported_not_hidden(served: Served) -> None:
    """Fault injection: the stored tasks cannot be rewritten once ADK has rewound the session. The
    answer is still the effective history (the session is rewound), and it says what lags."""
    sid = new_session()
    invocations = three_turns(served, sid)
    store = request_handler(served).task_store.inner
    turn_tasks = {t["id"] for t in stored_tasks(served, sid)}
    real_save = store.save

    async def failing_save(task: Any, context: Any = None) -> None:
        if task.id in turn_tasks:
            raise OSError("controller unreachable")
        await real_save(task, context)

    store.save = failing_save
    try:
        task = rewind(served, sid, invocations[1])[0]
    finally:
        del store.save
    assert task["kind"] == "task" and user_texts(task["history"]) == ["first"]
    assert "controller unreachable" in task["metadata"][contract.STORE_ERROR_KEY]
    assert turn(served, sid, "again")[0] == "You said: again (turn 2; history: ['first', 'again']; weather_calls=0)"


# -- refusals --------------------------------------------------------------------------------------
REFUSALS = {
    "unknown": (lambda inv, s: "e-not-an-invocation", "invalid_invocation", "is not an invocation"),
    "header_update": (lambda inv, s: "header_update", "invalid_invocation", "system event"),
    "already rewound": (lambda inv, s: inv[2], "invalid_invocation", "already rewound"),
    "empty id": (lambda inv, s: "", "bad_request", "non-empty string"),
    "not a string": (lambda inv, s: 42, "bad_request", "non-empty string"),
}


@pytest.fixture(scope="module")
def rewound_session(served: Served) -> tuple[str, list[str]]:
    """A session of three turns, rewound before turn 3."""
    sid = new_session()
    invocations = three_turns(served, sid)
    assert rewind(served, sid, invocations[2])[0]["kind"] == "task"
    return sid, invocations


@pytest.mark.parametrize("case", list(REFUSALS))
def test_refusals_change_nothing(served: Served, rewound_session: tuple[str, list[str]], case: str) -> None:
    sid, invocations = rewound_session
    target_of, code, why = REFUSALS[case]
    before = snapshot(served, sid)
    target = target_of(invocations, adk_session(served, sid))

    results = rewind(served, sid, target, "and this text is not sent" if case == "unknown" else "")

    assert len(results) == 1
    refusal = results[0]
    assert refusal["kind"] == "status-update" and refusal["final"] and refusal["status"]["state"] == "failed"
    assert refusal["metadata"] == {contract.ERROR_CODE_KEY: code}
    assert why in text_of(refusal["status"]["message"])
    assert snapshot(served, sid) == before  # ADK events, state and the stored tasks
    assert "error" in rpc(served.url, "tasks/get", {"id": refusal["taskId"]})  # no task was stored


def test_refusal_of_an_unknown_session_creates_none(served: Served) -> None:
    sid = new_session()
    refusal = rewind(served, sid, "e-anything")[0]
    assert refusal["status"]["state"] == "failed" and refusal["metadata"] == {contract.ERROR_CODE_KEY: "not_found"}
    assert adk_session(served, sid) is None and stored_tasks(served, sid) == []


def test_rewind_is_refused_while_a_turn_runs(served: Served) -> None:
    sid = new_session()
    _, inv = turn(served, sid, "first")
    HELD.clear()
    running: list[list[dict[str, Any]]] = []
    worker = threading.Thread(target=lambda: running.append(stream(served.url, message("hold on", sid))))
    worker.start()
    deadline = time.monotonic() + 10
    while not HELD and time.monotonic() < deadline:
        time.sleep(0.01)
    assert HELD, "the held turn did not reach the model"
    before = snapshot(served, sid)
    refusal = rewind(served, sid, inv)[0]
    assert refusal["metadata"] == {contract.ERROR_CODE_KEY: "session_busy"}
    assert snapshot(served, sid) == before
    served.loop.call_soon_threadsafe(HELD[-1].set)
    worker.join(10)
    assert answer(running[0]).startswith("You said: hold on (turn 2;")
    assert rewind(served, sid, inv)[0]["kind"] == "task"  # free again


# -- streaming mode: text deltas are stored locally, and go with their turn ------------------------
def test_streamed_deltas_are_left_out_and_rewound_with_their_turn() -> None:
    served = serve(lambda url: build_app(url, stream=True))
    try:
        sid = new_session()
        invocations = three_turns(served, sid)
        stored = stored_tasks(served, sid)
        assert any((m.get("metadata") or {}).get("kagent_adk_partial") is True for m in stored[2]["history"])
        task = rewind(served, sid, invocations[2])[0]
        assert all((m.get("metadata") or {}).get("kagent_adk_partial") is not True for m in task["history"])
        assert user_texts(task["history"]) == ["first", "weather in Oslo"]
        assert stored_tasks(served, sid)[2]["history"] == []
    finally:
        served.stop()


# -- enabling ----------------------------------------------------------------------------------------
def test_enable_on_the_kagent_app_and_twice() -> None:
    app = kagent_app()
    assert enable_rewind(enable_rewind(app)) is app
    built = app.build(local=True)
    handler = request_handler_of(built)
    assert isinstance(handler.agent_executor, RewindExecutor)
    assert not isinstance(handler.agent_executor.inner, RewindExecutor)
    assert [e.uri for e in app.agent_card.capabilities.extensions] == [contract.EXTENSION_URI]
    enable_rewind(built)
    assert not isinstance(request_handler_of(built).agent_executor.inner, RewindExecutor)
    with pytest.raises(ValueError, match="no A2A JSON-RPC application"):
        from fastapi import FastAPI

        enable_rewind(FastAPI())


def request_handler_of(app: Any) -> Any:
    from kagent_rewind.enable import a2a_applications

    return a2a_applications(app)[0].handler.request_handler


def test_lifespan_enables_rewind_at_startup() -> None:
    # `kagent-adk run` passes an agent package's `lifespan` to KAgentApp like this
    served = serve(lambda url: kagent_app(url, lifespan=rewind_lifespan).build(local=True))
    try:
        card = httpx.get(served.url + ".well-known/agent-card.json").json()
        assert [e["uri"] for e in card["capabilities"]["extensions"]] == [contract.EXTENSION_URI]
        sid = new_session()
        _, inv = turn(served, sid, "first")
        assert rewind(served, sid, inv)[0]["metadata"][contract.EFFECTIVE_HISTORY_KEY] is True
    finally:
        served.stop()


# -- without the add-on ------------------------------------------------------------------------------
def test_stock_kagent_runs_a_control_message_as_an_ordinary_turn(stock: Served) -> None:
    """Why a client must only send rewind where the card advertises it (and what it would cost)."""
    sid = new_session()
    invocations = three_turns(stock, sid)
    events = len(adk_session(stock, sid).events)
    results = rewind(stock, sid, invocations[1])
    assert not any(r["kind"] == "task" for r in results)
    assert len(adk_session(stock, sid).events) > events  # a turn ran, nothing went back
    reply, _ = turn(stock, sid, "again")
    assert "'first', 'weather in Oslo', 'third'" in reply and "weather_calls=1" in reply
    assert request_handler(stock).agent_executor.__class__.__name__ == "A2aAgentExecutor"


# -- redo ------------------------------------------------------------------------------------------
def test_redo_undoes_the_last_rewind_and_only_that(served: Served) -> None:
    """The control message naming the rewind's own event brings back what it took: the model's
    history and state (ADK's rewind_async before the rewind event) and the stored tasks."""
    sid = new_session()
    invocations = three_turns(served, sid)
    whole = [m["messageId"] for m in merged_messages(stored_tasks(served, sid))]
    answer = rewind(served, sid, invocations[1])[0]
    rewind_event = answer["metadata"][contract.REWIND_INVOCATION_KEY]
    assert rewind_event and user_texts(answer["history"]) == ["first"]
    redo = rewind(served, sid, rewind_event)[0]
    assert redo["kind"] == "task" and redo["metadata"][contract.REDO_OF_KEY] == answer["id"]
    assert redo["metadata"][contract.EFFECTIVE_HISTORY_KEY] is True
    assert [m["messageId"] for m in redo["history"]] == whole
    turns = [t for t in stored_tasks(served, sid) if not (t.get("metadata") or {}).get(contract.EFFECTIVE_HISTORY_KEY)]
    assert [m["messageId"] for m in merged_messages(turns)] == whole  # the stored turns read back whole
    assert not any(contract.REWOUND_HISTORY_KEY in (t.get("metadata") or {}) for t in turns)
    reply = turn(served, sid, "fourth")[0]
    assert reply == "You said: fourth (turn 4; history: ['first', 'weather in Oslo', 'third', 'fourth']; weather_calls=1)"
    # that rewind is no longer the last thing done: a second redo is refused and changes nothing
    before = snapshot(served, sid)
    refusal = rewind(served, sid, rewind_event)[0]
    assert refusal["status"]["state"] == "failed" and refusal["metadata"] == {contract.ERROR_CODE_KEY: "invalid_invocation"}
    assert "nothing to redo" in text_of(refusal["status"]["message"])
    assert snapshot(served, sid) == before
