"""Opening, reading and naming sessions."""

from __future__ import annotations

import logging

from rewindtui.chat import limits
from rewindtui.chat.base import ChatBase
from rewindtui.chat.limits import derive_title, freeze_if_large, gc_paused
from rewindtui.chat.pages import read_page
from rewindtui.client.a2a_client import ClientError, HTTPStatusFailed, Session, Unsupported
from rewindtui.model import Change, Conversation
from rewindtui.model.turn_watch import Watch

log = logging.getLogger(__name__)

#: the most pages :meth:`Sessions.reread_newest` reads (a redo's joined tail is at most
#: ``limits.ANSWER_TAIL`` messages: the newest page holds its turns unless rewinds crowd it)
NEWEST_PAGES = 4


class Sessions(ChatBase):
    # -- sessions ------------------------------------------------------------------------------
    async def open(self, session_id: str | None = None) -> None:
        """Open a session, or (None) start a new one. A new session is created on the server only
        by its first message. ``session_id`` may be any unique prefix of a known session's id.
        SessionNotFound when the server (or, without a REST API, this client) knows no such session."""
        await self.client.connect()
        conversation = Conversation()
        read = None
        if session_id is not None:
            read = await self.history.read(session_id, page=limits.OPEN_PAGE_TASKS)
            conversation.session_id = read.session.id if read.session else session_id
            with gc_paused():
                conversation.load_tasks(read.tasks, read.older_token, read.joined)
            self._undo_from(conversation.session_id, read.tasks, whole=read.older_token is None)
            read.tasks = []  # parsed: let the page's wire dicts go
        self.conversation = conversation
        self.session = read.session if read else None
        self.history_source = read.source if read else None
        self.history_note = read.note if read else ""
        self.older_error = ""
        self.edit = None
        self.interrupted_task_id = None
        if read is not None:
            await self._undo_on_open()
        self._emit(Change(first=0, turn_ended=True))
        if not self.open_newest_first:
            await self.load_older()

    async def load_older(self) -> None:
        """Bring the open session's older turns, a page at a time (newest first), each put in
        front of the view as it comes. A page that cannot be read: the session is re-read from
        its newest page once; failing again, :attr:`older_error` says why (the view says that
        only the newest turns are shown) and the error is raised."""
        async with self._older_lock:
            retried = False
            while True:
                conversation = self.conversation
                token, sid = conversation.older_token, conversation.session_id
                if token is None or sid is None:
                    return
                try:
                    page = await read_page(self.client, sid, limits.OPEN_PAGE_TASKS, token)
                except ClientError as exc:
                    self.older_error = str(exc)
                    self._emit(Change(turn_ended=True))  # the view says so
                    if retried or conversation is not self.conversation:
                        raise
                    retried = True
                    await self._reread_newest(conversation)
                    continue
                if conversation is not self.conversation or conversation.older_token != token:
                    continue  # the view changed meanwhile (re-read, or put back): go on from it
                with gc_paused():
                    change = conversation.prepend_tasks(page.tasks, page.next_page_token, page.joined)
                del page
                freeze_if_large(len(conversation.items))
                self.older_error = ""
                self._emit(change)

    async def _reread_newest(self, conversation: Conversation) -> None:
        """After a page could not be read: the view becomes the session's newest page again, as
        the server has it now (its older pages then load from there)."""
        sid = conversation.session_id
        assert sid is not None
        newest = await read_page(self.client, sid, limits.OPEN_PAGE_TASKS)
        if conversation is self.conversation:
            with gc_paused():
                change = conversation.load_tasks(newest.tasks, newest.next_page_token, newest.joined)
            self.older_error = ""
            self._emit(change)

    async def connect_and_open(self, session_id: str | None = None) -> None:
        """Connect, then open ``session_id``, else the most recently used session, else a new one."""
        await self.client.connect()
        if session_id is None:
            sessions = [s for s in await self.list_sessions() if not s.gone]
            if sessions:
                session_id = max(sessions, key=lambda s: s.updated_at or s.created_at or "").id
        await self.open(session_id)

    async def list_sessions(self) -> list[Session]:
        """The user's sessions: the server's (REST) and those this client remembers; a remembered
        one the server no longer knows comes back with ``gone`` set."""
        await self.client.connect()
        return await self.history.sessions()

    async def refresh(self) -> bool:
        """Re-read the whole session from the server (the server's view is the truth): over REST by
        pages (:meth:`reread_by_pages`), else at once. False when the server cannot give it back."""
        sid = self.session_id
        if sid is not None and self.client.has_api:
            return await self.reread_by_pages()
        tasks = await self.history.tasks(sid) if sid else None
        if tasks is None:
            return False
        with gc_paused():
            self._emit(self.conversation.load_tasks(tasks))
        return True

    async def reread_by_pages(self) -> bool:
        """Re-read the session as :meth:`open` reads it over REST: its newest page (bounded, see
        :mod:`rewindtui.chat.pages`), then its older pages one at a time, each put in front as it
        comes (each a change of the view), all of them before it returns. Without a REST API:
        :meth:`refresh`."""
        sid = self.session_id
        if sid is None or not self.client.has_api:
            return await self.refresh()  # (which does not come back here: no REST API)
        newest = await read_page(self.client, sid, limits.OPEN_PAGE_TASKS)
        with gc_paused():
            change = self.conversation.load_tasks(newest.tasks, newest.next_page_token, newest.joined)
        del newest
        self.older_error = ""
        self._emit(change)
        await self.load_older()
        return True

    async def reread_newest(self, at: int) -> bool:
        """Re-read the view's items from ``at`` on -- its newest turns -- from the session's newest
        pages (bounded, see :mod:`rewindtui.chat.pages`; at most :data:`NEWEST_PAGES` of them), as
        a reload shows them (their artifacts, their outcomes); the items before ``at`` are kept.
        False, the view unchanged, when those pages do not show the same messages."""
        sid = self.session_id
        conversation = self.conversation
        wanted = next((mid for item in conversation.items[at:] for mid in item.message_ids), None)
        if sid is None or wanted is None or not self.client.has_api:
            return False
        newer = Conversation(sid)
        page = await read_page(self.client, sid, limits.OPEN_PAGE_TASKS)
        newer.load_tasks(page.tasks, page.next_page_token, page.joined)
        for _ in range(NEWEST_PAGES - 1):
            token = newer.older_token
            if token is None or wanted in newer.message_ids():
                break
            page = await read_page(self.client, sid, limits.OPEN_PAGE_TASKS, token)
            newer.prepend_tasks(page.tasks, page.next_page_token, page.joined)
        change = conversation.graft_newest(at, newer) if conversation is self.conversation else None
        if change is None:
            return False
        self._emit(change)
        return True

    def _remember(self, watch: Watch, text: str) -> None:
        if self.session_id and watch.accepted:
            self.history.remember(self.session_id, title=derive_title(text), task_id=watch.task_id)

    # -- sessions ------------------------------------------------------------------------------
    async def rename_session(self, session_id: str, name: str) -> Session:
        """Rename a session on the server (kagent's ``PUT /sessions/{id}``)."""
        if not self.client.has_api:
            raise Unsupported("this server has no sessions API to rename a session with")
        session = await self.client.rename_session(session_id, name)
        if session.id == self.session_id:
            self.session = session
        return session

    async def delete_session(self, session_id: str) -> None:
        """Delete a session on the server (and forget it here). The open one cannot be deleted."""
        if session_id == self.session_id:
            raise Unsupported("this is the open session: open another one first")
        if self.client.has_api:
            try:
                await self.client.delete_session(session_id)
            except HTTPStatusFailed as exc:
                if exc.status != 404:
                    raise
        self.history.forget(session_id)
