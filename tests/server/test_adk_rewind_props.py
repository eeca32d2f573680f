"""Rewind, redo and fork from replay checkpoints give ADK's own answer (``storage/adk_rewind.py``).

A hypothesis property: random sessions -- turns with state changes (session, ``user:``, ``app:``
and ``temp:`` keys, deletions), artifacts (session and ``user:`` ones), tool calls, approvals,
earlier rewinds and redos (some by ADK's ``Runner.rewind_async``, some by ours), forks continued
on -- written to a real SQLite database through the server's session service, with checkpoints
every few events so they are crossed. At a random point the database and the artifact folder are
copied; google-adk's own ``Runner.rewind_async`` (on a plain ``DatabaseSessionService``) rewinds
the copy, ours rewinds the original; the rewind events, the artifacts they restored, and the
sessions read back afterwards must be equal. A fork made from checkpoints must equal the fork made
from ADK's full read (``import_events``).

And a bound: a rewind near the end of a long session reads at most a checkpoint interval of
events (counted by the index), not the session.
"""

from __future__ import annotations

import asyncio
import shutil
import sqlite3
import time
import uuid
from pathlib import Path
from typing import Any

import pytest
from google.adk.agents.llm_agent import LlmAgent
from google.adk.artifacts.file_artifact_service import FileArtifactService
from google.adk.events.event import Event
from google.adk.events.event_actions import EventActions
from google.adk.runners import Runner
from google.adk.sessions import DatabaseSessionService
from google.genai import types
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from rewindtui.server.storage.adk_sessions import CachedDatabaseSessionService, sqlite_url

APP, USER = "app", "u"
KEYS = ["a", "b", "c", "user:u1", "app:g", "temp:t"]
FILES = ["f1.txt", "f2.txt", "user:shared.txt"]
values = st.one_of(st.none(), st.integers(0, 3), st.text("xy", max_size=2), st.lists(st.integers(0, 2), max_size=2))
turns = st.fixed_dictionaries(
    {
        "state": st.dictionaries(st.sampled_from(KEYS), values, max_size=3),
        "tool_state": st.dictionaries(st.sampled_from(KEYS), values, max_size=2),
        "artifacts": st.lists(st.sampled_from(FILES), max_size=2),
        "tool": st.booleans(),
        "approval": st.booleans(),
    }
)
ops = st.lists(
    st.one_of(
        st.tuples(st.just("turn"), turns),
        st.tuples(st.just("rewind"), st.integers(0, 10_000), st.booleans()),
        st.tuples(st.just("redo"), st.booleans()),
        st.tuples(st.just("fork"), st.integers(0, 10_000)),
        st.tuples(st.just("late"), st.integers(0, 10_000), st.dictionaries(st.sampled_from(KEYS), values, max_size=2)),
    ),
    min_size=1,
    max_size=14,
)


def _agent() -> LlmAgent:
    return LlmAgent(name="agent", model="never-called")


