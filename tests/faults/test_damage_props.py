"""Property: one random row of either store damaged in any kind affects that item only.

A session of four turns is written once (a real embedded server on real SQLite files); each
example copies it, damages one row -- a message, a task, an ADK event or an ADK session state
-- in one of the kinds of :mod:`damage`, starts a server on the copy and checks that everything
else reads exactly as before: every other message and task over REST byte for byte, the other
turns' words as the model sees them on the next turn, and the next turn itself (refused in one
line, naming ``rewindtui repair``, only when the state cannot be read)."""

from __future__ import annotations

import ast
import asyncio
import json
import shutil
import sqlite3
from pathlib import Path
from typing import Any

import httpx
import pytest
from damage import KINDS, damage_event, damage_message, damage_state, damage_task
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kit.servers import session_on_disk
from rewindtui.base.tls import default_context
from rewindtui.server import EmbeddedServer

pytestmark = [pytest.mark.slow, pytest.mark.timeout(600)]

WORDS = ["alpha words", "bravo words", "charlie words", "delta words"]
STORES = ("message", "task", "event", "state")


@pytest.fixture(scope="module")
def template(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    data = tmp_path_factory.mktemp("template")
    sid = asyncio.run(session_on_disk(data, *WORDS))
    return data, sid


def _tasks(srv: EmbeddedServer, sid: str) -> list[dict[str, Any]]:
    resp = httpx.get(
        f"{srv.api_url}/sessions/{sid}/tasks", headers={"X-User-Id": "local"}, timeout=30, verify=default_context()
    )
    assert resp.status_code == 200, resp.text[:300]
    return json.loads(resp.text)["data"]


def _send(srv: EmbeddedServer, sid: str, text: str) -> dict[str, Any]:
    body = {
        "jsonrpc": "2.0",
        "id": "1",
        "method": "message/send",
        "params": {
            "message": {
                "kind": "message",
                "role": "user",
                "messageId": f"m-{text}",
                "contextId": sid,
                "parts": [{"kind": "text", "text": text}],
            }
        },
    }
    resp = httpx.post(srv.agent_url, json=body, headers={"X-User-Id": "local"}, timeout=60, verify=default_context())
    return resp.json()


def _targets(data: Path) -> dict[str, list[str]]:
    """What each store's rows can be picked by: a text unique to the row."""
    with sqlite3.connect(data / "adk_sessions.db") as adk:
        events = [r[0] for r in adk.execute("SELECT event_data FROM events ORDER BY timestamp")]
    adk.close()
    words = [w for w in WORDS] + [f"You said: {w}" for w in WORDS]
    return {
        "message": words,
        "task": WORDS,
        "event": [w for w in words if sum(w in e for e in events) >= 1],
        "state": [""],
    }


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(store=st.sampled_from(STORES), kind=st.sampled_from(KINDS), pick=st.integers(0, 7))
def test_one_damaged_row_affects_only_its_item(template, tmp_path_factory, store, kind, pick):
    source, sid = template
    data = tmp_path_factory.mktemp("copy")
    shutil.copytree(source, data, dirs_exist_ok=True)
    with EmbeddedServer(source) as srv:  # the truth, read from the untouched template
        before = _tasks(srv, sid)
    targets = _targets(data)[store]
    target = targets[pick % len(targets)]
    damaged: Any = None
    if store == "message":
        damaged = damage_message(data, target, kind)
    elif store == "task":
        damaged = damage_task(data, target, kind)
    elif store == "event":
        damaged = damage_event(data, target, kind)
    else:
        damage_state(data, sid, kind)
    with EmbeddedServer(data) as srv:
        after = _tasks(srv, sid)
        answer = _send(srv, sid, "echo words")

    # the store's side: everything but the damaged item reads as before
    assert [t["id"] for t in after] == [t["id"] for t in before]
    for old, new in zip(before, after, strict=True):
        if store == "task" and new["id"] == damaged:
            assert new["metadata"]["rewindtui_unreadable"]
            new = {**new, "history": new["history"][:-1]}  # its note on the damage
            assert new["history"] == old["history"]
            continue
        if store == "message":
            placeholders = [m for m in new["history"] if (m.get("metadata") or {}).get("rewindtui_unreadable")]
            assert len(placeholders) <= 1
            kept = [m for m in new["history"] if m not in placeholders]
            assert all(m in old["history"] for m in kept)
            assert len(old["history"]) - len(kept) == len(placeholders)
            continue
        assert new == old

    # the agent's side: the next turn is answered with every other turn's words, or (state only)
    # refused in one line naming the repair
    if store == "state":
        text = json.dumps(answer)
        assert f"rewindtui repair --data-dir {data} {sid}" in text and "SELECT" not in text, text[:400]
        return
    status = answer["result"]["status"]
    assert status["state"] == "completed", answer
    reply = answer["result"]["history"][-1]["parts"][0]["text"] if answer["result"].get("history") else ""
    reply = reply or json.dumps(answer["result"].get("artifacts"))
    seen = ast.literal_eval(reply.split("history: ", 1)[1].split("; weather_calls", 1)[0])
    expected = [*WORDS, "echo words"]
    if store == "event" and target in WORDS and kind != "missing":
        # the damaged event was that user turn's own words: the model sees its placeholder instead
        assert [w for w in seen if w in expected] == [w for w in expected if w != target], seen
        assert any("could not be read" in str(w) for w in seen), seen
    else:  # a missing author is read as the agent's: the event is kept whole
        assert seen == expected, seen
