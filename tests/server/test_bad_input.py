"""Bad input gets a clear error and changes nothing.

"Nothing" is checked on both sides: the store (every task of the session,
rewound ones included, byte for byte) and ADK (the session's events in its
SQLite file), plus the model's view on the next turn where it matters.
"""

from __future__ import annotations

import json
import sqlite3
import uuid
from pathlib import Path

import pytest
from srvkit import REWIND_KEY, Turn, normalize_result, texts


def adk_event_count(server, session_id: str) -> int:
    with sqlite3.connect(Path(server.data_dir) / "adk_sessions.db") as db:
        return db.execute("SELECT COUNT(*) FROM events WHERE session_id = ?", (session_id,)).fetchone()[0]


def snapshot(server, api, session_id: str) -> tuple[str, int, str]:
    tasks = api.get(f"/sessions/{session_id}/tasks", params={"include_rewound": "true"})
    session = api.get(f"/sessions/{session_id}")
    return tasks.text, adk_event_count(server, session_id), session.text


@pytest.fixture(scope="module")
def convo(server, http_module):
    """Two sessions with two turns each (the second one uses the tool)."""
    from srvkit import A2A

    a2a = A2A(http_module, server.agent_url, "0.3")
    out = {}
    for name in ("main", "other"):
        sid = f"bad-{name}-{uuid.uuid4().hex[:8]}"
        out[name] = (sid, [Turn(a2a.stream("hello", sid)), Turn(a2a.stream("weather in Oslo", sid))])
    return out


@pytest.fixture(scope="module")
def http_module():
    import httpx

    with httpx.Client(timeout=30) as client:
        yield client


def assert_refused_stream(events: list[dict], needle: str) -> None:
    assert len(events) == 1, events
    (event,) = events
    assert event["kind"] == "status-update" and event["status"]["state"] == "failed"
    assert needle in texts(event["status"]["message"]), texts(event["status"]["message"])


@pytest.mark.parametrize(
    "target, needle",
    [
        ("e-00000000-0000-0000-0000-000000000000", "not an invocation"),
        ("header_update", "not an invocation"),
        ("OTHER", "not an invocation"),  # an invocation of another session
    ],
)
def test_bad_rewind_target(server, convo, make_a2a, make_api, dialect, target, needle):
    sid, turns = convo["main"]
    if target == "OTHER":
        target = convo["other"][1][0].invocation_id
    a2a, api = make_a2a(server, dialect), make_api(server)
    before = snapshot(server, api, sid)

    assert_refused_stream(a2a.rewind(sid, target), needle)
    assert_refused_stream(a2a.rewind(sid, target, text="and send this"), needle)
    for action in ("rewind", "fork"):
        resp = api.post(f"/sessions/{sid}/{action}", {"rewind_before_invocation_id": target})
        assert resp.status_code == 400
        assert needle in resp.json()["error"]

    assert snapshot(server, api, sid) == before


def test_already_rewound_target(server, make_a2a, make_api):
    a2a, api = make_a2a(server), make_api(server)
    sid = f"rewound-{uuid.uuid4().hex[:8]}"
    first, second = Turn(a2a.stream("one", sid)), Turn(a2a.stream("two", sid))
    a2a.rewind(sid, second.invocation_id)
    before = snapshot(server, api, sid)
    assert_refused_stream(a2a.rewind(sid, second.invocation_id), "already rewound")
    resp = api.post(f"/sessions/{sid}/rewind", {"rewind_before_invocation_id": second.invocation_id})
    assert resp.status_code == 400 and "already rewound" in resp.json()["error"]
    assert snapshot(server, api, sid) == before
    assert api.merged_ids(sid) == first.message_ids


def test_missing_or_foreign_session(server, convo, make_a2a, make_api, dialect):
    sid, turns = convo["main"]
    inv = turns[0].invocation_id
    api = make_api(server)
    before = snapshot(server, api, sid)
    for user, session_id in (("local", "no-such-session"), ("mallory", sid)):
        a2a, api_u = make_a2a(server, dialect, user=user), make_api(server, user=user)
        assert_refused_stream(a2a.rewind(session_id, inv), "not found")
        for action in ("rewind", "fork"):
            resp = api_u.post(f"/sessions/{session_id}/{action}", {"rewind_before_invocation_id": inv})
            assert resp.status_code == 404 and "not found" in resp.json()["error"]
        assert api_u.get(f"/sessions/{session_id}/tasks").status_code == 404
        assert api_u.delete(f"/sessions/{session_id}").status_code == 404
    assert api.get("/sessions/no-such-session").status_code == 404
    assert snapshot(server, api, sid) == before
    assert {s["id"] for s in make_api(server, user="mallory").get("/sessions").json()["data"]} == set()