class World:
    """A session service (ours) and an artifact folder on a temporary directory."""

    def __init__(self, root: Path, every: int) -> None:
        self.root = root
        self.db = root / "adk.db"
        self.arts_dir = root / "artifacts"
        self.service = CachedDatabaseSessionService(sqlite_url(str(self.db)))
        self.service.rewind_every = every
        self.arts = FileArtifactService(root_dir=self.arts_dir)
        self.runner = Runner(app_name=APP, agent=_agent(), session_service=self.service, artifact_service=self.arts)
        self.last = 0.0

    def tick(self) -> float:
        """A timestamp after every earlier one, by the real clock (ADK stamps rewind events with it)."""
        while (now := time.time()) < self.last + 1e-5:
            pass
        self.last = now
        return now

    async def append(self, sid: str, **fields: Any) -> Event:
        session = await self.service.get_session(app_name=APP, user_id=USER, session_id=sid)
        assert session is not None
        event = Event(timestamp=self.tick(), **fields)
        await self.service.append_event(session, event)
        return event

    async def turn(self, sid: str, spec: dict[str, Any], n: int) -> None:
        inv = f"e-{uuid.uuid4()}"
        text = types.Content(role="user", parts=[types.Part(text=f"turn {n}")])
        await self.append(sid, invocation_id=inv, author="user", content=text)
        if spec["tool"]:
            call = types.Part(function_call=types.FunctionCall(id=f"c{n}", name="weather", args={"n": n}))
            await self.append(
                sid,
                invocation_id=inv,
                author="agent",
                content=types.Content(role="model", parts=[call]),
                actions=EventActions(state_delta=dict(spec["tool_state"])),
            )
            done = types.Part(function_response=types.FunctionResponse(id=f"c{n}", name="weather", response={"ok": n}))
            await self.append(sid, invocation_id=inv, author="agent", content=types.Content(role="user", parts=[done]))
        if spec["approval"]:
            ask = types.Part(
                function_call=types.FunctionCall(id=f"q{n}", name="adk_request_confirmation", args={"hint": "ok?"})
            )
            await self.append(sid, invocation_id=inv, author="agent", content=types.Content(role="model", parts=[ask]))
            yes = types.Part(
                function_response=types.FunctionResponse(
                    id=f"q{n}", name="adk_request_confirmation", response={"confirmed": True}
                )
            )
            await self.append(sid, invocation_id=inv, author="user", content=types.Content(role="user", parts=[yes]))
        versions: dict[str, int] = {}
        for name in spec["artifacts"]:
            versions[name] = await self.arts.save_artifact(
                app_name=APP, user_id=USER, session_id=sid, filename=name, artifact=types.Part(text=f"{name}@{n}")
            )
        answer = types.Content(role="model", parts=[types.Part(text=f"answer {n}")])
        await self.append(
            sid,
            invocation_id=inv,
            author="agent",
            content=answer,
            actions=EventActions(state_delta=dict(spec["state"]), artifact_delta=versions),
        )

    async def events(self, sid: str) -> list[Event]:
        session = await self.service.get_session(app_name=APP, user_id=USER, session_id=sid)
        assert session is not None
        return session.events

    async def rewind(self, sid: str, before: str, ours: bool) -> None:
        if ours:
            event = await self.service.rewind(
                app_name=APP, user_id=USER, session_id=sid, before=before, artifact_service=self.arts
            )
            assert event is not None, "the checkpoint path was not taken"
        else:
            await self.runner.rewind_async(user_id=USER, session_id=sid, rewind_before_invocation_id=before)

    def copy_to(self, target: Path) -> Path:
        """A consistent copy of the database (SQLite's backup) and of the artifact folder."""
        target.mkdir()
        with sqlite3.connect(self.db) as src, sqlite3.connect(target / "adk.db") as dst:
            src.backup(dst)
        if self.arts_dir.exists():
            shutil.copytree(self.arts_dir, target / "artifacts")
        return target


def _invocations(events: list[Event]) -> list[str]:
    return list(dict.fromkeys(e.invocation_id for e in events))


async def _fresh(db: Path, *sids: str) -> list[Any]:
    """The sessions ``sids`` as a fresh plain ``DatabaseSessionService`` on ``db`` reads them (one
    service for them all: it keeps nothing between reads)."""
    service = DatabaseSessionService(sqlite_url(str(db)))
    try:
        return [await service.get_session(app_name=APP, user_id=USER, session_id=sid) for sid in sids]
    finally:
        await service.close()


