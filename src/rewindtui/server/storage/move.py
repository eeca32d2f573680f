"""Moving a server's data between a solo data directory (SQLite files) and a team database
(PostgreSQL), either way: ``rewindtui team import`` / ``rewindtui team export``.

Everything that makes a session comes along: the task store's sessions, tasks (turns, rewinds,
redos, forks, with their rewound marks) and messages; ADK's sessions and events (ADK's own v1
tables, read and written through its own table definitions, so each engine's types are its own);
the users' ADK state; the artifacts, every version in order. So rewound branches, redo records
and forks work after the move as before it.

The target may already hold other sessions (several solo users move into one team database):
the moved rows get new ``seq`` numbers after the target's (a rewind task's stored history, message
and task ``seq`` numbers, :mod:`.history_refs`, is renumbered with them). Nothing is overwritten:
a session id the target already has refuses the whole move before anything is written, as does unfinished journaled
work in the source (a server stopped mid-rewind: start and stop it once, it finishes its
journal). The store's rows are written in one transaction; ADK's in another, then the artifacts.
The source is only read.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from google.adk.artifacts.base_artifact_service import BaseArtifactService
from google.adk.artifacts.file_artifact_service import FileArtifactService
from google.adk.sessions.schemas.v1 import Base as AdkTables
from sqlalchemy import insert, select
from sqlalchemy.ext.asyncio import create_async_engine

from rewindtui.server.shared.internals import new_rewind_tombstone
from rewindtui.server.shared.paths import ADK_FILE, APP_NAME, STORE_FILE
from rewindtui.server.storage.adk_sessions import CachedDatabaseSessionService, sqlite_url
from rewindtui.server.storage.history_refs import renumber
from rewindtui.server.storage.store import Store
from rewindtui.server.storage.team_store import TeamStore

ARTIFACTS_DIR = "artifacts"
_TASK_COLS = (
    "seq, id, session_id, user_id, kind, invocation_id, state, created_at, updated_at, rewound_by, rewound_at, "
    "history_refs, body"
)
_MESSAGE_COLS = "seq, session_id, task_id, message_id, invocation_id, role, body, body_v1, render_version"
_SESSION_COLS = "id, user_id, name, agent_ref, created_at, updated_at, forked_from, forked_before_invocation_id"


class MoveRefused(RuntimeError):
    """One sentence: why nothing was moved."""


@dataclass(frozen=True)
class Place:
    """Where a server keeps its data: a data directory (SQLite) or a database URL (PostgreSQL)."""

    data_dir: Path | None = None
    database_url: str | None = None

    def store(self) -> Store:
        data_dir = self.data_dir or Path(".")
        return Store(data_dir / STORE_FILE, database_url=self.database_url)

    def adk_url(self) -> str:
        if self.database_url is not None:
            return self.database_url
        assert self.data_dir is not None
        return sqlite_url(str(self.data_dir / ADK_FILE))

    def team(self) -> TeamStore:
        if self.database_url is not None:
            return TeamStore(self.database_url)
        assert self.data_dir is not None
        return TeamStore(sqlite_url(str(self.data_dir / STORE_FILE)))

    def artifacts(self) -> BaseArtifactService:
        if self.database_url is not None:
            from rewindtui.server.storage.db_artifacts import DatabaseArtifactService

            return DatabaseArtifactService(self.database_url)
        assert self.data_dir is not None
        return FileArtifactService(self.data_dir / ARTIFACTS_DIR)

    def describe(self) -> str:
        if self.database_url is not None:
            from rewindtui.server.storage.store_pg import shown_url

            return shown_url(self.database_url)
        return str(self.data_dir)


@dataclass
class MoveReport:
    sessions: int = 0
    tasks: int = 0
    messages: int = 0
    events: int = 0
    artifact_versions: int = 0
    notes: list[str] = field(default_factory=list)

    def summary(self) -> str:
        return (
            f"moved {self.sessions} session(s): {self.tasks} task(s), {self.messages} message(s), "
            f"{self.events} agent event(s), {self.artifact_versions} artifact version(s)"
        )


async def move(source: Place, target: Place) -> MoveReport:
    """Copy every session of ``source`` into ``target`` (see the module's docstring)."""
    report = MoveReport()
    src, dst = source.store(), target.store()
    await src.open()
    try:
        await dst.open()
        try:
            session_ids = await _move_store(src, dst, report, source, target)
        finally:
            await dst.close()
    finally:
        await src.close()
    team = target.team()
    await team.open()  # the target's team tables (artifacts among them), created if new
    await team.close()
    users = await _move_adk(source, target, session_ids, report)
    await _move_artifacts(source, target, users, report)
    return report


async def _move_store(src: Store, dst: Store, report: MoveReport, source: Place, target: Place) -> dict[str, str]:
    if await src.intents():
        raise MoveRefused(
            f"{source.describe()} has unfinished journaled work (a server stopped mid-rewind or mid-fork): "
            "start its server once and stop it, then move"
        )
    sessions = await src._fetchall(f"SELECT {_SESSION_COLS} FROM sessions ORDER BY created_at")
    if not sessions:
        raise MoveRefused(f"{source.describe()} holds no sessions: nothing to move")
    taken = [s[0] for s in sessions if await dst.get_session(s[0]) is not None]
    if taken:
        raise MoveRefused(
            f"{target.describe()} already has session {taken[0]!r}"
            + (f" and {len(taken) - 1} more" if len(taken) > 1 else "")
            + ": nothing was moved (a session is moved once)"
        )
    tasks = await src._fetchall(f"SELECT {_TASK_COLS} FROM tasks ORDER BY seq")
    messages = await src._fetchall(f"SELECT {_MESSAGE_COLS} FROM messages ORDER BY seq")
    top_task = await dst._fetchone("SELECT MAX(seq) FROM tasks")
    top_message = await dst._fetchone("SELECT MAX(seq) FROM messages")
    task_off = int(top_task[0] or 0) if top_task else 0
    msg_off = int(top_message[0] or 0) if top_message else 0
    statements: list[tuple[str, tuple[Any, ...]]] = []
    marks = ",".join("?" * 8)
    for row in sessions:
        statements.append((f"INSERT INTO sessions ({_SESSION_COLS}) VALUES ({marks})", tuple(row)))
    for row in tasks:
        values = list(row)
        values[0] = int(values[0]) + task_off
        if values[11] is not None:  # history_refs: message seqs, or a link naming task seqs too
            values[11] = renumber(values[11], task_off, msg_off)
        statements.append((f"INSERT INTO tasks ({_TASK_COLS}) VALUES ({','.join('?' * 13)})", tuple(values)))
    for row in messages:
        values = list(row)
        values[0] = int(values[0]) + msg_off
        statements.append((f"INSERT INTO messages ({_MESSAGE_COLS}) VALUES ({','.join('?' * 9)})", tuple(values)))
    if target.database_url is not None:  # the identity columns go on after the rows given their seq
        statements += [
            ("SELECT setval(pg_get_serial_sequence('tasks', 'seq'), (SELECT COALESCE(MAX(seq), 1) FROM tasks))", ()),
            (
                "SELECT setval(pg_get_serial_sequence('messages', 'seq'), "
                "(SELECT COALESCE(MAX(seq), 1) FROM messages))",
                (),
            ),
        ]
    await dst._write(statements)
    report.sessions, report.tasks, report.messages = len(sessions), len(tasks), len(messages)
    return {str(s[0]): str(s[1]) for s in sessions}


async def _move_adk(source: Place, target: Place, sessions: dict[str, str], report: MoveReport) -> set[tuple[str, str]]:
    """ADK's rows of ``sessions`` (id -> user); returns the (user, session) pairs moved."""
    prepared = CachedDatabaseSessionService(target.adk_url(), max_sessions=0)
    try:
        await prepared.prepare_tables()  # the target's ADK tables, as ADK makes them
    finally:
        await prepared.close()
    checked = CachedDatabaseSessionService(source.adk_url(), max_sessions=0)
    try:
        await checked.prepare_tables()  # an older ADK schema is brought up to ADK's own first
    finally:
        await checked.close()
    tables = AdkTables.metadata.tables
    t_sessions, t_events, t_users = tables["sessions"], tables["events"], tables["user_states"]
    t_app = tables["app_states"]
    src_engine = create_async_engine(source.adk_url())
    dst_engine = create_async_engine(target.adk_url())
    moved: set[tuple[str, str]] = set()
    try:
        async with src_engine.connect() as src, dst_engine.begin() as dst:
            ids = list(sessions)
            for start in range(0, len(ids), 500):
                chunk = ids[start : start + 500]
                rows = (
                    (
                        await src.execute(
                            select(t_sessions).where(t_sessions.c.app_name == APP_NAME, t_sessions.c.id.in_(chunk))
                        )
                    )
                    .mappings()
                    .all()
                )
                if rows:
                    await dst.execute(insert(t_sessions), [dict(r) for r in rows])
                    moved.update((str(r["user_id"]), str(r["id"])) for r in rows)
                events = (
                    (
                        await src.execute(
                            select(t_events).where(t_events.c.app_name == APP_NAME, t_events.c.session_id.in_(chunk))
                        )
                    )
                    .mappings()
                    .all()
                )
                if events:
                    await dst.execute(insert(t_events), [dict(e) for e in events])
                    report.events += len(events)
            app_state = (await src.execute(select(t_app).where(t_app.c.app_name == APP_NAME))).mappings().first()
            app_there = (await dst.execute(select(t_app.c.app_name).where(t_app.c.app_name == APP_NAME))).first()
            if app_state is not None and app_there is None:
                await dst.execute(insert(t_app), [dict(app_state)])
            elif app_state is not None and app_state["state"]:
                report.notes.append("the agent's app-wide state was in the target already: kept the target's")
            users = sorted({user for user, _ in moved})
            for user in users:
                state = (
                    (
                        await src.execute(
                            select(t_users).where(t_users.c.app_name == APP_NAME, t_users.c.user_id == user)
                        )
                    )
                    .mappings()
                    .first()
                )
                there = (
                    await dst.execute(
                        select(t_users.c.user_id).where(t_users.c.app_name == APP_NAME, t_users.c.user_id == user)
                    )
                ).first()
                if state is not None and there is None:
                    await dst.execute(insert(t_users), [dict(state)])
                elif state is not None:
                    report.notes.append(
                        f"the agent's user state of {user!r} was in the target already: kept the target's"
                    )
    finally:
        await src_engine.dispose()
        await dst_engine.dispose()
    missing = set(sessions) - {sid for _, sid in moved}
    if missing:
        report.notes.append(f"{len(missing)} session(s) had no agent session in {source.describe()} (moved as stored)")
    return moved


async def _move_artifacts(source: Place, target: Place, moved: set[tuple[str, str]], report: MoveReport) -> None:
    src, dst = source.artifacts(), target.artifacts()
    done: set[tuple[str, str]] = set()  # (user, file name) of user-scoped artifacts already moved
    try:
        for user, session in sorted(moved):
            for name in await src.list_artifact_keys(app_name=APP_NAME, user_id=user, session_id=session):
                scope = (user, name)
                if name.startswith("user:"):
                    if scope in done:
                        continue
                    done.add(scope)
                    if await dst.list_versions(app_name=APP_NAME, user_id=user, filename=name, session_id=session):
                        report.notes.append(f"{user}'s artifact {name!r} was in the target already: kept the target's")
                        continue
                for version in await src.list_versions(
                    app_name=APP_NAME, user_id=user, filename=name, session_id=session
                ):
                    part = await src.load_artifact(
                        app_name=APP_NAME, user_id=user, filename=name, session_id=session, version=version
                    )
                    info = await src.get_artifact_version(
                        app_name=APP_NAME, user_id=user, filename=name, session_id=session, version=version
                    )
                    if part is None:  # a rewind's tombstone (loads as absent): the same marker, same number
                        part = new_rewind_tombstone()
                    await dst.save_artifact(
                        app_name=APP_NAME,
                        user_id=user,
                        filename=name,
                        session_id=session,
                        artifact=part,
                        custom_metadata=info.custom_metadata if info is not None else None,
                    )
                    report.artifact_versions += 1
    finally:
        for service in (src, dst):
            close = getattr(service, "close", None)
            if close is not None:
                await close()
