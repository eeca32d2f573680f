"""rewindtui.a2a: the wire of both dialects read through the raw accessors (what the app uses),
classification of every captured frame, metadata helpers and outgoing serialisation. Pure: no
network."""

from __future__ import annotations

import json
import uuid

import pytest

from captures import load
from rewindtui.a2a import (
    Dialect,
    EventKind,
    classify,
    classify_frame,
    is_a2a_task,
    is_task_like,
    norm_role,
    norm_state,
    outgoing,
    raw,
)
from rewindtui.a2a import metadata as meta
from rewindtui.model import Conversation, Item

KAGENT = "kagent-0.10.4/"
A2A10 = "a2a-1.0/"


def _result(cap_line: str) -> dict:
    return json.loads(cap_line)["result"]


# -- A2A 0.3 -----------------------------------------------------------------------------------
def test_03_status_update_with_tool_call():
    cap = load(KAGENT + "03_turn_with_tool_call.txt")
    event = classify_frame(json.loads(cap.data_lines[2]))
    body = event.body
    assert event.kind is EventKind.STATUS
    assert raw.task_id(body) == "7b62ae33-7cb5-460a-873d-06385979e8dd"
    assert raw.context_id(body) == "s1"
    assert body["final"] is False
    assert norm_state(body["status"]["state"]) == "working"
    message = body["status"]["message"]
    assert raw.role(message) == "agent"
    assert raw.message_id(message) == "4794cba6-c6ab-4826-87b1-a1c3f3676eee"
    assert meta.invocation_id(message) == "e-2da84b7d-b17c-4801-b51b-c2767a95b2ba"
    assert meta.author(message) == "echo_agent"
    assert meta.is_partial(message) is False
    (part,) = raw.parts(message)
    assert raw.part_kind(part) == "data"
    assert meta.tool_type(part) == "function_call"
    assert part["data"] == {
        "id": "adk-7b612f6e-9c4e-4ec5-8c77-123c58dd65a5",
        "args": {"city": "Tokyo"},
        "name": "get_weather",
    }
    assert raw.text_of(message) == ""
    item = Item.from_message(message)
    assert [(t.name, t.args, t.has_result) for t in item.tools] == [("get_weather", {"city": "Tokyo"}, False)]


def test_03_function_response_part_and_artifact_update():
    cap = load(KAGENT + "03_turn_with_tool_call.txt")
    response = _result(cap.data_lines[3])["status"]["message"]
    assert meta.tool_type(raw.parts(response)[0]) == "function_response"
    assert raw.parts(response)[0]["data"]["response"] == {
        "city": "Tokyo",
        "forecast": "sunny",
        "temp_c": 21,
        "call_no": 1,
    }
    # kagent_adk_partial is null here: not partial
    assert meta.is_partial(response) is False

    artifact = classify_frame(json.loads(cap.data_lines[5]))
    assert artifact.kind is EventKind.ARTIFACT and artifact.body["lastChunk"] is True
    assert raw.get(artifact.body["artifact"], "artifactId", "artifact_id") == "bffc6847-779d-49a5-9eca-22bdba5f49f1"
    assert raw.text_of(artifact.body["artifact"]) == (
        "Tool get_weather returned: {'city': 'Tokyo', 'forecast': 'sunny', 'temp_c': 21, 'call_no': 1}"
    )


def test_03_full_task_from_tasks_get():
    event = classify_frame(load(KAGENT + "08_tasks_get.txt").json_body)
    task = event.body
    assert event.kind is EventKind.TASK
    assert task["id"] == "7b62ae33-7cb5-460a-873d-06385979e8dd"
    assert raw.context_id(task) == "s1"
    assert norm_state(task["status"]["state"]) == "completed"
    assert [raw.role(m) for m in raw.history(task)] == ["user", "user", "agent", "agent", "agent"]
    assert [len(raw.parts(a)) for a in task["artifacts"]] == [1]
    assert raw.metadata(task)["kagent_invocation_id"] == "e-2da84b7d-b17c-4801-b51b-c2767a95b2ba"


