"""A2A conformance of the embedded server, item by item (spec sections as in the A2A 1.0 text).

Each of these failed before the server implemented it: resubscribing, ``ListTasks``
parameters, filters, order and pagination, ``historyLength`` checks, the error for a message
to a finished task, a stream that opens with its Task, the agent card's cache headers, and a
1.0 request without the version header.
"""

from __future__ import annotations

import json
import uuid
from typing import Any

import httpx
import pytest
from srvkit import A2A, Turn, normalize_result

#: also on a team server's PostgreSQL (tests/server/conftest.py)
ENGINES = ("sqlite", "postgresql")

V1 = {"A2A-Version": "1.0"}


def sid() -> str:
    return f"conf-{uuid.uuid4().hex[:10]}"


def rpc(http: httpx.Client, url: str, method: str, params: dict[str, Any], headers: dict | None = None) -> dict:
    body = {"jsonrpc": "2.0", "id": 1, "method": method, "params": params}
    return http.post(url, json=body, headers={**V1, **(headers or {})}).json()


def sse(response: httpx.Response) -> list[dict[str, Any]]:
    return [json.loads(line[5:]) for line in response.iter_lines() if line.startswith("data:")]


def subscribe(http: httpx.Client, url: str, task_id: str, dialect: str) -> list[dict[str, Any]]:
    method, headers = ("SubscribeToTask", V1) if dialect == "1.0" else ("tasks/resubscribe", {})
    body = {"jsonrpc": "2.0", "id": 2, "method": method, "params": {"id": task_id}}
    with http.stream("POST", url, json=body, headers={"Accept": "text/event-stream", **headers}) as resp:
        if not resp.headers.get("content-type", "").startswith("text/event-stream"):
            return [json.loads(resp.read())]
        return sse(resp)


# -- SubscribeToTask / tasks/resubscribe (3.1.6) ---------------------------------------------
@pytest.mark.parametrize("dialect", ["1.0", "0.3"])
def test_subscribe_follows_a_running_turn(slow_server, http, dialect):
    a2a = A2A(http, slow_server.agent_url, dialect)
    body = a2a.rpc(
        "message/stream", "SendStreamingMessage", {"message": a2a.message("tell me a long story now", sid())}
    )
    with http.stream("POST", slow_server.agent_url, json=body, headers=a2a.headers()) as resp:
        lines = resp.iter_lines()
        first = next(json.loads(line[5:]) for line in lines if line.startswith("data:"))
        opening = normalize_result(first["result"])
        followed = [
            normalize_result(f["result"]) for f in subscribe(http, slow_server.agent_url, opening["id"], dialect)
        ]
        rest = [normalize_result(json.loads(line[5:])["result"]) for line in lines if line.startswith("data:")]
    # the subscription opens with the Task as it is now: running, the user's message in its history
    assert followed[0]["kind"] == "task" and followed[0]["id"] == opening["id"]
    assert followed[0]["status"]["state"] in ("submitted", "working")
    assert followed[0]["history"][0]["messageId"] == opening["history"][0]["messageId"]
    # then exactly the events the original stream got from that point on, up to the end
    assert followed[1:] == rest[len(rest) - len(followed) + 1 :]
    assert followed[-1]["kind"] == "status-update" and followed[-1]["status"]["state"] == "completed"
    # what the subscriber saw as history plus the messages since is the whole turn
    full_since = [
        e["status"]["message"]["messageId"]
        for e in followed[1:]
        if e["kind"] == "status-update"
        and "message" in e["status"]
        and e["status"]["message"]["metadata"].get("kagent_adk_partial") is False
    ]
    seen = [m["messageId"] for m in followed[0]["history"]] + full_since
    stored = a2a.get_task(opening["id"])
    assert [m["messageId"] for m in stored["history"]] == seen


def test_subscribe_to_a_finished_task(server, http):
    a2a = A2A(http, server.agent_url, "1.0")
    turn = Turn(a2a.stream("done already", sid()))
    (refused,) = subscribe(http, server.agent_url, turn.task_id, "1.0")
    assert refused["error"]["code"] == -32004  # UnsupportedOperation: nothing more to stream
    (final,) = subscribe(http, server.agent_url, turn.task_id, "0.3")  # 0.3 resubscribe: the outcome
    assert final["result"]["kind"] == "task" and final["result"]["id"] == turn.task_id
    assert final["result"]["status"]["state"] == "completed"
    assert [m["messageId"] for m in final["result"]["history"]] == turn.message_ids


