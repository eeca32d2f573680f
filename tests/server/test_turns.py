"""A normal turn on the wire (kagent's event order and metadata), storage, sessions and users."""

from __future__ import annotations

import uuid

from srvkit import Turn, texts

from rewindtui.a2a import contract

#: also on a team server's PostgreSQL (tests/server/conftest.py)
ENGINES = ("sqlite", "postgresql")

APP = "local__NS__demo"
META_KEYS = {
    "kagent_invocation_id",
    "kagent_author",
    "kagent_app_name",
    "kagent_session_id",
    "kagent_user_id",
    "kagent_adk_partial",
}


def new_sid() -> str:
    return f"s-{uuid.uuid4().hex[:12]}"


def test_turn_event_order_and_metadata(server, make_a2a, dialect):
    a2a = make_a2a(server, dialect)
    sid = new_sid()
    events = a2a.stream("hello there", sid, message_id="m-hello-" + dialect)
    kinds = [(e["kind"], e.get("status", {}).get("state")) for e in events]
    # the Task (submitted, the user message) -> working (metadata only) -> working (partials..., full)
    # -> artifact -> completed
    assert kinds[0] == ("task", "submitted")
    assert kinds[1] == ("status-update", "working")
    assert kinds[-2] == ("artifact-update", None)
    assert kinds[-1] == ("status-update", "completed")
    assert all(k == ("status-update", "working") for k in kinds[2:-2])

    (echo,) = events[0]["history"]
    assert events[0]["metadata"]["kagent_invocation_id"] == echo["metadata"]["kagent_invocation_id"]
    assert echo["messageId"] == "m-hello-" + dialect and echo["role"] == "user"
    assert texts(echo) == "hello there"
    assert META_KEYS <= set(echo["metadata"])
    invocation = echo["metadata"]["kagent_invocation_id"]
    assert invocation.startswith("e-")
    assert echo["metadata"]["kagent_author"] == "user"
    assert "message" not in events[1]["status"]
    assert events[1]["metadata"]["kagent_app_name"] == APP

    messages = [e["status"]["message"] for e in events[2:-2]]
    partials = [m for m in messages if m["metadata"]["kagent_adk_partial"] is True]
    full = [m for m in messages if m["metadata"]["kagent_adk_partial"] is False]
    assert len(partials) >= 2 and len(full) == 1 and messages[-1] is full[0]
    assert len({m["messageId"] for m in messages}) == len(messages)  # each delta its own messageId
    assert "".join(texts(m) for m in partials) == texts(full[0])
    expected = "You said: hello there (turn 1; history: ['hello there']; weather_calls=0)"
    assert texts(full[0]) == expected
    for m in messages:
        assert META_KEYS <= set(m["metadata"])
        assert m["metadata"]["kagent_invocation_id"] == invocation
        assert m["metadata"]["kagent_author"] == "demo"
        assert m["metadata"]["kagent_app_name"] == APP
        assert m["metadata"]["kagent_session_id"] == sid
        assert m["metadata"]["kagent_user_id"] == "local"
        assert m["role"] == "agent" and m["taskId"] == events[0]["id"] and m["contextId"] == sid

    artifact = events[-2]["artifact"]
    assert events[-2]["lastChunk"] is True and texts(artifact) == expected
    assert events[-1]["metadata"]["kagent_invocation_id"] == invocation
    if dialect == "0.3":
        assert [f["result"]["final"] for f in a2a.last_raw if f["result"]["kind"] == "status-update"][-1] is True
        assert a2a.last_raw[0]["result"]["kind"] == "task"
    else:
        assert set(a2a.last_raw[0]["result"]) == {"task"}
        assert a2a.last_raw[-1]["result"]["statusUpdate"]["status"]["state"] == "TASK_STATE_COMPLETED"


def test_tool_turn_data_parts(server, make_a2a, dialect):
    a2a = make_a2a(server, dialect)
    sid = new_sid()
    turn = Turn(a2a.stream("what is the weather in New York", sid))
    call, response, answer = turn.full_messages
    (call_part,) = call["parts"]
    # kagent's part type, and the embedded server's own mark of what the tool touches (a2a/contract.py)
    assert call_part["kind"] == "data" and call_part["metadata"] == {
        "kagent_type": "function_call",
        contract.TOOL_EFFECTS_KEY: "session",
    }
    assert call_part["data"]["name"] == "get_weather" and call_part["data"]["args"] == {"city": "New York"}
    (resp_part,) = response["parts"]
    assert resp_part["metadata"] == {"kagent_type": "function_response"}
    assert resp_part["data"]["id"] == call_part["data"]["id"]
    assert resp_part["data"]["name"] == "get_weather"
    assert resp_part["data"]["response"]["call_no"] == 1
    assert texts(answer).endswith("(weather_calls=1)")
    assert turn.final["status"]["state"] == "completed"


