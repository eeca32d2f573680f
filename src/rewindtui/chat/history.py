"""Where a conversation comes back from, and which sessions there are.

A server with a kagent-style REST API gives both (``GET /sessions``, ``GET /sessions/{id}/tasks``).
Without one, A2A itself: 1.0 ``ListTasks`` (filtered by ``contextId``, paged) gives a session's
tasks; 0.3 has only ``tasks/get``, so the tasks this client remembers (the local store, see
:mod:`rewindtui.chat.local_sessions`) are fetched one by one, and a session never used from here cannot
be read back -- :attr:`Read.note` says so in words for the view.

Sessions are the server's (REST) merged with the ones this client remembers; a remembered one the
server no longer knows is marked ``gone``, never dropped.
"""

from __future__ import annotations

import logging
import sqlite3
from dataclasses import dataclass
from typing import Any

from rewindtui.a2a.dialect import RPC_TASK_NOT_FOUND, Dialect
from rewindtui.chat.local_sessions import LocalSessions, Remembered
from rewindtui.chat.pages import read_page
from rewindtui.client.a2a_client import A2AClient, ClientError, HTTPStatusFailed, PageProgress, RpcError, Session
from rewindtui.model.task_order import oldest_first

log = logging.getLogger(__name__)

#: ListTasks page size, and the most tasks read back for one session.
PAGE = 100
MAX_TASKS = 100_000
CANNOT_READ_BACK = (
    "This server cannot give a conversation back (it has no REST API and no A2A ListTasks), "
    "and this session was not used from here: earlier turns are not shown."
)


class SessionNotFound(ClientError):
    """No session with that id (or id prefix) on this server."""


@dataclass
class Read:
    """A session read back: the session, its tasks (oldest first), where they came from ("rest",
    "a2a", or None when nothing could be read) and what the view must say about gaps ("")."""

    session: Session | None
    tasks: list[dict[str, Any]]
    source: str | None
    note: str = ""
    #: ``tasks`` are only the newest page: the server's token for the older ones (REST paging)
    older_token: str | None = None
    #: rewind Tasks of that page read with their history cut, joined (``chat.pages``)
    joined: frozenset[str] = frozenset()