def test_partial_delta_from_capture_05():
    cap = load(KAGENT + "05_turn_streaming_partials.txt")
    delta = _result(cap.data_lines[2])["status"]["message"]
    full = _result(cap.data_lines[10])["status"]["message"]
    assert (meta.is_partial(delta), raw.text_of(delta)) == (True, "You ")
    assert (meta.is_partial(full), raw.text_of(full)) == (
        False,
        "You said: hello (turn 1; history: ['hello']; weather_calls=0)",
    )


# -- A2A 1.0 -----------------------------------------------------------------------------------
def test_10_task_wrapper_reads_roles_and_states():
    cap = load(A2A10 + "a2a-sdk-1.3.0_SendStreamingMessage_v1.0.txt")
    event = classify_frame(json.loads(cap.data_lines[0]))
    assert event.kind is EventKind.TASK
    task = event.body
    assert task["id"] == "747cac0b-3492-472f-af16-bd53aae90653"
    assert norm_state(task["status"]["state"]) == "submitted"
    (user,) = raw.history(task)
    assert (raw.role(user), raw.message_id(user), raw.text_of(user)) == ("user", "m-1", "hello")
    assert raw.part_kind(raw.parts(user)[0]) == "text"

    status = classify_frame(json.loads(cap.data_lines[3]))
    assert status.kind is EventKind.STATUS
    assert norm_state(status.body["status"]["state"]) == "completed"
    assert "final" not in status.body  # 1.0 has no final: the stream just ends

    artifact = classify_frame(json.loads(cap.data_lines[2]))
    assert artifact.kind is EventKind.ARTIFACT
    assert artifact.body["artifact"]["name"] == "echo"
    assert raw.text_of(artifact.body["artifact"]) == "echo: hello"


@pytest.mark.parametrize(
    "wire, norm",
    [
        ("TASK_STATE_SUBMITTED", "submitted"),
        ("TASK_STATE_WORKING", "working"),
        ("TASK_STATE_INPUT_REQUIRED", "input-required"),
        ("TASK_STATE_COMPLETED", "completed"),
        ("TASK_STATE_CANCELED", "canceled"),
        ("TASK_STATE_FAILED", "failed"),
        ("TASK_STATE_REJECTED", "rejected"),
        ("TASK_STATE_AUTH_REQUIRED", "auth-required"),
        ("input-required", "input-required"),
        ("completed", "completed"),
    ],
)
def test_states_normalise(wire, norm):
    assert norm_state(wire) == norm
    conv = Conversation("c")
    conv.apply(classify({"taskId": "t", "contextId": "c", "status": {"state": wire}}))
    assert conv.turn_state == norm


@pytest.mark.parametrize(
    "wire, norm", [("ROLE_USER", "user"), ("ROLE_AGENT", "agent"), ("user", "user"), ("agent", "agent")]
)
def test_roles_normalise(wire, norm):
    assert norm_role(wire) == norm
    assert Item.from_message({"messageId": "m", "role": wire, "parts": []}).role == norm


def test_10_kindless_parts_text_data_url_raw():
    m = {
        "messageId": "m-9",
        "role": "ROLE_AGENT",
        "parts": [
            {"text": "see attached"},
            {"data": {"rows": 3}, "mediaType": "application/json"},
            {"url": "https://example.invalid/report.pdf", "mediaType": "application/pdf", "filename": "report.pdf"},
            {"raw": "aGVsbG8=", "mediaType": "text/plain", "filename": "hello.txt"},
        ],
    }
    assert [raw.part_kind(p) for p in m["parts"]] == ["text", "data", "file", "file"]
    assert raw.text_of(m) == "see attached"
    # what is not text or a tool call is kept, whole, to be shown
    assert Item.from_message(m).other_parts == m["parts"][1:]


def test_03_file_part_with_kind():
    p = {"kind": "file", "file": {"uri": "file:///x", "mimeType": "image/png", "name": "x.png"}}
    assert raw.part_kind(p) == "file"
    assert Item.from_message({"kind": "message", "messageId": "m", "role": "agent", "parts": [p]}).other_parts == [p]


