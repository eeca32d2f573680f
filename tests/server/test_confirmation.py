"""A tool that asks for the user's approval (ADK's tool confirmation), on the wire as kagent-adk
0.10.4 sends it (``kagent/adk/_agent_executor.py`` ``_handle_request``,
``converters/event_converter.py``): the turn ends ``input-required`` with the
``adk_request_confirmation`` call as its status message; the answer is a message with the same
``taskId`` and a ``{"decision_type": ...}`` data part, and the task (and ADK's invocation) go on
from there. Both dialects; approve, reject, refusals, rewind across a confirmed turn, restart."""

from __future__ import annotations

import uuid
from typing import Any

import pytest
from srvkit import Turn, normalize_result, texts

from rewindtui.server import EmbeddedServer

CONFIRM = "adk_request_confirmation"


def new_sid() -> str:
    return f"s-{uuid.uuid4().hex[:12]}"


def answer_message(a2a, task_id: str, context_id: str | None, decision: str) -> dict[str, Any]:
    """The answer as rewindtui (and kagent's web UI) sends it: the decision, then a few words."""
    words = "Approved" if decision == "approve" else "Rejected"
    if a2a.dialect == "0.3":
        parts: list[dict[str, Any]] = [
            {"kind": "data", "data": {"decision_type": decision}},
            {"kind": "text", "text": words},
        ]
        message = {"kind": "message", "role": "user", "messageId": str(uuid.uuid4()), "parts": parts, "taskId": task_id}
    else:
        parts = [{"data": {"decision_type": decision}}, {"text": words}]
        message = {"role": "ROLE_USER", "messageId": str(uuid.uuid4()), "parts": parts, "taskId": task_id}
    if context_id:
        message["contextId"] = context_id
    return message


def stream_message(a2a, message: dict[str, Any]) -> list[dict[str, Any]]:
    frames = a2a.post_stream(a2a.rpc("message/stream", "SendStreamingMessage", {"message": message}))
    assert all("error" not in f for f in frames), frames
    return [normalize_result(f["result"]) for f in frames]


def stream_error(a2a, message: dict[str, Any]) -> dict[str, Any]:
    frames = a2a.post_stream(a2a.rpc("message/stream", "SendStreamingMessage", {"message": message}))
    assert len(frames) == 1 and "error" in frames[0], frames
    return frames[0]["error"]


def data_parts(message: dict[str, Any]) -> list[dict[str, Any]]:
    return [p for p in message.get("parts", []) if p.get("kind") == "data"]


def ask(a2a, sid: str, text: str = "please delete notes.txt") -> tuple[Turn, dict[str, Any]]:
    """A turn whose tool asks for approval: the turn, and the question (the final status message)."""
    events = a2a.stream(text, sid)
    turn = Turn(events)
    assert turn.final["kind"] == "status-update" and turn.final["status"]["state"] == "input-required", events
    return turn, turn.final["status"]["message"]


def tool_answer(events: list[dict[str, Any]]) -> str:
    full = [
        e["status"]["message"]
        for e in events
        if e["kind"] == "status-update"
        and "message" in e["status"]
        and not e["status"]["message"]["metadata"].get("kagent_adk_partial")
    ]
    return texts(full[-1]) if full else ""


def test_the_question_is_sent_as_kagent_adk_sends_it(server, make_a2a, dialect):
    a2a = make_a2a(server, dialect)
    sid = new_sid()
    turn, question = ask(a2a, sid)
    kinds = [(e["kind"], e.get("status", {}).get("state")) for e in turn.events]
    assert kinds[0] == ("task", "submitted") and kinds[-1] == ("status-update", "input-required")
    # no answer text, so no artifact; every event between says "working" (kagent's aggregator
    # rewrites the question's own event to working; the final status says input-required)
    assert ("artifact-update", None) not in kinds
    assert all(k == ("status-update", "working") for k in kinds[1:-1])
    calls = [d for m in turn.full_messages for d in data_parts(m)]
    assert [(c["data"]["name"], c["metadata"]["kagent_type"]) for c in calls] == [
        ("delete_file", "function_call"),
        (CONFIRM, "function_call"),
    ]
    assert calls[0]["data"]["args"] == {"name": "notes.txt"}
    assert "kagent_is_long_running" not in calls[0]["metadata"]
    assert calls[1]["metadata"]["kagent_is_long_running"] is True
    # the final status carries the question itself (the same message, the same id)
    assert question["messageId"] == turn.full_messages[-1]["messageId"]
    (asked,) = data_parts(question)
    args = asked["data"]["args"]
    assert args["originalFunctionCall"]["name"] == "delete_file"
    assert args["originalFunctionCall"]["args"] == {"name": "notes.txt"}
    assert args["toolConfirmation"]["hint"] == "Delete notes.txt?" and args["toolConfirmation"]["confirmed"] is False
    # stored as it was sent: GetTask gives the waiting task with its question
    task = a2a.get_task(turn.task_id)
    assert task["status"]["state"] == "input-required"
    assert task["status"]["message"]["messageId"] == question["messageId"]
    assert [m["messageId"] for m in task["history"]] == turn.message_ids


