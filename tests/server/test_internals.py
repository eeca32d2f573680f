"""Internals: the rewind fast path and the ADK session cache change no behaviour; the private names
we lean on still exist; the store's schema migrates; the fork import has a working fallback."""

from __future__ import annotations

import asyncio
import json
import sqlite3
import uuid
from pathlib import Path

import httpx
import pytest
from a2a.compat.v0_3 import conversions
from a2a.utils import json_utils, proto_utils
from google.adk.events.event import Event
from google.adk.events.event_actions import EventActions
from google.adk.sessions import DatabaseSessionService
from google.genai import types
from google.protobuf.json_format import MessageToDict
from jsonrpc.jsonrpc2 import JSONRPC20Response
from pydantic.fields import ModelPrivateAttr
from srvkit import A2A, Api, Turn

from rewindtui.server import EmbeddedServer
from rewindtui.server.http.fast_rewind import render
from rewindtui.server.http.options import ServerOptions
from rewindtui.server.shared.internals import PRIVATE_NAMES, bulk_event_writer, resolve
from rewindtui.server.shared.paths import APP_NAME
from rewindtui.server.shared.wire import (
    RENDER_VERSION,
    dumps,
    effective_events,
    event_to_proto,
    message_v1_text,
    now_iso,
)
from rewindtui.server.storage import adk_sessions
from rewindtui.server.storage.adk_sessions import CachedDatabaseSessionService, sqlite_url
from rewindtui.server.storage.store import MIGRATIONS, SCHEMA_VERSION, SchemaTooNew, Store


def test_fast_path_renders_what_a2a_sdk_renders(server, make_a2a, make_api):
    """The spliced frame equals a2a-sdk's own rendering of the same Task, in both dialects, exactly."""
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
    assert fast_03 == sdk_03

    fast_10 = render("1.0", "r-1", task, "[" + ",".join(message_v1_text(m) for m in history) + "]")
    sdk_10 = JSONRPC20Response(result=MessageToDict(stream_response, preserving_proto_field_name=False), _id="r-1")
    # the same JSON (metadata is a protobuf map: its key order is not stable from one proto to the next)
    assert json.loads(fast_10) == json.loads(json_utils.dumps(sdk_10.data))


@pytest.mark.parametrize("fast", [True, False])
def test_rewind_frames_for_a_1_0_client_are_1_0(tmp_path: Path, http: httpx.Client, fast: bool):
    """The raw 1.0 rewind frame (fast path or a2a-sdk's) is what a2a-sdk's GetTask says of that Task.

    No normalisation: a 0.3-shaped history (``kind``, ``role: "agent"``) would differ.
    """
    with EmbeddedServer(tmp_path / "d", options=ServerOptions(fast_rewind=fast)) as srv:
        a2a = A2A(http, srv.agent_url, "1.0")
        turns = [Turn(a2a.stream(t, "frames")) for t in ("one", "weather in Oslo", "three")]
        a2a.rewind("frames", turns[2].invocation_id)
        (frame,) = a2a.last_raw
        rewound = frame["result"]["task"]
        body = {"jsonrpc": "2.0", "id": 2, "method": "GetTask", "params": {"id": rewound["id"]}}
        stored = http.post(srv.agent_url, json=body, headers={"A2A-Version": "1.0"}).json()["result"]
        assert rewound == stored
        history = rewound["history"]
        assert [m["messageId"] for m in history] == turns[0].message_ids + turns[1].message_ids
        assert {m["role"] for m in history} == {"ROLE_USER", "ROLE_AGENT"}
        assert not any("kind" in m or any("kind" in p for p in m["parts"]) for m in history)
        assert any("data" in p for m in history for p in m["parts"])  # the tool call, as a 1.0 data part


@pytest.mark.parametrize("fast", ["1", "0"])
def test_rewind_with_and_without_fast_path(tmp_path: Path, monkeypatch, http: httpx.Client, fast: str):
    monkeypatch.setenv("REWINDTUI_FAST_REWIND", fast)  # read once, when the server is created
    with EmbeddedServer(tmp_path / "d") as srv:
        assert srv.app.state.parts.options.fast_rewind is (fast == "1")
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

        # the writer's view first (a caller that comes while a whole read is under way shares it)
        writer_view = await svc.get_session(app_name=APP_NAME, user_id="u", session_id="s")
        svc.clear_cache()
        monkeypatch.setattr(DatabaseSessionService, "get_session", slow_get)
        reader = asyncio.create_task(svc.get_session(app_name=APP_NAME, user_id="u", session_id="s"))
        await read_done.wait()  # the read has happened, its result is not returned yet
        monkeypatch.setattr(DatabaseSessionService, "get_session", original)
        await svc.append_event(writer_view, _event("e-1", "user", "written meanwhile"))
        release.set()
        stale = await reader
        assert stale.events == []
        latest = await svc.get_session(app_name=APP_NAME, user_id="u", session_id="s")
        assert [e.invocation_id for e in latest.events] == ["e-1"]
    finally:
        await svc.close()