def test_snake_case_and_camel_case_read_the_same():
    camel = {
        "kind": "status-update",
        "taskId": "t1",
        "contextId": "c1",
        "final": True,
        "status": {
            "state": "completed",
            "message": {
                "messageId": "m1",
                "role": "agent",
                "contextId": "c1",
                "taskId": "t1",
                "parts": [{"kind": "text", "text": "ok"}],
            },
        },
    }
    snake = {
        "task_id": "t1",
        "context_id": "c1",
        "final": True,
        "status": {
            "state": "completed",
            "message": {
                "message_id": "m1",
                "role": "agent",
                "context_id": "c1",
                "task_id": "t1",
                "parts": [{"kind": "text", "text": "ok"}],
            },
        },
    }
    assert classify(camel).kind is classify(snake).kind is EventKind.STATUS
    assert raw.task_id(snake) == raw.task_id(camel) == "t1"
    assert raw.context_id(snake) == raw.context_id(camel) == "c1"
    assert raw.message_id(snake["status"]["message"]) == raw.message_id(camel["status"]["message"]) == "m1"
    views = []
    for body in (camel, snake):
        conv = Conversation("c1")
        conv.apply(classify(body))
        views.append([(i.role, i.text, i.message_ids, i.task_id) for i in conv.items])
    assert views[0] == views[1] == [("agent", "ok", ["m1"], "t1")]
    assert raw.get({"artifact_id": "a1"}, "artifactId", "artifact_id") == "a1"


def test_unknown_part_kinds_are_kept_to_be_shown():
    parts = [{"kind": "hologram", "beam": 3}, {"somethingElse": True}, "bare"]
    assert [raw.part_kind(p) for p in parts] == ["unknown", "unknown", "unknown"]
    item = Item.from_message({"messageId": "m", "role": "agent", "parts": parts})
    assert item.other_parts == parts


def test_json_rpc_error_is_shown_in_one_line():
    event = classify_frame(load(KAGENT + "09_tasks_get_unknown.txt").json_body)
    assert event.kind is EventKind.ERROR
    assert (event.body["code"], event.body["message"]) == (-32001, "Task not found")
    conv = Conversation("s1")
    conv.apply(event)
    (error,) = conv.items
    assert error.text == "JSON-RPC error -32001: Task not found"
    assert conv.turn_state == "failed"


# -- classification of every captured frame -----------------------------------------------------
S, A, T, E = EventKind.STATUS, EventKind.ARTIFACT, EventKind.TASK, EventKind.ERROR

# Read off the captures by hand: the sequence of frame kinds in each.
CAPTURE_KINDS = {
    KAGENT + "02_turn_plain_text.txt": [S, S, S, A, S],
    KAGENT + "03_turn_with_tool_call.txt": [S, S, S, S, S, A, S],
    KAGENT + "04_turn_three.txt": [S, S, S, A, S],
    # submitted, working, 8 deltas, full message, artifact, completed
    KAGENT + "05_turn_streaming_partials.txt": [S, S] + [S] * 8 + [S, A, S],
    # submitted, working, call, response, 11 deltas, full message, artifact, completed
    KAGENT + "06_turn_streaming_with_tool.txt": [S, S, S, S] + [S] * 11 + [S, A, S],
    KAGENT + "07_failed_no_parts.txt": [S, S, S],
    KAGENT + "11_continue_completed_task_error.txt": [E],
    KAGENT + "12_rewind_key_ignored_by_stock_server.txt": [S, S, S, A, S],
    A2A10 + "a2a-sdk-0.3.26_message_stream.txt": [T, S, A, S],
    A2A10 + "a2a-sdk-1.3.0_message_stream_v0.3_compat.txt": [T, S, A, S],
    A2A10 + "a2a-sdk-1.3.0_SendStreamingMessage_v1.0.txt": [T, S, A, S],
}


@pytest.mark.parametrize("name", sorted(CAPTURE_KINDS))
def test_classify_every_stream_capture(name):
    cap = load(name)
    events = [classify_frame(json.loads(line)) for line in cap.data_lines]
    assert [e.kind for e in events] == CAPTURE_KINDS[name]
    for e in events:
        # every classified frame is an object of its kind, and the JSON-RPC id is kept
        assert isinstance(e.body, dict)
        assert e.rpc_id == json.loads(cap.data_lines[0])["id"]


def test_http_200_sse_error_frame_is_an_error_event():
    cap = load(KAGENT + "11_continue_completed_task_error.txt")
    assert cap.status == 200 and cap.headers["content-type"].startswith("text/event-stream")
    (line,) = cap.data_lines
    event = classify_frame(json.loads(line))
    assert event.kind is EventKind.ERROR
    assert event.body == {
        "code": -32602,
        "message": "Task 36af6b91-36cc-446c-b644-5f9c4e8529ca is in terminal state: completed",
    }
    assert event.rpc_id == "13"