@pytest.mark.parametrize("dialect", ["1.0", "0.3"])
def test_subscribe_to_an_unknown_task(server, http, dialect):
    (refused,) = subscribe(http, server.agent_url, "no-such-task", dialect)
    assert refused["error"]["code"] == -32001


def test_subscribe_to_another_users_task_is_unknown(server, http):
    turn = Turn(A2A(http, server.agent_url, "1.0", user="owner").stream("mine", sid()))
    (refused,) = subscribe(http, server.agent_url, turn.task_id, "1.0")  # as the default user
    assert refused["error"]["code"] == -32001


# -- ListTasks (3.1.4) ----------------------------------------------------------------------
@pytest.mark.parametrize(
    "params, needle",
    [
        ({"pageSize": 0}, "pageSize"),
        ({"pageSize": -3}, "pageSize"),
        ({"pageSize": 101}, "pageSize"),
        ({"pageToken": "not-a-token"}, "pageToken"),
        ({"historyLength": -1}, "historyLength"),
        ({"status": "TASK_STATE_BORED"}, "unknown status"),
    ],
)
def test_list_tasks_refuses_bad_parameters(server, http, params, needle):
    answer = rpc(http, server.agent_url, "ListTasks", params)
    assert answer["error"]["code"] == -32602 and needle in answer["error"]["message"], answer


def test_list_tasks_newest_first_with_cursor_pages(server, http):
    user = f"pager-{uuid.uuid4().hex[:6]}"
    a2a = A2A(http, server.agent_url, "1.0", user=user)
    context = sid()
    turns = [Turn(a2a.stream(text, context)) for text in ("one", "two", "three")]
    newest_first = [t.task_id for t in reversed(turns)]
    headers = {"X-User-Id": user}

    first = rpc(http, server.agent_url, "ListTasks", {"contextId": context, "pageSize": 2}, headers)["result"]
    assert [t["id"] for t in first["tasks"]] == newest_first[:2]
    assert first["totalSize"] == 3 and first["pageSize"] == 2 and first["nextPageToken"]  # pageSize: this page's
    second = rpc(
        http,
        server.agent_url,
        "ListTasks",
        {"contextId": context, "pageSize": 2, "pageToken": first["nextPageToken"]},
        headers,
    )["result"]
    assert [t["id"] for t in second["tasks"]] == newest_first[2:] and second["pageSize"] == 1
    assert second["nextPageToken"] == ""  # present and empty on the last page
    # ordered by last update: continuing the oldest task's session moves nothing, a new task leads
    fourth = Turn(a2a.stream("four", context))
    again = rpc(http, server.agent_url, "ListTasks", {"contextId": context}, headers)["result"]
    assert [t["id"] for t in again["tasks"]] == [fourth.task_id, *newest_first]
    # artifacts only on request, history cut to historyLength
    assert all("artifacts" not in t for t in again["tasks"])
    with_parts = rpc(
        http,
        server.agent_url,
        "ListTasks",
        {"contextId": context, "includeArtifacts": True, "historyLength": 1},
        headers,
    )["result"]
    assert all(t["artifacts"] for t in with_parts["tasks"])
    assert all(len(t["history"]) == 1 for t in with_parts["tasks"])


def test_list_tasks_filters_by_status(slow_server, http):
    user = f"filter-{uuid.uuid4().hex[:6]}"
    a2a = A2A(http, slow_server.agent_url, "1.0", user=user)
    headers = {"X-User-Id": user}
    done = Turn(a2a.stream("finishes", sid()))
    body = a2a.rpc("", "SendStreamingMessage", {"message": a2a.message("this one gets canceled, slowly", sid())})
    with http.stream("POST", slow_server.agent_url, json=body, headers=a2a.headers()) as resp:
        lines = resp.iter_lines()
        task_id = next(json.loads(line[5:]) for line in lines if line.startswith("data:"))["result"]["task"]["id"]
        canceled = rpc(http, slow_server.agent_url, "CancelTask", {"id": task_id}, headers)
        assert canceled["result"]["status"]["state"] == "TASK_STATE_CANCELED"
        list(lines)
    only = rpc(http, slow_server.agent_url, "ListTasks", {"status": "TASK_STATE_CANCELED"}, headers)["result"]
    assert [t["id"] for t in only["tasks"]] == [task_id] and only["totalSize"] == 1
    completed = rpc(http, slow_server.agent_url, "ListTasks", {"status": "TASK_STATE_COMPLETED"}, headers)["result"]
    assert [t["id"] for t in completed["tasks"]] == [done.task_id]


