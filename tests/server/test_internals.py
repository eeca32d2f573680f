"""The two performance pieces must not change behaviour: the rewind fast path and the ADK session cache."""

from __future__ import annotations

import asyncio
import json
import uuid
from pathlib import Path

import httpx
import pytest
from a2a.compat.v0_3 import conversions
from a2a.utils import proto_utils
from google.adk.events.event import Event
from google.adk.events.event_actions import EventActions
from google.adk.sessions import DatabaseSessionService
from google.genai import types
from google.protobuf.json_format import MessageToDict
from srvkit import A2A, Api, Turn

from rewindtui.server import EmbeddedServer
from rewindtui.server.adk_sessions import CachedDatabaseSessionService, sqlite_url
from rewindtui.server.fast_rewind import render
from rewindtui.server.paths import APP_NAME
from rewindtui.server.wire import dumps, event_to_proto, message_v1_text, now_iso


def _numbers_as_floats(value):
    if isinstance(value, bool) or value is None:
        return value
    if isinstance(value, int | float):
        return float(value)
    if isinstance(value, list):
        return [_numbers_as_floats(v) for v in value]
    if isinstance(value, dict):
        return {k: _numbers_as_floats(v) for k, v in value.items()}
    return value


def test_fast_path_renders_what_a2a_sdk_renders(server, make_a2a, make_api):
    """The spliced frame equals a2a-sdk's own rendering of the same Task, in both dialects."""
    a2a, api = make_a2a(server), make_api(server)
    sid = f"render-{uuid.uuid4().hex[:8]}"
    Turn(a2a.stream("hello", sid))
    Turn(a2a.stream("weather in Kyoto", sid))
    history = api.merged(sid)
    assert any(p["kind"] == "data" for m in history for p in m["parts"])
    task = {
        "kind": "task",
        "id": "t-1",
        "contextId": sid,
        "status": {"state": "completed", "timestamp": now_iso()},
        "metadata": {"rewindtui_effective_history": True, "kagent_session_id": sid},
    }
    stream_response = proto_utils.to_stream_response(event_to_proto({**task, "history": history}))

    fast_03 = json.loads(render("0.3", "r-1", task, "[" + ",".join(dumps(m) for m in history) + "]"))
    sdk_03 = conversions.to_compat_stream_response(stream_response, "r-1").model_dump(
        mode="json", by_alias=True, exclude_none=True
    )
    assert _numbers_as_floats(fast_03) == _numbers_as_floats(sdk_03)

    fast_10 = json.loads(render("1.0", "r-1", task, "[" + ",".join(message_v1_text(m) for m in history) + "]"))
    sdk_10 = {"result": MessageToDict(stream_response, preserving_proto_field_name=False), "id": "r-1", "jsonrpc": "2.0"}
    assert _numbers_as_floats(fast_10) == _numbers_as_floats(sdk_10)


@pytest.mark.parametrize("fast", ["1", "0"])
def test_rewind_with_and_without_fast_path(tmp_path: Path, monkeypatch, http: httpx.Client, fast: str):
    monkeypatch.setenv("REWINDTUI_FAST_REWIND", fast)
    with EmbeddedServer(tmp_path / "d") as srv:
        api = Api(http, srv.api_url)
        for dialect in ("0.3", "1.0"):
            a2a, sid = A2A(http, srv.agent_url, dialect), f"s-{dialect}"
            turns = [Turn(a2a.stream(t, sid)) for t in ("one", "weather in Oslo", "three")]
            (task,) = a2a.rewind(sid, turns[1].invocation_id)
            assert task["kind"] == "task" and task["metadata"]["rewindtui_effective_history"] is True
            assert [m["messageId"] for m in task["history"]] == turns[0].message_ids
            assert api.merged_ids(sid) == turns[0].message_ids
            (refused,) = a2a.rewind(sid, "header_update")
            assert refused["status"]["state"] == "failed"


def _event(inv: str, author: str, text: str, delta: dict | None = None) -> Event:
    role = "user" if author == "user" else "model"
    return Event(
        invocation_id=inv,
        author=author,
        content=types.Content(role=role, parts=[types.Part(text=text)]),
        actions=EventActions(state_delta=delta or {}),
    )