@pytest.mark.parametrize("name", [KAGENT + "08_tasks_get.txt", KAGENT + "10_message_send_nonstream.txt"])
def test_classify_non_stream_task_results(name):
    event = classify_frame(load(name).json_body)
    assert event.kind is EventKind.TASK and event.is_task
    assert is_a2a_task(event.body)


def test_task_like_without_kind():
    body = load(KAGENT + "08_tasks_get.txt").json_body["result"]
    body = {k: v for k, v in body.items() if k != "kind"}
    assert is_task_like(body) and not is_a2a_task(body)
    event = classify(body)
    assert event.kind is EventKind.TASK_LIKE and event.is_task
    # contextId alone is enough; snake_case too
    assert is_task_like({"context_id": "c", "history": [{"messageId": "m"}]})
    # empty history, no ids, or a kind: not task-like
    assert not is_task_like({"id": "t", "history": []})
    assert not is_task_like({"history": [{"messageId": "m"}]})
    assert not is_task_like({"id": "t", "history": [{}], "kind": "task"})
    # a 1.0 task wrapper with an empty history is still a full task
    assert classify({"task": {"id": "t", "history": []}}).kind is EventKind.TASK


def test_classify_message_in_both_dialects():
    m03 = {"kind": "message", "messageId": "m", "role": "agent", "parts": [{"kind": "text", "text": "hi"}]}
    m10 = {"message": {"messageId": "m", "role": "ROLE_AGENT", "parts": [{"text": "hi"}]}}
    e03, e10 = classify(m03), classify(m10)
    assert e03.kind is e10.kind is EventKind.MESSAGE
    one, other = Item.from_message(e03.body), Item.from_message(e10.body)
    assert (
        (one.role, one.text, one.message_ids) == (other.role, other.text, other.message_ids) == ("agent", "hi", ["m"])
    )
    # the 1.0 wrapper is unwrapped
    assert e10.body == m10["message"]


def test_classify_status_artifact_wrappers_and_bare_10_objects():
    assert (
        classify({"statusUpdate": {"taskId": "t", "status": {"state": "TASK_STATE_WORKING"}}}).kind is EventKind.STATUS
    )
    assert (
        classify({"artifactUpdate": {"taskId": "t", "artifact": {"artifactId": "a", "parts": []}}}).kind
        is EventKind.ARTIFACT
    )
    assert classify({"taskId": "t", "status": {"state": "TASK_STATE_WORKING"}}).kind is EventKind.STATUS
    assert classify({"taskId": "t", "artifact": {"artifactId": "a", "parts": []}}).kind is EventKind.ARTIFACT


@pytest.mark.parametrize(
    "payload",
    [
        None,
        42,
        "text",
        [],
        {},
        {"kind": "hologram", "id": "x"},
        {"unexpected": {"shape": True}},
        {"task": "not a dict"},
        {"task": {}, "message": {}},  # two wrapper keys: ambiguous
        json.loads(load(KAGENT + "01_agent_card.txt").body),  # an agent card is not a stream event
    ],
)
def test_classify_unknown(payload):
    event = classify(payload)
    assert event.kind is EventKind.UNKNOWN
    assert event.body is payload


def test_classify_frame_error_shapes():
    assert (
        classify_frame({"jsonrpc": "2.0", "id": 1, "error": {"code": -32600, "message": "bad"}}).kind is EventKind.ERROR
    )
    text_error = classify_frame({"error": "plain text"})
    assert text_error.kind is EventKind.ERROR and text_error.body == {"message": "plain text"}
    assert classify_frame({"jsonrpc": "2.0", "id": 1, "result": None}).kind is EventKind.UNKNOWN


# -- metadata helpers --------------------------------------------------------------------------
def test_adk_prefix_is_read_before_kagent():
    m = {
        "metadata": {
            "adk_invocation_id": "e-adk",
            "kagent_invocation_id": "e-kagent",
            "adk_author": "a",
            "kagent_author": "k",
        }
    }
    assert meta.invocation_id(m) == "e-adk"
    assert meta.author(m) == "a"
    only_kagent = {"metadata": {"adk_invocation_id": None, "kagent_invocation_id": "e-kagent"}}
    assert meta.invocation_id(only_kagent) == "e-kagent"
    assert meta.value({"adk_type": "function_call", "kagent_type": "function_response"}, "type") == "function_call"
    assert meta.value(None, "type") is None


