"""The 1.0 streaming-turn fast path (server/http/fast_stream.py, service/wire_v1.py) answers what
a2a-sdk's own dispatcher answers: every frame real turns stream, random events, and the refusals
(which it leaves to a2a-sdk)."""

from __future__ import annotations

import json
import uuid
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from a2a.utils import json_utils
from google.protobuf.json_format import MessageToDict
from hypothesis import given, settings
from hypothesis import strategies as st
from srvkit import A2A, Turn

from rewindtui.server import EmbeddedServer
from rewindtui.server.http import fast_stream
from rewindtui.server.http.options import ServerOptions
from rewindtui.server.shared import wire_v1
from rewindtui.server.shared.wire import message_to_proto, message_v1_text
from rewindtui.server.shared.wire_v1 import Unusual, sdk_result, stream_result


def _same(fast: dict[str, Any], sdk: dict[str, Any]) -> bool:
    # as JSON text, read back: a Struct is a protobuf map, whose key order is not stable
    return json.loads(json_utils.dumps(fast)) == json.loads(json_utils.dumps(sdk))


@pytest.fixture
def rendered(monkeypatch) -> list[tuple[dict[str, Any], dict[str, Any] | None, dict[str, Any]]]:
    """Every event the fast path renders in this test: (event, its own rendering or None when it
    left the event to a2a-sdk, a2a-sdk's rendering)."""
    seen: list[tuple[dict[str, Any], dict[str, Any] | None, dict[str, Any]]] = []

    def spy(event: dict[str, Any]) -> dict[str, Any]:
        try:
            own: dict[str, Any] | None = stream_result(event)
        except Unusual:
            own = None
        seen.append((event, own, sdk_result(event)))
        return wire_v1.v1_result(event)

    monkeypatch.setattr(fast_stream, "v1_result", spy)
    return seen


def test_every_frame_of_real_turns_is_a2a_sdks_frame(server, make_a2a, rendered):
    a2a = make_a2a(server, "1.0")
    sid = f"fast-{uuid.uuid4().hex[:8]}"
    first = Turn(a2a.stream("hello", sid))
    weather = Turn(a2a.stream("weather in Oslo", sid))
    question = Turn(a2a.stream("please delete file notes.txt", sid))
    assert first.final["status"]["state"] == "completed" and weather.final["status"]["state"] == "completed"
    assert question.final["status"]["state"] == "input-required"
    kinds = {e["kind"] for e, _, _ in rendered}
    assert kinds == {"task", "status-update", "artifact-update"}, kinds
    parts = [p for e, _, _ in rendered for p in (e.get("status", {}).get("message") or {}).get("parts", [])]
    assert any(p.get("kind") == "data" for p in parts)  # the tool call and its result
    assert len(rendered) >= 3 * 8
    for event, own, sdk in rendered:
        assert own is not None, event  # a turn's events are all the fast path's own
        assert _same(own, sdk), event


@pytest.mark.slow  # two servers
def test_the_frames_are_what_the_sdk_path_streams(tmp_path, http):
    """The same turn against a server with the fast path and one without: the same frames but for
    the ids and times each turn makes anew."""

    def frames(fast: bool) -> list[dict[str, Any]]:
        with EmbeddedServer(tmp_path / str(fast), options=ServerOptions(fast_stream=fast)) as srv:
            a2a = A2A(http, srv.agent_url, "1.0")
            a2a.stream("weather in Lima", "same")
            return a2a.last_raw

    def masked(value: Any) -> Any:
        if isinstance(value, dict):
            return {
                k: "*"
                if k in {"id", "messageId", "taskId", "artifactId", "timestamp"} or "invocation" in k
                else masked(v)
                for k, v in value.items()
            }
        if isinstance(value, list):
            return [masked(v) for v in value]
        return value

    fast, sdk = frames(True), frames(False)
    assert len(fast) == len(sdk) >= 8
    assert [masked(f) for f in fast] == [masked(f) for f in sdk]


@pytest.mark.slow  # two servers a case
@pytest.mark.parametrize(
    ("case", "change"),
    [
        ("unknown taskId", lambda body, headers: body["params"]["message"].update(taskId="no-such-task")),
        ("version 2", lambda body, headers: headers.update({"A2A-Version": "2.0"})),
        ("no message id", lambda body, headers: body["params"]["message"].pop("messageId")),
        ("negative historyLength", lambda body, headers: body["params"].update(configuration={"historyLength": -1})),
        ("a batch member", lambda body, headers: body.update(extra=1)),
        ("user id with a slash", lambda body, headers: headers.update({"X-User-Id": "a/b"})),
    ],
)
def test_refusals_are_a2a_sdks(tmp_path, http, case, change):
    def answer(fast: bool) -> Any:
        with EmbeddedServer(tmp_path / f"{fast}", options=ServerOptions(fast_stream=fast)) as srv:
            body = {
                "jsonrpc": "2.0",
                "id": "r-1",
                "method": "SendStreamingMessage",
                "params": {"message": {"role": "ROLE_USER", "messageId": "m-1", "parts": [{"text": "hi"}]}},
            }
            headers = {"A2A-Version": "1.0", "Accept": "text/event-stream"}
            change(body, headers)
            response = http.post(srv.agent_url, json=body, headers=headers)
            text = response.text
            if text.startswith("data:"):
                return [json.loads(line[5:]) for line in text.splitlines() if line.startswith("data:")]
            return response.status_code, response.json()

    fast, sdk = answer(True), answer(False)
    assert fast == sdk
    assert "error" in json.dumps(fast), fast  # each is refused