def test_reading_a_conversation_loads_no_agent_session(tmp_path: Path, http: httpx.Client):
    """Opening a conversation is answered from the store; the agent's session (every event, in
    memory) is loaded by a turn, not by a read (it was, in the background: on a 10,000-turn
    session the server's memory doubled on opening, while a rewind reads only the events after
    its point and the first turn's time is ADK building its request)."""
    data_dir = tmp_path / "d"
    with EmbeddedServer(data_dir) as srv:
        Turn(A2A(http, srv.agent_url, "0.3").stream("hello", "read"))
    with EmbeddedServer(data_dir) as srv:
        service = srv.app.state.parts.session_service
        whole_reads: list[str] = []
        original = service.get_session

        async def counting(**kwargs):
            if kwargs.get("config") is None:
                whole_reads.append(kwargs["session_id"])
            return await original(**kwargs)

        service.get_session = counting
        api = Api(http, srv.api_url)
        api.tasks("read")
        api.tasks("read")  # any work the first read left on the server's loop has begun by now
        assert whole_reads == []
        assert not service.is_cached(APP_NAME, "local", "read")
        Turn(A2A(http, srv.agent_url, "0.3").stream("again", "read"))
        assert whole_reads and set(whole_reads) == {"read"}  # the turn loads it


@pytest.mark.parametrize("path", ["one transaction", "fallback", "copied rows", "copied rows, source lacks them"])
async def test_import_events_matches_appending_one_by_one(tmp_path: Path, monkeypatch, path: str):
    if path == "fallback":  # an ADK without the private pieces: event by event, same result
        monkeypatch.setattr("rewindtui.server.storage.adk_sessions.bulk_event_writer", lambda service: None)
    copied: list[bool] = []
    copy_rows = adk_sessions.copy_event_rows

    async def spy(*args):
        copied.append(await copy_rows(*args))
        return copied[-1]

    monkeypatch.setattr(adk_sessions, "copy_event_rows", spy)
    source = {"copied rows": (APP_NAME, "u", "slow"), "copied rows, source lacks them": (APP_NAME, "u", "nowhere")}
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
        await svc.import_events(bulk, [e.model_copy(deep=True) for e in events], copied_from=source.get(path))
        fast = await svc.get_session(app_name=APP_NAME, user_id="u", session_id="bulk")
        # the rows were copied inside the database only when the source holds every event
        assert copied == {"copied rows": [True], "copied rows, source lacks them": [False]}.get(path, [])

        def dump(event: Event) -> dict:
            data = event.model_dump(exclude={"timestamp"})
            if path == "fallback":  # event by event, the copies carry no shared (user:/app:) deltas
                delta = data["actions"]["state_delta"]
                data["actions"]["state_delta"] = {k: v for k, v in delta.items() if not k.startswith("user:")}
            return data

        assert [dump(e) for e in fast.events] == [dump(e) for e in slow.events]
        assert {k: v for k, v in fast.state.items() if not k.startswith("user:")} == {"n": 3, "gone": None}
        # ...and the import does not wind it back by replaying the copied events' deltas
        assert fast.state["user:shared"] == 99
        # the imported session takes new events normally
        await svc.append_event(fast, _event("e-9", "user", "after"))
        assert len((await svc.get_session(app_name=APP_NAME, user_id="u", session_id="bulk")).events) == 9
    finally:
        await svc.close()


# -- private names ------------------------------------------------------------------------------
@pytest.mark.parametrize("module, path", PRIVATE_NAMES)
def test_private_names_we_use_still_exist(module: str, path: str):
    """Fails loudly on an ADK/a2a-sdk upgrade that drops a private name we lean on (internals.py)."""
    target = resolve(module, path)
    # a method or function, a pydantic private attribute (its default, as the class holds it), or a
    # constant (ADK's artifact reference depth)
    assert callable(target) or isinstance(target, ModelPrivateAttr | int), f"{module}.{path} is gone: see internals.py"


async def test_the_bulk_writer_is_available_on_this_adk(tmp_path: Path):
    svc = CachedDatabaseSessionService(sqlite_url(str(tmp_path / "adk.db")))
    try:
        await svc.prepare_tables()
        writer = bulk_event_writer(svc)
        assert writer is not None and hasattr(writer.storage_event, "from_event")
        assert writer.session_state_delta({"a": 1, "user:b": 2, "app:c": 3, "temp:d": 4}) == {"a": 1}
    finally:
        await svc.close()