async def _scenario(root: Path, initial: dict[str, Any], steps: list[Any], every: int, pick: int) -> None:
    (root / "ours").mkdir()
    world = World(root / "ours", every)
    sid = "s0"
    await world.service.create_session(app_name=APP, user_id=USER, session_id=sid, state=dict(initial))
    n = 0
    try:
        for step in steps:
            events = await world.events(sid)
            invocations = _invocations(events)
            if step[0] == "turn":
                n += 1
                await world.turn(sid, step[1], n)
            elif step[0] == "rewind" and invocations:
                await world.rewind(sid, invocations[step[1] % len(invocations)], ours=step[2])
            elif step[0] == "redo":
                rewinds = [e for e in events if e.actions.rewind_before_invocation_id]
                if rewinds:
                    await world.rewind(sid, rewinds[-1].invocation_id, ours=step[1])
            elif step[0] == "late" and len(events) >= 2:
                # an event stored after others but stamped between two of them (ADK orders by time)
                i = step[1] % (len(events) - 1)
                session = await world.service.get_session(app_name=APP, user_id=USER, session_id=sid)
                assert session is not None
                late = Event(
                    invocation_id=events[i].invocation_id,
                    author="agent",
                    timestamp=(events[i].timestamp + events[i + 1].timestamp) / 2,
                    actions=EventActions(state_delta=dict(step[2])),
                )
                await world.service.append_event(session, late)
            elif step[0] == "fork" and invocations:
                new = f"s{n}-{uuid.uuid4().hex[:6]}"
                made = await world.service.fork(
                    app_name=APP,
                    user_id=USER,
                    session_id=sid,
                    before=invocations[step[1] % len(invocations)],
                    new_session_id=new,
                )
                assert made is not None
                sid = new
        n += 1
        await world.turn(
            sid, {"state": {"z": n}, "tool_state": {}, "artifacts": ["f1.txt"], "tool": False, "approval": False}, n
        )
        events = await world.events(sid)
        target = _invocations(events)[pick % len(_invocations(events))]

        # on a copy: the fork as it was made before checkpoints (from ADK's full read, the rows
        # copied by ``import_events``), then ADK's own rewind
        copy = world.copy_to(root / "adk")
        before_service = CachedDatabaseSessionService(sqlite_url(str(copy / "adk.db")))
        try:
            full = await before_service.get_session(app_name=APP, user_id=USER, session_id=sid)
            assert full is not None
            cut = next(i for i, e in enumerate(full.events) if e.invocation_id == target)
            forked = await before_service.create_session(app_name=APP, user_id=USER, session_id="fork")
            await before_service.import_events(forked, full.events[:cut], copied_from=(APP, USER, sid))
        finally:
            await before_service.close()
        adk_service = DatabaseSessionService(sqlite_url(str(copy / "adk.db")))
        adk_arts = FileArtifactService(root_dir=copy / "artifacts")
        try:
            runner = Runner(app_name=APP, agent=_agent(), session_service=adk_service, artifact_service=adk_arts)
            await runner.rewind_async(user_id=USER, session_id=sid, rewind_before_invocation_id=target)
        finally:
            await adk_service.close()

        # ours on the original
        made = await world.service.fork(
            app_name=APP, user_id=USER, session_id=sid, before=target, new_session_id="fork"
        )
        if made is None:  # events stored out of time order: declined, so the service forks the whole session
            whole = await world.service.get_session(app_name=APP, user_id=USER, session_id=sid)
            assert whole is not None
            at = next(i for i, e in enumerate(whole.events) if e.invocation_id == target)
            forked = await world.service.create_session(app_name=APP, user_id=USER, session_id="fork")
            await world.service.import_events(forked, whole.events[:at], copied_from=(APP, USER, sid))
        ours_event = await world.service.rewind(
            app_name=APP, user_id=USER, session_id=sid, before=target, artifact_service=world.arts
        )
        assert ours_event is not None
        # what the session service keeps in memory after it is what a fresh read says
        served = await world.service.get_session(app_name=APP, user_id=USER, session_id=sid)
    finally:
        await world.service.close()

    theirs, their_fork = await _fresh(copy / "adk.db", sid, "fork")
    mine, our_fork = await _fresh(world.db, sid, "fork")
    adk_event, our_event = theirs.events[-1], mine.events[-1]
    assert our_event.id == ours_event.id
    assert our_event.author == adk_event.author == "user"
    assert our_event.actions.rewind_before_invocation_id == adk_event.actions.rewind_before_invocation_id == target
    assert our_event.actions.state_delta == adk_event.actions.state_delta
    assert list(our_event.actions.state_delta) == list(adk_event.actions.state_delta)  # the same JSON, key order too
    assert our_event.actions.artifact_delta == adk_event.actions.artifact_delta
    assert mine.state == theirs.state
    assert served is not None and served.state == mine.state
    assert [e.id for e in served.events] == [e.id for e in mine.events]
    assert [e.id for e in mine.events[:-1]] == [e.id for e in theirs.events[:-1]]
    for name, version in our_event.actions.artifact_delta.items():
        got = await world.arts.load_artifact(app_name=APP, user_id=USER, session_id=sid, filename=name, version=version)
        want = await adk_arts.load_artifact(app_name=APP, user_id=USER, session_id=sid, filename=name, version=version)
        assert got == want

    assert [e.id for e in our_fork.events] == [e.id for e in their_fork.events]
    assert [e.model_dump() for e in our_fork.events] == [e.model_dump() for e in their_fork.events]
    assert our_fork.state == their_fork.state