def test_stored_task_has_full_messages_only(server, make_a2a, make_api):
    a2a, api = make_a2a(server), make_api(server)
    sid = new_sid()
    turn = Turn(a2a.stream("weather in Paris please", sid))
    resp = api.get(f"/tasks/{turn.task_id}")
    assert resp.status_code == 200
    task = resp.json()["data"]
    assert task["kind"] == "task" and task["id"] == turn.task_id and task["contextId"] == sid
    assert task["status"]["state"] == "completed"
    assert task["metadata"]["kagent_invocation_id"] == turn.invocation_id
    assert [m["messageId"] for m in task["history"]] == turn.message_ids
    assert all(m["metadata"]["kagent_adk_partial"] is False for m in task["history"])
    user = task["history"][0]
    assert user["role"] == "user" and user["metadata"]["kagent_invocation_id"] == turn.invocation_id
    assert META_KEYS <= set(user["metadata"])
    assert texts(task["artifacts"][0]) == turn.answer
    # integers stay integers in storage
    assert task["history"][2]["parts"][0]["data"]["response"]["temp_c"] == 21


def test_message_send_and_tasks_get(server, make_a2a, dialect):
    a2a = make_a2a(server, dialect)
    sid = new_sid()
    task = a2a.send("not streaming", sid)
    assert task["kind"] == "task" and task["status"]["state"] == "completed" and task["contextId"] == sid
    history = task["history"]
    assert texts(history[0]) == "not streaming" and len(history) == 2
    assert texts(history[-1]) == "You said: not streaming (turn 1; history: ['not streaming']; weather_calls=0)"
    assert all(not m["metadata"]["kagent_adk_partial"] for m in history)
    got = a2a.get_task(task["id"])
    assert [m["messageId"] for m in got["history"]] == [m["messageId"] for m in history]
    assert got["metadata"]["kagent_invocation_id"] == task["metadata"]["kagent_invocation_id"]


def test_tasks_get_unknown_is_task_not_found(server, make_a2a, dialect):
    a2a = make_a2a(server, dialect)
    body = a2a.rpc("tasks/get", "GetTask", {"id": "nope"})
    data = a2a.client.post(a2a.url, json=body, headers=a2a.headers(streaming=False)).json()
    assert data["error"]["code"] == -32001


def test_unknown_context_creates_named_session(server, make_a2a, make_api):
    a2a, api = make_a2a(server), make_api(server)
    sid = new_sid()
    assert api.get(f"/sessions/{sid}").status_code == 404
    long_text = "Please tell me everything about the history of the terminal emulator"
    Turn(a2a.stream(long_text, sid))
    session = api.get(f"/sessions/{sid}").json()["data"]
    assert session["id"] == sid and session["user_id"] == "local" and session["agent_ref"] == "local/demo"
    assert len(session["name"]) <= 40 and long_text.startswith(session["name"].rstrip("…"))
    assert session["name"].endswith("…")
    assert session["created_at"] <= session["updated_at"]


def test_message_without_context_gets_a_new_session(server, make_a2a, make_api):
    a2a, api = make_a2a(server), make_api(server)
    turn = Turn(a2a.stream("no context", None))
    sid = turn.events[0]["contextId"]
    assert sid and api.get(f"/sessions/{sid}").json()["data"]["name"] == "no context"