@pytest.mark.parametrize(
    "body, needle",
    [
        ({}, "rewind_before_invocation_id"),
        ({"rewind_before_invocation_id": ""}, "rewind_before_invocation_id"),
        ({"rewind_before_invocation_id": 42}, "rewind_before_invocation_id"),
        ("not json", "not valid JSON"),
        ([1, 2], "JSON object"),
    ],
)
def test_bad_rest_bodies(server, convo, make_api, http, body, needle):
    sid, _ = convo["main"]
    api = make_api(server)
    before = snapshot(server, api, sid)
    for action in ("rewind", "fork"):
        url = f"{server.api_url}/sessions/{sid}/{action}"
        if isinstance(body, str):
            resp = http.post(url, content=body, headers={"Content-Type": "application/json"})
        else:
            resp = http.post(url, json=body)
        assert resp.status_code == 400
        assert needle in resp.json()["error"]
    assert snapshot(server, api, sid) == before


def test_bad_a2a_messages(server, convo, make_a2a, make_api, dialect):
    sid, turns = convo["main"]
    a2a, api = make_a2a(server, dialect), make_api(server)
    before = snapshot(server, api, sid)
    # malformed: the JSON-RPC error InvalidParams, before anything runs
    for kw, needle in (
        ({"text": "", "context_id": sid, "metadata": {REWIND_KEY: ""}}, "non-empty string"),
        ({"text": "", "context_id": sid}, "no content"),
        ({"text": "", "context_id": None, "metadata": {REWIND_KEY: turns[0].invocation_id}}, "contextId"),
        ({"text": "hi", "context_id": "bad id/with slash"}, "invalid contextId"),
    ):
        error = a2a.stream_error(**kw)
        assert error["code"] == -32602 and needle in error["message"], error
    # well-formed but refused: one final failed status
    used = turns[0].user_message["messageId"]
    assert_refused_stream(a2a.stream("again", sid, message_id=used), "already used")
    assert snapshot(server, api, sid) == before


def test_jsonrpc_errors(server, make_api, http):
    api = make_api(server, user="rpc-user")
    url = server.agent_url

    def call(content: bytes | str, headers: dict | None = None) -> dict:
        resp = http.post(
            url,
            content=content,
            headers={"Content-Type": "application/json", "X-User-Id": "rpc-user", **(headers or {})},
        )
        assert resp.status_code == 200
        if resp.headers["content-type"].startswith("text/event-stream"):
            frames = [json.loads(line[5:]) for line in resp.text.splitlines() if line.startswith("data:")]
            return frames[0]
        return resp.json()

    assert call(b"{not json")["error"]["code"] == -32700
    assert call(json.dumps({"id": 1, "method": "message/stream"}))["error"]["code"] == -32600  # no jsonrpc
    assert call(json.dumps([{"jsonrpc": "2.0", "id": 1, "method": "message/send"}]))["error"]["code"] == -32600
    unknown = call(json.dumps({"jsonrpc": "2.0", "id": 7, "method": "tasks/frobnicate", "params": {}}))
    assert unknown["error"]["code"] == -32601 and unknown["id"] == 7
    no_params = call(json.dumps({"jsonrpc": "2.0", "id": 8, "method": "message/stream", "params": {}}))
    assert no_params["error"]["code"] in (-32600, -32602)
    # a version this server does not speak is refused (-32009, version not supported)
    v1_body = {
        "jsonrpc": "2.0",
        "id": 9,
        "method": "SendStreamingMessage",
        "params": {"message": {"role": "ROLE_USER", "messageId": "x", "parts": [{"text": "hi"}], "contextId": "v"}},
    }
    assert call(json.dumps(v1_body), {"A2A-Version": "99.0"})["error"]["code"] == -32009
    # nothing was created for this user by any of it
    assert api.get("/sessions").json()["data"] == []
    # a 1.0 method without the header is served as 1.0 (0.3 has no method of that name)
    opened = call(json.dumps(v1_body))
    assert opened["result"]["task"]["status"]["state"] == "TASK_STATE_SUBMITTED"