@pytest.mark.slow
@pytest.mark.timeout(900)
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    initial=st.dictionaries(st.sampled_from(["a", "b", "i"]), st.integers(0, 2), max_size=2),
    steps=ops,
    every=st.integers(1, 6),
    pick=st.integers(0, 10_000),
)
# two sessions hypothesis found in a clean-clone run: events stored out of time order (a fork the
# checkpoints cannot describe; two events of one time whose cached order a fresh read answers differently)
@example(
    initial={},
    steps=[
        ("turn", {"approval": False, "tool": False, "artifacts": ["f1.txt", "f1.txt"], "tool_state": {}, "state": {}}),
        ("redo", True),
        ("late", 6298, {"c": 3, "b": 2}),
        ("late", 6298, {"c": 3, "b": 2}),
        ("late", 4388, {}),
    ],
    every=2,
    pick=243,
)
@example(
    initial={},
    steps=[
        ("turn", {"state": {}, "tool_state": {}, "artifacts": [], "tool": False, "approval": False}),
        ("late", 0, {}),
        ("late", 1, {}),
    ],
    every=1,
    pick=0,
)
@example(
    initial={},
    steps=[
        (
            "turn",
            {
                "state": {"a": None, "b": None},
                "tool_state": {"a": None},
                "artifacts": [],
                "tool": False,
                "approval": False,
            },
        ),
        ("rewind", 1218, False),
        ("fork", 146),
        (
            "turn",
            {
                "state": {"a": None},
                "tool_state": {"a": None, "b": None},
                "artifacts": ["f1.txt", "f1.txt"],
                "tool": False,
                "approval": False,
            },
        ),
        ("late", 10000, {}),
        ("late", 2517, {"app:g": 0, "b": 3}),
        (
            "turn",
            {
                "state": {"temp:t": None, "a": 1, "app:g": [1, 2]},
                "tool_state": {"a": [1, 2], "c": "xy"},
                "artifacts": [],
                "tool": True,
                "approval": False,
            },
        ),
    ],
    every=3,
    pick=83,
)
def test_rewind_and_fork_equal_adks_own(tmp_path_factory, initial, steps, every, pick):
    root = tmp_path_factory.mktemp("props")
    asyncio.run(_scenario(root, initial, steps, every, pick))


@pytest.mark.slow
@pytest.mark.timeout(300)
def test_rewind_near_the_end_reads_a_bounded_number_of_events(tmp_path: Path):
    """On a 2,000-turn session (4,000 events) a rewind before the last turn, and a redo, read at
    most one checkpoint interval plus the events after the point -- once the checkpoints exist
    (the first rewind of a session stored before them writes them, reading it once)."""

    async def run() -> None:
        world = World(tmp_path, every=200)
        sid = "long"
        await world.service.create_session(app_name=APP, user_id=USER, session_id=sid)
        session = await world.service.get_session(app_name=APP, user_id=USER, session_id=sid)
        assert session is not None
        batch, invocations = [], []
        for i in range(2000):
            inv = f"e-{uuid.uuid4()}"
            invocations.append(inv)
            batch.append(
                Event(
                    invocation_id=inv,
                    author="user",
                    timestamp=world.tick(),
                    content=types.Content(role="user", parts=[types.Part(text=f"q{i}")]),
                )
            )
            batch.append(
                Event(
                    invocation_id=inv,
                    author="agent",
                    timestamp=world.tick(),
                    actions=EventActions(state_delta={"turn": i, f"k{i % 7}": i}),
                )
            )
        await world.service.import_events(session, batch)
        try:
            index = await world.service.rewind_index()
            assert index is not None
            await world.rewind(sid, invocations[1000], ours=True)  # writes the checkpoints (reads it all once)
            first = index.reads.events
            assert first >= 4000
            for target in (invocations[-1], invocations[-3]):
                before = index.reads.events
                await world.rewind(sid, target, ours=True)
                read = index.reads.events - before
                # the interval before the point, the point's turn, the turns and rewinds after it
                assert read <= 200 + 2 * 3 + 4, read
            events = await world.events(sid)
            before = index.reads.events
            await world.rewind(sid, events[-1].invocation_id, ours=True)  # a redo of the last rewind
            assert index.reads.events - before <= 200 + 10
        finally:
            await world.service.close()

    asyncio.run(run())