def test_sessions_crud(server, make_api, make_a2a):
    api = make_api(server, user="crud-user")
    created = api.post("/sessions", {"name": "My chat"})
    assert created.status_code == 201
    session = created.json()["data"]
    assert set(session) >= {"id", "name", "user_id", "agent_ref", "created_at", "updated_at"}
    assert session["name"] == "My chat" and session["user_id"] == "crud-user"
    with_id = api.post("/sessions", {"id": "chosen-id"}).json()["data"]
    assert with_id["id"] == "chosen-id" and with_id["name"] == ""
    assert api.post("/sessions", {"id": "chosen-id"}).status_code == 409
    assert api.post("/sessions", {"id": "bad id with spaces"}).status_code == 400
    assert api.post("/sessions", ["not", "an", "object"]).status_code == 400

    listed = api.get("/sessions").json()
    assert listed["error"] is False
    assert {s["id"] for s in listed["data"]} == {session["id"], "chosen-id"}

    # an unnamed session is named by its first message
    a2a = make_a2a(server, user="crud-user")
    Turn(a2a.stream("name me after this", "chosen-id"))
    assert api.get("/sessions/chosen-id").json()["data"]["name"] == "name me after this"

    deleted = api.delete("/sessions/chosen-id")
    assert deleted.status_code == 200 and deleted.json()["error"] is False
    assert api.get("/sessions/chosen-id").status_code == 404
    assert api.get("/sessions/chosen-id/tasks").status_code == 404
    assert api.delete("/sessions/chosen-id").status_code == 404


def test_users_are_separated(server, make_a2a, make_api, http):
    alice_a2a, alice = make_a2a(server, user="alice"), make_api(server, user="alice")
    bob_a2a, bob = make_a2a(server, user="bob"), make_api(server, user="bob")
    sid = new_sid()
    turn = Turn(alice_a2a.stream("alice's secret", sid))
    assert turn.user_message["metadata"]["kagent_user_id"] == "alice"
    assert alice.get(f"/sessions/{sid}").json()["data"]["user_id"] == "alice"
    # bob sees nothing of it
    assert bob.get(f"/sessions/{sid}").status_code == 404
    assert bob.get(f"/sessions/{sid}/tasks").status_code == 404
    assert bob.get(f"/tasks/{turn.task_id}").status_code == 404
    assert sid not in {s["id"] for s in bob.get("/sessions").json()["data"]}
    # the user_id query parameter works too
    assert http.get(f"{server.api_url}/sessions/{sid}", params={"user_id": "alice"}).status_code == 200
    # bob cannot write into alice's session over A2A
    events = bob_a2a.stream("let me in", sid)
    assert [e["status"]["state"] for e in events] == ["failed"]
    assert "not found" in texts(events[0]["status"]["message"])
    assert [m["messageId"] for m in alice.merged(sid)] == turn.message_ids
    # an unusable user id is a 400
    assert http.get(f"{server.api_url}/sessions", params={"user_id": ""}).status_code == 400
    assert http.get(f"{server.api_url}/sessions", params={"user_id": "a\x07b"}).status_code == 400


def test_continuing_a_finished_task_is_an_error(server, make_a2a, dialect):
    a2a = make_a2a(server, dialect)
    sid = new_sid()
    turn = Turn(a2a.stream("first", sid))
    body = a2a.rpc(
        "message/stream", "SendStreamingMessage", {"message": a2a.message("again", sid, task_id=turn.task_id)}
    )
    frames = a2a.post_stream(body)
    assert frames[0]["error"]["code"] == -32004  # UnsupportedOperation (spec 3.1.1)
    assert "completed" in frames[0]["error"]["message"]


def test_list_tasks_v1(server, make_a2a):
    a2a = make_a2a(server, "1.0")
    sid = new_sid()
    turns = [Turn(a2a.stream(t, sid)) for t in ("one", "two")]
    body = {"jsonrpc": "2.0", "id": 1, "method": "ListTasks", "params": {"contextId": sid}}
    data = a2a.client.post(a2a.url, json=body, headers=a2a.headers(streaming=False)).json()
    assert [t["id"] for t in data["result"]["tasks"]] == [t.task_id for t in reversed(turns)]  # newest first


def test_rewind_with_message_send(server, make_a2a, dialect):
    a2a = make_a2a(server, dialect)
    sid = new_sid()
    first, second = Turn(a2a.stream("one", sid)), Turn(a2a.stream("two", sid))
    task = a2a.send("", sid, metadata={"kagent_rewind_before_invocation_id": second.invocation_id})
    assert task["metadata"]["rewindtui_effective_history"] is True
    assert [m["messageId"] for m in task["history"]] == first.message_ids


def test_unknown_api_route_is_json_404(server, http):
    resp = http.get(server.api_url + "/nothing/here")
    assert resp.status_code == 404 and "error" in resp.json()
    resp = http.put(server.api_url + "/sessions", json={})
    assert resp.status_code == 405 and "error" in resp.json()