def test_effective_events_agree_with_adk(tmp_path: Path):
    """``wire.effective_events`` mirrors ADK's own rewind walk (``_rewind_events._apply_rewinds``)."""
    apply_rewinds = resolve("google.adk.events._rewind_events", "_apply_rewinds")

    def rewind(target: str) -> Event:
        return Event(
            invocation_id=f"r-{target}", author="user", actions=EventActions(rewind_before_invocation_id=target)
        )

    timeline = [
        _event("e-1", "user", "a"),
        _event("e-1", "demo", "A"),
        _event("e-2", "user", "b"),
        _event("e-2", "demo", "B"),
        rewind("e-2"),
        _event("e-3", "user", "c"),
        _event("e-3", "demo", "C"),
        _event("e-4", "user", "d"),
        rewind("e-3"),
        rewind("e-9"),  # an unknown target drops only itself
        _event("e-5", "user", "e"),
    ]
    for end in range(len(timeline) + 1):
        ours = [e.id for e in effective_events(timeline[:end])]
        assert ours == [e.id for e in apply_rewinds(timeline[:end])], end


# -- the store's schema ---------------------------------------------------------------------------
def _v1_file(path: Path, rows: list[tuple[str, str, str]]) -> None:
    """A store file as rewindtui wrote it before the schema was versioned (user_version 0)."""
    with sqlite3.connect(path) as db:
        db.executescript(MIGRATIONS[1])
        db.execute(
            "INSERT INTO sessions VALUES ('s', 'local', 'old', 'local/demo', '2026-01-01T00:00:00Z', "
            "'2026-01-01T00:00:00Z', NULL, NULL)"
        )
        task = {"kind": "task", "id": "t", "contextId": "s", "status": {"state": "completed"}}
        db.execute(
            "INSERT INTO tasks (id, session_id, user_id, kind, invocation_id, state, created_at, updated_at, body) "
            "VALUES ('t', 's', 'local', 'turn', 'e-1', 'completed', '2026-01-01T00:00:00Z', '2026-01-01T00:00:00Z', ?)",
            (json.dumps(task),),
        )
        for message_id, body, body_v1 in rows:
            db.execute(
                "INSERT INTO messages (session_id, task_id, message_id, invocation_id, role, body, body_v1) "
                "VALUES ('s', 't', ?, 'e-1', 'user', ?, ?)",
                (message_id, body, body_v1),
            )


async def test_store_migrates_an_unversioned_file_and_rerenders_it(tmp_path: Path):
    path = tmp_path / "rewindtui.db"
    message = {
        "kind": "message",
        "messageId": "m-1",
        "role": "user",
        "contextId": "s",
        "taskId": "t",
        "parts": [{"kind": "text", "text": "héllo"}, {"kind": "data", "data": {"n": 1}}],
        "metadata": {"kagent_invocation_id": "e-1"},
    }
    hand_rendered = '{"messageId":"m-1","role":"ROLE_USER","parts":[{"text":"héllo"}]}'  # an old, partial rendering
    _v1_file(path, [("m-1", dumps(message), hand_rendered)])
    store = Store(path)
    await store.open()
    try:
        (task,) = await store.session_tasks("s")
        assert await store.task_history_bodies(task, v1=True) == [message_v1_text(message)]
        assert await store.intents() == []  # the journal exists
    finally:
        await store.close()
    with sqlite3.connect(path) as db:
        assert db.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION
        assert db.execute("SELECT render_version FROM messages").fetchall() == [(RENDER_VERSION,)]
        # a row another a2a-sdk rendered is rendered again on the next open
        db.execute("UPDATE messages SET body_v1 = '{}', render_version = 'a2a-sdk 0.0.1'")
    store = Store(path)
    await store.open()
    try:
        (task,) = await store.session_tasks("s")
        assert await store.task_history_bodies(task, v1=True) == [message_v1_text(message)]
    finally:
        await store.close()


async def test_store_refuses_a_newer_schema(tmp_path: Path):
    path = tmp_path / "rewindtui.db"
    with sqlite3.connect(path) as db:
        db.execute(f"PRAGMA user_version={SCHEMA_VERSION + 1}")
    store = Store(path)
    with pytest.raises(SchemaTooNew, match="written by a newer rewindtui"):
        await store.open()


def test_server_starts_on_an_unversioned_data_dir(tmp_path: Path, http: httpx.Client):
    data = tmp_path / "d"
    data.mkdir()
    with EmbeddedServer(data) as srv:  # ADK's database, holding the session as that version left it
        assert http.post(srv.api_url + "/sessions", json={"id": "s"}, headers={"X-User-Id": "local"}).status_code < 300
    for side in ("", "-wal", "-shm"):
        (data / f"rewindtui.db{side}").unlink(missing_ok=True)
    message = {"kind": "message", "messageId": "m-1", "role": "user", "parts": [{"kind": "text", "text": "old"}]}
    _v1_file(data / "rewindtui.db", [("m-1", dumps(message), "{}")])
    with EmbeddedServer(data) as srv:
        (task,) = Api(http, srv.api_url).tasks("s")
        assert [m["messageId"] for m in task["history"]] == ["m-1"]
        body = {"jsonrpc": "2.0", "id": 1, "method": "GetTask", "params": {"id": "t"}}
        got = http.post(srv.agent_url, json=body, headers={"A2A-Version": "1.0"}).json()["result"]
        assert got["history"][0]["parts"] == [{"text": "old"}]