def test_user_message_inherits_invocation_id_from_task():
    task = load(KAGENT + "08_tasks_get.txt").json_body["result"]
    user = task["history"][0]
    assert user["role"] == "user" and "metadata" not in user
    assert meta.invocation_id(user) is None
    assert meta.invocation_id(user, task["metadata"]) == "e-2da84b7d-b17c-4801-b51b-c2767a95b2ba"
    # its own id wins over the task's
    own = dict(user, metadata={"adk_invocation_id": "e-own"})
    assert meta.invocation_id(own, task["metadata"]) == "e-own"
    # an empty id does not count
    assert (
        meta.invocation_id({"metadata": {"kagent_invocation_id": ""}}, {"kagent_invocation_id": "e-task"}) == "e-task"
    )


def test_header_update_is_never_a_rewind_target():
    assert meta.rewind_target("header_update") is None
    assert meta.rewind_target("") is None
    assert meta.rewind_target(None) is None
    assert meta.rewind_target("e-1") == "e-1"


@pytest.mark.parametrize(
    "metadata, partial",
    [
        ({"kagent_adk_partial": True}, True),
        ({"adk_partial": True}, True),
        ({"adk_partial": False, "kagent_adk_partial": True}, False),
        ({"kagent_adk_partial": False}, False),
        ({"kagent_adk_partial": None}, False),
        ({"kagent_adk_partial": "true"}, False),
        ({}, False),
        (None, False),
    ],
)
def test_partial_flag(metadata, partial):
    assert meta.is_partial({"metadata": metadata}) is partial


@pytest.mark.parametrize(
    "part, expected",
    [
        ({"kind": "data", "data": {}, "metadata": {"kagent_type": "function_call"}}, "function_call"),
        ({"kind": "data", "data": {}, "metadata": {"adk_type": "function_response"}}, "function_response"),
        ({"data": {}, "metadata": {"adk_type": "function_call"}}, "function_call"),  # 1.0, no kind
        ({"kind": "data", "data": {}, "metadata": {"kagent_type": "code_execution_result"}}, None),
        ({"kind": "data", "data": {}}, None),
        ({"kind": "text", "text": "x", "metadata": {"kagent_type": "function_call"}}, None),
    ],
)
def test_tool_types(part, expected):
    assert meta.tool_type(part) == expected


def test_tool_types_in_captures():
    cap = load(KAGENT + "06_turn_streaming_with_tool.txt")
    kinds = []
    for line in cap.data_lines:
        message = (_result(line).get("status") or {}).get("message") or {}
        for p in message.get("parts", []):
            kinds.append(meta.tool_type(p))
    assert [k for k in kinds if k] == ["function_call", "function_response"]


# -- outgoing ----------------------------------------------------------------------------------
def _has_key(obj, key) -> bool:
    if isinstance(obj, dict):
        return key in obj or any(_has_key(v, key) for v in obj.values())
    if isinstance(obj, list):
        return any(_has_key(v, key) for v in obj)
    return False


def test_outgoing_03_message():
    m = outgoing.user_message("hello", dialect=Dialect.V03, context_id="s1")
    assert m["kind"] == "message"
    assert m["role"] == "user"
    assert m["parts"] == [{"kind": "text", "text": "hello"}]
    assert m["contextId"] == "s1"
    assert "taskId" not in m and "metadata" not in m
    uuid.UUID(m["messageId"])
    req = outgoing.stream_request(m, Dialect.V03, rpc_id="r1")
    assert req == {"jsonrpc": "2.0", "id": "r1", "method": "message/stream", "params": {"message": m}}
    headers = outgoing.headers_for(Dialect.V03)
    assert headers["Accept"] == "text/event-stream"
    assert "A2A-Version" not in headers
    # what we send reads back through our own accessors
    assert (raw.role(m), raw.text_of(m), raw.context_id(m)) == ("user", "hello", "s1")