# -- GetTask (3.1.3) -------------------------------------------------------------------------
def test_get_task_refuses_a_negative_history_length(server, http):
    turn = Turn(A2A(http, server.agent_url, "1.0").stream("hi", sid()))
    answer = rpc(http, server.agent_url, "GetTask", {"id": turn.task_id, "historyLength": -1})
    assert answer["error"]["code"] == -32602
    ok = rpc(http, server.agent_url, "GetTask", {"id": turn.task_id, "historyLength": 1})["result"]
    assert [m["messageId"] for m in ok["history"]] == turn.message_ids[-1:]


# -- SendMessage to a finished task (3.1.1) --------------------------------------------------
@pytest.mark.parametrize("dialect", ["1.0", "0.3"])
def test_message_to_a_finished_task_is_unsupported(server, http, dialect):
    a2a = A2A(http, server.agent_url, dialect)
    context = sid()
    turn = Turn(a2a.stream("first", context))
    for method in (("message/stream", "SendStreamingMessage"), ("message/send", "SendMessage")):
        body = a2a.rpc(*method, {"message": a2a.message("again", context, task_id=turn.task_id)})
        (frame,) = a2a.post_stream(body)
        assert frame["error"]["code"] == -32004, frame
    # a taskId of another context is invalid, an unknown one not found
    other = a2a.rpc("message/send", "SendMessage", {"message": a2a.message("x", sid(), task_id=turn.task_id)})
    assert a2a.post_stream(other)[0]["error"]["code"] == -32602
    unknown = a2a.rpc("message/send", "SendMessage", {"message": a2a.message("x", context, task_id="nope")})
    assert a2a.post_stream(unknown)[0]["error"]["code"] == -32001


# -- A stream opens with the Task (3.1.2) ----------------------------------------------------
@pytest.mark.parametrize("dialect", ["1.0", "0.3"])
def test_stream_opens_with_the_task(server, http, dialect):
    a2a = A2A(http, server.agent_url, dialect)
    a2a.stream("first frame please", sid())
    first = a2a.last_raw[0]["result"]
    if dialect == "1.0":
        assert set(first) == {"task"}
        task = first["task"]
        assert task["status"]["state"] == "TASK_STATE_SUBMITTED"
        assert task["history"][0]["role"] == "ROLE_USER"
    else:
        assert first["kind"] == "task" and first["status"]["state"] == "submitted"
        assert first["history"][0]["role"] == "user"
    later = [normalize_result(f["result"]) for f in a2a.last_raw[1:]]
    assert all(e["kind"] in ("status-update", "artifact-update") for e in later)


# -- The agent card (8.2) --------------------------------------------------------------------
def test_agent_card_cache_headers(server, http):
    for url in (server.agent_url + ".well-known/agent-card.json", server.base_url + "/.well-known/agent-card.json"):
        resp = http.get(url)
        assert resp.status_code == 200
        etag = resp.headers["etag"]
        assert etag.startswith('W/"') and resp.headers["cache-control"] == "no-cache"
        again = http.get(url, headers={"If-None-Match": etag})
        assert again.status_code == 304 and again.headers["etag"] == etag and not again.content


# -- Version header (3.2.6) ------------------------------------------------------------------
def test_a_1_0_method_without_the_header_is_served_as_1_0(server, http):
    body = {
        "jsonrpc": "2.0",
        "id": 5,
        "method": "SendMessage",
        "params": {"message": {"role": "ROLE_USER", "messageId": uuid.uuid4().hex, "parts": [{"text": "no header"}]}},
    }
    answer = http.post(server.agent_url, json=body).json()  # no A2A-Version
    assert answer["result"]["task"]["status"]["state"] == "TASK_STATE_COMPLETED"
    wrong = http.post(server.agent_url, json=body, headers={"A2A-Version": "2.0"}).json()
    assert wrong["error"]["code"] == -32009