# -- random events ---------------------------------------------------------------------------
_json = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**53), max_value=2**53)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner, max_size=3),
    max_leaves=8,
)
_metadata = st.dictionaries(st.text(max_size=8), _json, max_size=4)
#: times as now_iso writes them, some whole milliseconds or seconds (1.0 prints 6, 3 or 0 digits)
_stamp = st.builds(
    lambda micros, unit: (datetime(2020, 1, 1, tzinfo=UTC) + timedelta(microseconds=micros - micros % unit)).strftime(
        "%Y-%m-%dT%H:%M:%S.%fZ"
    ),
    st.integers(min_value=0, max_value=10**15),
    st.sampled_from([1, 1000, 1_000_000]),
)
_part = st.one_of(
    st.builds(lambda t, md: {"kind": "text", "text": t, **({"metadata": md} if md else {})}, st.text(), _metadata),
    st.builds(lambda d, md: {"kind": "data", "data": d, **({"metadata": md} if md else {})}, _metadata, _metadata),
)
_ids = st.sampled_from(["", "t-1", "c-\u00e9"])
_message = st.fixed_dictionaries(
    {"kind": st.just("message"), "role": st.sampled_from(["user", "agent"]), "parts": st.lists(_part, max_size=3)},
    optional={
        "messageId": _ids,
        "contextId": _ids,
        "taskId": _ids,
        "metadata": _metadata,
        "referenceTaskIds": st.lists(_ids, max_size=2),
        "extensions": st.lists(_ids, max_size=2),
    },
)
_states = st.sampled_from(["submitted", "working", "completed", "failed", "canceled", "input-required"])
_status = st.fixed_dictionaries({"state": _states}, optional={"message": _message, "timestamp": _stamp})
_artifact = st.fixed_dictionaries(
    {"artifactId": _ids, "parts": st.lists(_part, max_size=3)},
    optional={"name": _ids, "description": _ids, "metadata": _metadata},
)
_event = st.one_of(
    st.fixed_dictionaries(
        {"kind": st.just("status-update"), "taskId": _ids, "contextId": _ids, "status": _status},
        optional={"metadata": _metadata, "final": st.booleans()},
    ),
    st.fixed_dictionaries(
        {"kind": st.just("artifact-update"), "taskId": _ids, "contextId": _ids, "artifact": _artifact},
        optional={"append": st.booleans(), "lastChunk": st.booleans(), "metadata": _metadata},
    ),
    st.fixed_dictionaries(
        {"kind": st.just("task"), "id": _ids, "contextId": _ids, "status": _status},
        optional={
            "history": st.lists(_message, max_size=3),
            "artifacts": st.lists(_artifact, max_size=2),
            "metadata": _metadata,
        },
    ),
    _message,
)


@settings(max_examples=300, deadline=None)
@given(_event)
def test_random_events_render_as_a2a_sdk_renders_them(event):
    assert _same(stream_result(event), sdk_result(event))


@settings(max_examples=200, deadline=None)
@given(_message)
def test_stored_message_text_is_a2a_sdks(message):
    """The 1.0 text the store keeps of a message (``wire.message_v1_text``) is a2a-sdk's."""
    sdk = json_utils.dumps(MessageToDict(message_to_proto(message), preserving_proto_field_name=False))
    assert json.loads(message_v1_text(message)) == json.loads(sdk)


@pytest.mark.parametrize(
    "event",
    [
        {"kind": "message", "role": "agent", "parts": [{"kind": "file", "file": {"uri": "https://x/y"}}]},
        {"kind": "message", "role": "agent", "parts": [{"kind": "data", "data": [1, 2]}]},
        {"kind": "message", "role": "robot", "parts": []},
        {"kind": "status-update", "taskId": "t", "status": {"state": "unknown"}},
        {"kind": "status-update", "taskId": "t", "status": {"state": "working"}, "metadata": {"x": float("inf")}},
    ],
)
def test_what_it_does_not_cover_goes_to_a2a_sdk(event):
    with pytest.raises(Unusual):
        stream_result(event)
    try:
        expected: Any = sdk_result(event)
    except Exception as exc:  # a2a-sdk refuses it too (a number that is not finite)
        with pytest.raises(type(exc)):
            wire_v1.v1_result(event)
    else:
        assert wire_v1.v1_result(event) == expected
