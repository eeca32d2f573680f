"""A long session on the embedded server: paging returns every task once and in order, rewind and
fork keep the store and ADK in step, and the fork's shortcut copies of stored messages equal what
rendering them afresh gives. The session is seeded with ``bench/seed_turns.py`` (the ADK events
and store rows real turns leave, written in bulk); timings live in ``bench/bench_server_big.py``."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))
from rewindtui.server import EmbeddedServer
from rewindtui.server.service.rewinds import moved_v1_text
from rewindtui.server.shared.paths import APP_NAME
from rewindtui.server.shared.wire import message_v1_text
from seed_turns import seed_session

TURNS = 240
SID = "big"

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def big(tmp_path_factory: pytest.TempPathFactory):
    with EmbeddedServer(tmp_path_factory.mktemp("big")) as srv:
        invocations = srv.call(seed_session(srv.app.state.parts, SID, TURNS))
        yield srv, invocations


def _pages(http, url: str, limit: int) -> list[list[dict]]:
    pages, before = [], ""
    while True:
        params = {"limit": limit, **({"before": before} if before else {})}
        resp = http.get(url, params=params)
        assert resp.status_code == 200, resp.text
        body = resp.json()
        pages.append(body["data"])
        before = body["next_page_token"]
        if not before:
            return pages


def test_rest_pages_return_every_task_once_in_order(big, http):
    srv, invocations = big
    url = f"{srv.api_url}/sessions/{SID}/tasks"
    everything = http.get(url).json()
    assert "next_page_token" not in everything  # without limit: the kagent-shaped answer, unchanged
    full = everything["data"]
    assert [t["metadata"]["kagent_invocation_id"] for t in full] == invocations
    pages = _pages(http, url, 100)
    assert [len(p) for p in pages] == [100, 100, 40]  # newest first, each page oldest first
    assert [t for page in reversed(pages) for t in page] == full  # every task once, histories too
    assert [len(t["history"]) for t in full] == [2] * TURNS


def test_rest_page_parameters_are_checked(big, http):
    srv, _ = big
    url = f"{srv.api_url}/sessions/{SID}/tasks"
    for params, needle in (
        ({"limit": "0"}, "limit"),
        ({"limit": "1001"}, "limit"),
        ({"limit": "ten"}, "limit"),
        ({"before": "x"}, "needs limit"),
        ({"limit": "5", "before": "not-a-token"}, "invalid before"),
    ):
        resp = http.get(url, params=params)
        assert resp.status_code == 400 and needle in resp.json()["error"], (params, resp.text)


def test_list_tasks_pages_return_every_task_once_newest_first(big, http):
    srv, invocations = big
    seen, token = [], ""
    while True:
        params = {"contextId": SID, "pageSize": 100, **({"pageToken": token} if token else {})}
        body = {"jsonrpc": "2.0", "id": 1, "method": "ListTasks", "params": params}
        result = http.post(srv.agent_url, json=body, headers={"A2A-Version": "1.0"}).json()["result"]
        assert result["totalSize"] == TURNS
        seen += result["tasks"]
        token = result["nextPageToken"]
        if not token:
            break
    assert [t["metadata"]["kagent_invocation_id"] for t in seen] == invocations[::-1]
    assert all(len(t["history"]) == 2 for t in seen)


def _visible_invocations(srv: EmbeddedServer) -> list[str]:
    """The invocations ADK's model sees, in order (ADK's own rewind rule)."""
    from google.adk.events._rewind_events import _apply_rewinds  # type: ignore[import-not-found]

    session = srv.call(
        srv.app.state.parts.session_service.get_session(app_name=APP_NAME, user_id="local", session_id=SID)
    )
    return list(
        dict.fromkeys(e.invocation_id for e in _apply_rewinds(session.events) if e.author != "user" or e.content)
    )


def test_rewind_and_fork_of_a_long_session_keep_store_and_adk_in_step(big, http):
    srv, invocations = big
    parts = srv.app.state.parts
    cut = 200
    resp = http.post(f"{srv.api_url}/sessions/{SID}/rewind", json={"rewind_before_invocation_id": invocations[cut]})
    assert resp.status_code == 200, resp.text
    history = resp.json()["data"]["history"]
    assert list(dict.fromkeys(m["metadata"]["kagent_invocation_id"] for m in history)) == invocations[:cut]
    # the store's current conversation, ADK's visible events and the answer agree
    assert srv.call(parts.store.session_invocations(SID)) == invocations[:cut]
    assert [i for i in _visible_invocations(srv) if i in set(invocations)] == invocations[:cut]
    current = http.get(f"{srv.api_url}/sessions/{SID}/tasks").json()["data"]
    assert [t["metadata"].get("kagent_invocation_id") for t in current[:cut]] == invocations[:cut]
    assert srv.call(parts.store.intents(SID)) == []  # the journal entry went with the store's commit

    resp = http.post(f"{srv.api_url}/sessions/{SID}/fork", json={"rewind_before_invocation_id": invocations[150]})
    assert resp.status_code == 201, resp.text
    fork_id = resp.json()["data"]["id"]
    fork = srv.call(parts.session_service.get_session(app_name=APP_NAME, user_id="local", session_id=fork_id))
    assert list(dict.fromkeys(e.invocation_id for e in fork.events)) == invocations[:150]
    (task,) = http.get(f"{srv.api_url}/sessions/{fork_id}/tasks").json()["data"]
    assert [m["messageId"] for m in task["history"]] == [m["messageId"] for m in history[:300]]
    assert {m["contextId"] for m in task["history"]} == {fork_id}
    assert {m["metadata"]["kagent_session_id"] for m in task["history"]} == {fork_id}
    # the fork's 1.0 bodies, copied without a proto round trip, are what a2a-sdk renders
    rows = srv.call(parts.store._fetchall("SELECT body, body_v1 FROM messages WHERE session_id = ?", (fork_id,)))
    assert len(rows) == 300
    assert all(v1 == message_v1_text(json.loads(body)) for body, v1 in rows)
    # the original is untouched by the fork
    assert srv.call(parts.store.session_invocations(SID)) == invocations[:cut]


def test_moved_v1_text_equals_a_fresh_rendering():
    message = {
        "kind": "message",
        "messageId": "m-1",
        "role": "agent",
        "parts": [{"kind": "text", "text": "héllo … 世界"}, {"kind": "data", "data": {"b": 1, "a": [1, 2]}}],
        "contextId": "old-session",
        "taskId": "old-task",
        "metadata": {"kagent_session_id": "old-session", "kagent_invocation_id": "e-1", "z": None, "a": 1.5},
    }
    moved = json.loads(json.dumps(message))
    moved.update(contextId="new-session", taskId="new-task")
    moved["metadata"]["kagent_session_id"] = "new-session"
    assert moved_v1_text(message_v1_text(message), "new-session", "new-task") == message_v1_text(moved)
    assert moved_v1_text(None, "s", "t") is None  # rendered by another a2a-sdk: render afresh