async def test_session_cache_matches_the_database(tmp_path: Path):
    svc = CachedDatabaseSessionService(sqlite_url(str(tmp_path / "adk.db")))
    try:
        await svc.create_session(app_name=APP_NAME, user_id="u", session_id="s")
        session = await svc.get_session(app_name=APP_NAME, user_id="u", session_id="s")
        for i in range(5):
            await svc.append_event(session, _event(f"e-{i}", "user", f"m{i}"))
            session = await svc.get_session(app_name=APP_NAME, user_id="u", session_id="s")  # from the cache
            await svc.append_event(session, _event(f"e-{i}", "demo", f"a{i}", {"n": i}))
        cached = await svc.get_session(app_name=APP_NAME, user_id="u", session_id="s")
        fresh = await DatabaseSessionService.get_session(svc, app_name=APP_NAME, user_id="u", session_id="s")
        assert [e.id for e in cached.events] == [e.id for e in fresh.events]
        assert cached.state == fresh.state == {"n": 4}
        # callers get copies: mutating one does not touch the cache
        cached.events.clear()
        cached.state["n"] = 99
        again = await svc.get_session(app_name=APP_NAME, user_id="u", session_id="s")
        assert len(again.events) == 10 and again.state == {"n": 4}
    finally:
        await svc.close()


async def test_session_cache_ignores_a_read_that_overlapped_a_write(tmp_path: Path, monkeypatch):
    svc = CachedDatabaseSessionService(sqlite_url(str(tmp_path / "adk.db")))
    try:
        await svc.create_session(app_name=APP_NAME, user_id="u", session_id="s")
        svc.clear_cache()
        original = DatabaseSessionService.get_session
        read_done, release = asyncio.Event(), asyncio.Event()

        async def slow_get(self, **kw):
            result = await original(self, **kw)
            read_done.set()
            await release.wait()
            return result

        monkeypatch.setattr(DatabaseSessionService, "get_session", slow_get)
        reader = asyncio.create_task(svc.get_session(app_name=APP_NAME, user_id="u", session_id="s"))
        await read_done.wait()  # the read has happened, its result is not returned yet
        monkeypatch.setattr(DatabaseSessionService, "get_session", original)
        writer_view = await svc.get_session(app_name=APP_NAME, user_id="u", session_id="s")
        await svc.append_event(writer_view, _event("e-1", "user", "written meanwhile"))
        release.set()
        stale = await reader
        assert stale.events == []
        latest = await svc.get_session(app_name=APP_NAME, user_id="u", session_id="s")
        assert [e.invocation_id for e in latest.events] == ["e-1"]
    finally:
        await svc.close()


def test_reading_a_conversation_warms_the_session(tmp_path: Path, http: httpx.Client):
    data_dir = tmp_path / "d"
    with EmbeddedServer(data_dir) as srv:
        Turn(A2A(http, srv.agent_url, "0.3").stream("hello", "warm"))
    with EmbeddedServer(data_dir) as srv:
        parts = srv.app.state.parts
        assert not parts.session_service.is_cached(APP_NAME, "local", "warm")
        Api(http, srv.api_url).tasks("warm")

        async def warmed() -> bool:
            while parts.service.sessions.warming:
                await asyncio.sleep(0)
            return parts.session_service.is_cached(APP_NAME, "local", "warm")

        assert srv.call(warmed(), timeout=30)


async def test_import_events_matches_appending_one_by_one(tmp_path: Path):
    svc = CachedDatabaseSessionService(sqlite_url(str(tmp_path / "adk.db")))
    try:
        events = []
        for i in range(4):
            events.append(_event(f"e-{i}", "user", f"m{i}"))
            events.append(_event(f"e-{i}", "demo", f"a{i}", {"n": i, "gone": None if i == 3 else i, "user:shared": i}))
        one_by_one = await svc.create_session(app_name=APP_NAME, user_id="u", session_id="slow")
        for event in events:
            await svc.append_event(one_by_one, event.model_copy(deep=True))
        slow = await DatabaseSessionService.get_session(svc, app_name=APP_NAME, user_id="u", session_id="slow")
        # shared (user:) state moves on after those events...
        await svc.append_event(one_by_one, _event("e-x", "demo", "later", {"user:shared": 99}))

        await svc.create_session(app_name=APP_NAME, user_id="u", session_id="bulk")
        bulk = await svc.get_session(app_name=APP_NAME, user_id="u", session_id="bulk")
        await svc.import_events(bulk, [e.model_copy(deep=True) for e in events])
        fast = await svc.get_session(app_name=APP_NAME, user_id="u", session_id="bulk")
        assert [e.model_dump(exclude={"timestamp"}) for e in fast.events] == [
            e.model_dump(exclude={"timestamp"}) for e in slow.events
        ]
        assert {k: v for k, v in fast.state.items() if not k.startswith("user:")} == {"n": 3, "gone": None}
        # ...and the import does not wind it back by replaying the copied events' deltas
        assert fast.state["user:shared"] == 99
        # the imported session takes new events normally
        await svc.append_event(fast, _event("e-9", "user", "after"))
        assert len((await svc.get_session(app_name=APP_NAME, user_id="u", session_id="bulk")).events) == 9
    finally:
        await svc.close()