def test_outgoing_10_message():
    m = outgoing.user_message("hello", dialect=Dialect.V10, context_id="s1", data=[{"decision_type": "approve"}])
    assert not _has_key(m, "kind")
    assert m["role"] == "ROLE_USER"
    assert m["parts"] == [{"text": "hello"}, {"data": {"decision_type": "approve"}}]
    assert m["contextId"] == "s1"
    req = outgoing.stream_request(m, Dialect.V10)
    assert req["method"] == "SendStreamingMessage"
    assert req["jsonrpc"] == "2.0" and req["id"]
    assert outgoing.headers_for(Dialect.V10)["A2A-Version"] == "1.0"
    assert [raw.part_kind(p) for p in raw.parts(m)] == ["text", "data"]


@pytest.mark.parametrize("dialect", list(Dialect))
def test_outgoing_decision_message_as_kagent_ui_sends_it(dialect):
    """kagent's UI answers a confirmation with the same taskId, a data part and the words."""
    m = outgoing.decision_message(True, dialect=dialect, context_id="s1", task_id="t-wait")
    assert m["taskId"] == "t-wait" and m["contextId"] == "s1"
    assert [raw.part_kind(p) for p in m["parts"]] == ["data", "text"]
    assert m["parts"][0]["data"] == {"decision_type": "approve"}
    assert raw.text_of(m) == "Approved"
    no = outgoing.decision_message(False, dialect=dialect, context_id="s1", task_id="t-wait")
    assert no["parts"][0]["data"] == {"decision_type": "reject"} and raw.text_of(no) == "Rejected"


def test_methods_per_dialect():
    from rewindtui.a2a.dialect import method

    assert [method(op, Dialect.V03) for op in ("stream", "get_task", "list_tasks", "cancel_task", "subscribe")] == [
        "message/stream",
        "tasks/get",
        None,  # 0.3 cannot list a context's tasks
        "tasks/cancel",
        "tasks/resubscribe",
    ]
    assert [method(op, Dialect.V10) for op in ("stream", "get_task", "list_tasks", "cancel_task", "subscribe")] == [
        "SendStreamingMessage",
        "GetTask",
        "ListTasks",
        "CancelTask",
        "SubscribeToTask",
    ]


def test_outgoing_new_message_id_each_call_and_task_id_only_when_given():
    a = outgoing.user_message("x", dialect=Dialect.V03, context_id="s1")
    b = outgoing.user_message("x", dialect=Dialect.V03, context_id="s1")
    assert a["messageId"] != b["messageId"]
    assert "taskId" not in a
    resumed = outgoing.user_message(
        None, dialect=Dialect.V03, context_id="s1", task_id="t-wait", data=[{"decision_type": "reject"}]
    )
    assert resumed["taskId"] == "t-wait"
    assert resumed["parts"] == [{"kind": "data", "data": {"decision_type": "reject"}}]
    no_session = outgoing.user_message("x", dialect=Dialect.V10, context_id=None)
    assert "contextId" not in no_session
    assert outgoing.jsonrpc("m", {})["id"] != outgoing.jsonrpc("m", {})["id"]


def test_outgoing_rewind_metadata_is_copied():
    md = {meta.REWIND_KEY: "e-1"}
    m = outgoing.user_message("", dialect=Dialect.V03, context_id="s1", metadata=md)
    assert m["metadata"] == {"kagent_rewind_before_invocation_id": "e-1"}
    md["other"] = 1
    assert "other" not in m["metadata"]
    # the shape the captured stock-kagent rewind request used
    captured = load(KAGENT + "12_rewind_key_ignored_by_stock_server.txt").request["params"]["message"]
    m = outgoing.user_message("", dialect=Dialect.V03, context_id="s1", metadata=captured["metadata"])
    assert {k: m[k] for k in ("kind", "role", "parts", "contextId", "metadata")} == {
        k: captured[k] for k in ("kind", "role", "parts", "contextId", "metadata")
    }


@pytest.mark.parametrize(
    "text, dialect",
    [
        ("0.3", Dialect.V03),
        ("0.3.0", Dialect.V03),
        ("1.0", Dialect.V10),
        ("v1", Dialect.V10),
        ("", None),
        (None, None),
        ("x", None),
    ],
)
def test_dialect_parse(text, dialect):
    assert Dialect.parse(text) is dialect