class History:
    def __init__(self, client: A2AClient, store: LocalSessions | None) -> None:
        self.client = client
        self.store = store

    @property
    def can_list_tasks(self) -> bool:
        """A2A 1.0 has ListTasks (a server may still not offer it: RpcError.not_offered)."""
        caps = self.client.capabilities
        return caps is not None and caps.dialect is Dialect.V10

    @property
    def can_read_back(self) -> bool:
        """The whole session can be re-read from the server (REST, or A2A ListTasks)."""
        return self.client.has_api or self.can_list_tasks

    # -- sessions ------------------------------------------------------------------------------
    async def sessions(self) -> list[Session]:
        """The user's sessions: the server's (REST) and those this client remembers."""
        remembered = self.remembered()
        if self.client.has_api:
            sessions = await self.client.list_sessions()
            known = {s.id for s in sessions}
            for entry in remembered:
                if entry.id in known:
                    continue
                shared = None if entry.gone else await self._shared(entry.id)
                if shared is not None:  # not listed, yet readable: another user's, shared with us
                    sessions.append(shared)
                    continue
                self._store("mark_gone", entry.id)
                sessions.append(_session(entry, None, gone=True))
            return sessions
        out = []
        for entry in remembered:
            gone = entry.gone
            if self.can_list_tasks:
                try:
                    gone = not (await self.client.list_tasks(entry.id, page_size=1)).tasks
                except ClientError:
                    gone = entry.gone
                if gone != entry.gone:
                    self._store("mark_gone", entry.id, gone)
            out.append(_session(entry, self.client.config.user_id, gone=gone))
        return out

    @staticmethod
    def _resolve(prefix: str, ids: list[str]) -> str:
        """The one id ``prefix`` names among ``ids`` (itself when no id starts with it). An empty or
        blank one names none (it would start every id)."""
        if not prefix.strip():
            raise SessionNotFound("the session id is empty: give the id, or a unique start of it")
        if prefix in ids:
            return prefix
        matches = [i for i in ids if i.startswith(prefix)]
        if len(matches) > 1:
            shown = ", ".join(m[:12] for m in matches[:5])
            raise SessionNotFound(
                f"session id {prefix!r} is ambiguous: it starts {len(matches)} sessions ({shown}); give more of it"
            )
        return matches[0] if matches else prefix

    async def _shared(self, session_id: str) -> Session | None:
        """The session as the server gives it, when it does though it does not list it (a team
        server lists one's own sessions; a session shared with one is read by its id); None when
        the server gives none (404, or any failure: as before, it counts as gone)."""
        try:
            return await self.client.get_session(session_id)
        except ClientError:
            return None

    # -- reading a session ---------------------------------------------------------------------
    async def read(self, session_id: str, page: int | None = None) -> Read:
        """The session ``session_id`` names (its id, or any unique prefix) and its tasks; with
        ``page``, over REST, only the newest ``page`` of them (``Read.older_token`` for the rest)."""
        if not session_id.strip():
            raise SessionNotFound("the session id is empty: give the id, or a unique start of it")
        if self.client.has_api:
            return await self._read_rest(session_id, page)
        session_id = self._resolve(session_id, [s.id for s in self.remembered()])
        remembered = self.store.get(session_id) if self.store is not None else None
        session = Session(session_id, remembered.title if remembered else "", self.client.config.user_id)
        if self.can_list_tasks:
            try:
                tasks = await self.list_all_tasks(session_id)
            except RpcError as exc:
                if not exc.not_offered:
                    raise
            else:
                if not tasks and remembered is None:
                    raise SessionNotFound(
                        f"session {session_id!r} does not exist on this server (it lists no tasks for it)"
                    )
                return Read(session, tasks, "a2a")
        task_ids = self.store.task_ids(session_id) if self.store is not None else []
        tasks = []
        for task_id in task_ids:
            try:
                tasks.append(await self.client.get_task(task_id))
            except RpcError as exc:
                if exc.code != RPC_TASK_NOT_FOUND:
                    raise
        note = ""
        if remembered is None:
            note = CANNOT_READ_BACK
        elif len(tasks) < len(task_ids):
            note = f"The server no longer has {len(task_ids) - len(tasks)} of this session's turns."
        return Read(session, tasks, "a2a" if tasks else None, note)

    async def _read_rest(self, session_id: str, page: int | None) -> Read:
        try:
            session = await self.client.get_session(session_id)
        except HTTPStatusFailed as exc:
            if exc.status != 404:
                raise
            full = self._resolve(session_id, [s.id for s in await self.client.list_sessions()])
            if full == session_id:
                raise SessionNotFound(f"session {session_id!r} does not exist on this server") from None
            session = await self.client.get_session(full)
        if page is None:
            return Read(session, await self.client.session_tasks(session.id), "rest")
        newest = await read_page(self.client, session.id, page)
        return Read(session, newest.tasks, "rest", older_token=newest.next_page_token, joined=newest.joined)

    async def tasks(self, session_id: str) -> list[dict[str, Any]] | None:
        """The session's tasks as the server has them now; None when it cannot give them back."""
        try:
            if self.client.has_api:
                return await self.client.session_tasks(session_id)
            if self.can_list_tasks:
                return await self.list_all_tasks(session_id)
        except RpcError as exc:
            if not exc.not_offered:
                raise
        return None

    async def list_all_tasks(self, context_id: str) -> list[dict[str, Any]]:
        """Every task of a context (ListTasks, all pages), oldest first."""
        tasks: list[dict[str, Any]] = []
        token: str | None = None
        progress = PageProgress(f"ListTasks of session {context_id}")  # PagingStalled: never a loop
        while len(tasks) < MAX_TASKS:
            page = progress.check(token, await self.client.list_tasks(context_id, page_size=PAGE, page_token=token))
            tasks.extend(page.tasks)
            token = page.next_page_token
            if not token or not page.tasks:
                break
        return oldest_first(tasks)

    # -- the local store -----------------------------------------------------------------------
    def remembered(self) -> list[Remembered]:
        if self.store is None:
            return []
        try:
            return self.store.sessions()
        except sqlite3.Error as exc:
            log.warning("local sessions store unreadable: %s", exc)
            return []

    def remember(
        self, session_id: str, *, title: str = "", task_id: str | None = None, forked_from: str | None = None
    ) -> None:
        """Record that this client used the session now (and the task it ran)."""
        self._store("remember", session_id, title=title, forked_from=forked_from)
        if task_id:
            self._store("add_task", session_id, task_id)

    def forget(self, session_id: str) -> None:
        """Drop a session the user deleted from the local store."""
        self._store("forget", session_id)

    def _store(self, name: str, *args: Any, **kw: Any) -> None:
        """Record in the local store; a broken store never fails a turn."""
        if self.store is None:
            return
        try:
            getattr(self.store, name)(*args, **kw)
        except sqlite3.Error as exc:
            log.warning("local sessions store: %s failed: %s", name, exc)


def _session(entry: Remembered, user_id: str | None, *, gone: bool) -> Session:
    return Session(entry.id, entry.title, user_id, entry.created_at, entry.updated_at, gone=gone)