@pytest.mark.parametrize("decision", ["approve", "reject"])
def test_the_answer_resumes_the_same_task_and_invocation(server, make_a2a, dialect, decision):
    a2a = make_a2a(server, dialect)
    sid = new_sid()
    turn, _question = ask(a2a, sid)
    answer = answer_message(a2a, turn.task_id, sid, decision)
    events = stream_message(a2a, answer)
    opening = events[0]
    # the stream opens with the same Task, now working, its history holding the answer
    assert opening["kind"] == "task" and opening["id"] == turn.task_id and opening["status"]["state"] == "working"
    assert [m["messageId"] for m in opening["history"]] == [*turn.message_ids, answer["messageId"]]
    assert opening["history"][-1]["metadata"]["kagent_invocation_id"] == turn.invocation_id
    assert events[-1]["kind"] == "status-update" and events[-1]["status"]["state"] == "completed"
    assert all(e.get("taskId", e.get("id")) == turn.task_id for e in events)
    invocations = {
        e["status"]["message"]["metadata"]["kagent_invocation_id"]
        for e in events[1:]
        if "message" in e.get("status", {})
    }
    assert invocations == {turn.invocation_id}  # one turn, one invocation
    done = "deleted" if decision == "approve" else "rejected"
    reply = tool_answer(events)
    assert reply.startswith("Tool delete_file returned: {") and f"'status': '{done}'" in reply, reply
    task = a2a.get_task(turn.task_id)
    assert task["status"]["state"] == "completed"
    history = task["history"]
    assert [m["messageId"] for m in history[: len(turn.message_ids) + 1]] == [*turn.message_ids, answer["messageId"]]
    assert [d["data"] for d in data_parts(history[len(turn.message_ids)])] == [{"decision_type": decision}]
    # the next turn is an ordinary one, in the same session
    after = Turn(a2a.stream("and now?", sid))
    assert after.final["status"]["state"] == "completed" and after.task_id != turn.task_id


def test_a_waiting_task_takes_only_an_answer_and_nothing_is_stored_otherwise(server, make_a2a, dialect):
    a2a = make_a2a(server, dialect)
    sid = new_sid()
    turn, _question = ask(a2a, sid)
    error = stream_error(a2a, a2a.message("yes, go ahead", sid, task_id=turn.task_id))
    assert error["code"] == -32602 and "decision_type" in error["message"]
    bad = answer_message(a2a, turn.task_id, sid, "approve")
    bad["parts"][0] = (
        {"kind": "data", "data": {"decision_type": "batch"}}
        if a2a.dialect == "0.3"
        else {"data": {"decision_type": "batch"}}
    )
    error = stream_error(a2a, bad)
    assert error["code"] == -32602 and "approve" in error["message"]
    # an answer without the task's id names no question
    error = stream_error(
        a2a, {k: v for k, v in answer_message(a2a, turn.task_id, sid, "approve").items() if k != "taskId"}
    )
    assert error["code"] == -32602 and "taskId" in error["message"]
    task = a2a.get_task(turn.task_id)
    assert task["status"]["state"] == "input-required"
    assert [m["messageId"] for m in task["history"]] == turn.message_ids  # nothing was stored
    # answered once; a second answer finds a finished task
    stream_message(a2a, answer_message(a2a, turn.task_id, sid, "approve"))
    error = stream_error(a2a, answer_message(a2a, turn.task_id, sid, "approve"))
    assert error["code"] == -32004 and "completed" in error["message"]


def test_rewind_across_confirmed_turns_takes_them_back_whole(server, make_a2a, make_api, dialect):
    a2a = make_a2a(server, dialect)
    api = make_api(server)
    sid = new_sid()
    first = Turn(a2a.stream("hello", sid))

    def delete(name: str) -> tuple[Turn, list[dict[str, Any]]]:
        turn, _ = ask(a2a, sid, f"delete {name}")
        return turn, stream_message(a2a, answer_message(a2a, turn.task_id, sid, "approve"))

    second, _ = delete("a.txt")
    third, events = delete("b.txt")
    assert "'deleted_files': ['a.txt', 'b.txt']" in tool_answer(events)
    # rewind before the third: its question and answer go; the state goes back
    rewound = a2a.rewind(sid, third.invocation_id)
    assert [texts(m) for m in rewound[-1]["history"] if m["role"] == "user"] == ["hello", "delete a.txt", "Approved"]
    _, events = delete("c.txt")
    assert "'deleted_files': ['a.txt', 'c.txt']" in tool_answer(events)
    # rewind before the second: only the first turn is left, and no file was ever deleted
    rewound = a2a.rewind(sid, second.invocation_id)
    assert [texts(m) for m in rewound[-1]["history"] if m["role"] == "user"] == ["hello"]
    _, events = delete("d.txt")
    assert "'deleted_files': ['d.txt']" in tool_answer(events)
    # the store's view and the agent's agree
    users = [texts(m) for m in api.merged(sid) if m["role"] == "user"]
    assert users == ["hello", "delete d.txt", "Approved"]
    assert first.invocation_id in {m["metadata"].get("kagent_invocation_id") for m in api.merged(sid)}


@pytest.mark.slow
def test_a_question_still_waits_after_a_restart(tmp_path, http):
    from srvkit import A2A

    sid = new_sid()
    with EmbeddedServer(tmp_path / "data") as srv:
        a2a = A2A(http, srv.agent_url, "1.0")
        turn, _ = ask(a2a, sid, "delete old.log")
    with EmbeddedServer(tmp_path / "data") as srv:
        a2a = A2A(http, srv.agent_url, "1.0")
        assert a2a.get_task(turn.task_id)["status"]["state"] == "input-required"  # not failed by recovery
        events = stream_message(a2a, answer_message(a2a, turn.task_id, sid, "approve"))
        assert "'deleted_files': ['old.log']" in tool_answer(events)
