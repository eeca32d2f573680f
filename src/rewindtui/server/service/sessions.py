"""Sessions: who owns what, creating them (store and ADK together), deleting them.

A session exists twice: a row in the store (name, owner, fork origin) and an ADK session
(events, state). Creating writes ADK's first, so a store row always has its ADK session;
deleting is journaled (see :mod:`rewindtui.server.storage.recovery`).
"""

from __future__ import annotations

import contextlib
import logging
import sqlite3

from google.adk.errors.already_exists_error import AlreadyExistsError

from rewindtui.server.service.context import ServerContext, UsesContext
from rewindtui.server.shared.errors import Conflict, NotFound, is_storage_failure, storage_error
from rewindtui.server.shared.paths import ADK_FILE
from rewindtui.server.shared.wire import new_id, now_iso
from rewindtui.server.storage.adk_damage import DamagedAgentState
from rewindtui.server.storage.store import Intent, SessionRow

log = logging.getLogger(__name__)

NAME_LIMIT = 40


def derive_name(text: str) -> str:
    """A session name from the first user text (first line, ~40 characters)."""
    line = " ".join(text.strip().split("\n", 1)[0].split())
    if not line:
        return "New chat"
    return line if len(line) <= NAME_LIMIT else line[: NAME_LIMIT - 1].rstrip() + "…"


class Sessions(UsesContext):
    def __init__(self, context: ServerContext) -> None:
        super().__init__(context)
        self.jobs = context.jobs

    async def owned(self, user_id: str, session_id: str) -> SessionRow:
        row = await self.store.get_session(session_id)
        if row is None or row.user_id != user_id:
            raise NotFound(f"session {session_id!r} not found")
        return row

    async def list(self, user_id: str) -> list[SessionRow]:
        return await self.store.list_sessions(user_id)

    async def create(self, user_id: str, *, name: str | None = None, session_id: str | None = None) -> SessionRow:
        """A new session: ADK's first, then the store's row (the store's key decides a race).

        ``session_id`` was checked where it came in (``requests.classify``, the REST route)."""
        sid = session_id if session_id is not None else new_id()
        self.jobs.check_open()
        if await self.store.get_session(sid) is not None:
            raise Conflict(f"session {sid!r} already exists")
        with contextlib.suppress(AlreadyExistsError):
            await self.session_service.create_session(app_name=self.app_name, user_id=user_id, session_id=sid)
        ts = now_iso()
        row = SessionRow(
            id=sid, user_id=user_id, name=name or "", agent_ref=self.agent_ref, created_at=ts, updated_at=ts
        )
        try:
            await self.store.create_session(row)
        except sqlite3.IntegrityError:
            raise Conflict(f"session {sid!r} already exists") from None
        return row

    async def for_message(self, user_id: str, context_id: str | None) -> SessionRow:
        """The session a message continues; a new one (named later) for a new or unknown contextId."""
        if context_id is None:
            return await self.create(user_id)
        row = await self.store.get_session(context_id)
        if row is None:
            try:
                return await self.create(user_id, session_id=context_id)
            except Conflict:
                row = await self.store.get_session(context_id)
                if row is None:
                    raise
        if row.user_id != user_id:
            raise NotFound(f"session {context_id!r} not found")
        await self._known_to_adk(row)
        return row

    async def _known_to_adk(self, row: SessionRow) -> None:
        """Refuse (nothing stored) a message for a session the agent's own session database does
        not hold (e.g. ``adk_sessions.db`` restored from an older backup): the turn would fail in
        ADK after the message was stored."""
        service = self.session_service
        cached = getattr(service, "is_cached", None)
        if cached is not None and cached(self.app_name, row.user_id, row.id):
            return
        try:
            adk = await service.get_session(app_name=self.app_name, user_id=row.user_id, session_id=row.id)
        except DamagedAgentState as exc:  # one line: which session, which file, `rewindtui repair`
            raise Conflict(str(exc)) from None
        if adk is None:
            raise Conflict(
                f"session {row.id!r} is in the task store but not in the agent's session database "
                f"({ADK_FILE}): nothing was stored; restore both databases from one backup (rewindtui restore)"
            )

    async def rename(self, user_id: str, session_id: str, name: str) -> SessionRow:
        session = await self.owned(user_id, session_id)
        try:
            await self.store.rename_session(session.id, name)
        except Exception as exc:
            if is_storage_failure(exc):
                raise storage_error(exc, "rename the session") from None
            raise
        return await self.owned(user_id, session_id)

    async def delete(self, user_id: str, session_id: str) -> None:
        session = await self.owned(user_id, session_id)

        async def _delete() -> None:
            # journaled: once ADK's session is gone, a crash before the store's commit is
            # finished at startup
            intent = Intent(new_id(), "delete", session.id, {"user_id": session.user_id}, now_iso())
            try:
                await self.store.add_intent(intent)
            except Exception as exc:
                if is_storage_failure(exc):
                    raise storage_error(exc, "delete the session") from None
                raise
            agent_done = False
            try:
                async with self.store.transaction() as tx:
                    await tx.execute(
                        [*self.store.delete_session_statements(session.id), self.store.intent_done_statement(intent.id)]
                    )
                    await self.session_service.delete_session(
                        app_name=self.app_name, user_id=session.user_id, session_id=session.id
                    )
                    agent_done = True
            except BaseException as exc:
                if not agent_done:
                    with contextlib.suppress(Exception):
                        await self.store.drop_intent(intent.id)
                if isinstance(exc, Exception) and is_storage_failure(exc):
                    raise storage_error(exc, "delete the session") from None
                raise

        await self.jobs.exclusive(session.id, "delete", _delete)