def test_busy_session_is_refused_and_not_corrupted(slow_server, make_a2a, make_api, http):
    srv = slow_server
    a2a, api = make_a2a(srv), make_api(srv)
    sid = f"busy-{uuid.uuid4().hex[:8]}"
    first = Turn(a2a.stream("first message here", sid))
    body = a2a.rpc("message/stream", "", {"message": a2a.message("a longer second message to keep it going", sid)})
    with http.stream("POST", srv.agent_url, json=body, headers={"Accept": "text/event-stream"}) as resp:
        lines = resp.iter_lines()
        events = []
        for line in lines:  # wait for the echo: from here on the turn is running
            if line.startswith("data:"):
                events.append(normalize_result(json.loads(line[5:])["result"]))
                break
        assert events[0]["status"]["state"] == "submitted"
        tasks_during = api.get(f"/sessions/{sid}/tasks", params={"include_rewound": "true"}).json()["data"]

        assert_refused_stream(a2a.rewind(sid, first.invocation_id), "is running")
        assert_refused_stream(a2a.stream("concurrent turn", sid), "is running")
        for action in ("rewind", "fork"):
            refused = api.post(f"/sessions/{sid}/{action}", {"rewind_before_invocation_id": first.invocation_id})
            assert refused.status_code == 409 and "is running" in refused.json()["error"]
        assert api.delete(f"/sessions/{sid}").status_code == 409
        assert (
            api.get(f"/sessions/{sid}/tasks", params={"include_rewound": "true"}).json()["data"][:1] == tasks_during[:1]
        )

        for line in lines:
            if line.startswith("data:"):
                events.append(normalize_result(json.loads(line[5:])["result"]))
    second = Turn(events)
    assert second.final["status"]["state"] == "completed"
    assert second.answer.startswith("You said: a longer second message to keep it going (turn 2;")
    # exactly the two turns, nothing from the refused requests
    assert api.merged_ids(sid) == first.message_ids + second.message_ids
    assert len(api.tasks(sid, include_rewound=True)) == 2
    # and the session works normally afterwards
    ok = api.post(f"/sessions/{sid}/rewind", {"rewind_before_invocation_id": second.invocation_id})
    assert ok.status_code == 200 and api.merged_ids(sid) == first.message_ids


def test_include_rewound_audit(server, make_a2a, make_api):
    a2a, api = make_a2a(server), make_api(server)
    sid = f"audit-{uuid.uuid4().hex[:8]}"
    turns = [Turn(a2a.stream(t, sid)) for t in ("a", "b", "c")]
    rewind_task = a2a.rewind(sid, turns[1].invocation_id)[0]
    default = api.tasks(sid)
    assert [t["id"] for t in default] == [turns[0].task_id, rewind_task["id"]]
    audit = api.tasks(sid, include_rewound=True)
    assert [t["id"] for t in audit] == [turns[0].task_id, turns[1].task_id, turns[2].task_id, rewind_task["id"]]
    for task in audit[1:3]:
        assert task["metadata"]["rewindtui_rewound"] is True
        assert task["metadata"]["rewindtui_rewound_by"] == rewind_task["id"]
        assert task["metadata"]["rewindtui_rewound_at"]
    assert "rewindtui_rewound" not in audit[0]["metadata"] and "rewindtui_rewound" not in audit[3]["metadata"]
    # rewound tasks keep their full history (nothing deleted) and stay readable one by one
    assert [m["messageId"] for m in audit[2]["history"]] == turns[2].message_ids
    one = api.get(f"/tasks/{turns[2].task_id}").json()["data"]
    assert one["metadata"]["rewindtui_rewound"] is True


def test_cancel_a_running_turn(slow_server, make_a2a, make_api, http):
    a2a, api = make_a2a(slow_server), make_api(slow_server)
    sid = f"cancel-{uuid.uuid4().hex[:8]}"
    body = a2a.rpc("message/stream", "", {"message": a2a.message("please take your time answering this", sid)})
    events = []
    with http.stream("POST", slow_server.agent_url, json=body, headers={"Accept": "text/event-stream"}) as resp:
        lines = resp.iter_lines()
        for line in lines:
            if line.startswith("data:"):
                events.append(normalize_result(json.loads(line[5:])["result"]))
                break
        assert events[0]["kind"] == "task"
        task_id = events[0]["id"]
        cancel = http.post(
            slow_server.agent_url, json={"jsonrpc": "2.0", "id": 2, "method": "tasks/cancel", "params": {"id": task_id}}
        )
        assert cancel.json()["result"]["status"]["state"] == "canceled"
        for line in lines:
            if line.startswith("data:"):
                events.append(normalize_result(json.loads(line[5:])["result"]))
    assert events[-1]["status"]["state"] == "canceled"
    (task,) = api.tasks(sid)
    assert task["status"]["state"] == "canceled" and task["id"] == task_id
    again = http.post(
        slow_server.agent_url, json={"jsonrpc": "2.0", "id": 3, "method": "tasks/cancel", "params": {"id": task_id}}
    )
    assert again.json()["error"]["code"] == -32002  # not cancelable any more
    # the session is free again
    assert Turn(a2a.stream("next", sid)).final["status"]["state"] == "completed"
