"""The chat's state, shared by its parts (sessions, turns, rewind, branches)."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from rewindtui.chat.history import History
from rewindtui.chat.local_sessions import LocalSessions
from rewindtui.chat.permissions import Permissions
from rewindtui.chat.undo import RedoPoint, UndoPoint
from rewindtui.client.a2a_client import A2AClient, Session
from rewindtui.model import Change, Conversation, RewindToken
from rewindtui.model.turn_watch import Watch

log = logging.getLogger(__name__)

Listener = Callable[[Change], None]


@dataclass
class PendingEdit:
    invocation_id: str
    token: RewindToken
    text: str
    #: the turns the edit set aside (the edited one and every later one)
    turns: int = 0


class ChatBase:
    def __init__(self, client: A2AClient, listener: Listener | None = None, store: LocalSessions | None = None) -> None:
        self.client = client
        self.conversation = Conversation()
        self.listener = listener
        self.session: Session | None = None
        self.rewinding = False
        self.sending = False
        self.edit: PendingEdit | None = None
        if store is None and client.config.local_store is not None:
            key = client.config.local_store_key or client.config.url
            store = LocalSessions(client.config.local_store, key, client.config.user_id)
        self.history = History(client, store)
        #: where the open session's history came from: "rest", "a2a" (ListTasks / GetTask), or None
        self.history_source: str | None = None
        #: said in the view when the server cannot give (all of) the conversation back
        self.history_note = ""
        #: how the last A2A rewind's answer was recognised: "flag" (the contract's effective-history
        #: flag) or "fallback" (a completed Task with a history, from a server that does not
        #: advertise our extension)
        self.last_rewind_answer: str | None = None
        #: a turn whose stream was cut while the server was still running it (see :meth:`resume`)
        self.interrupted_task_id: str | None = None
        #: the id of the message the last turn sent
        self.last_message_id: str | None = None
        self._watch: Watch | None = None
        self._inner: asyncio.Task[Any] | None = None
        self._stop_requested = False
        #: a send is being prepared (its freshness check, its new session): a stop now stops it
        #: before the message leaves (:class:`~rewindtui.chat.errors.StoppedBeforeSending`)
        self.preparing_send = False
        self._stop_before_send = False
        #: the step of that preparation now waiting on the server (a stop cancels it: ``_prepared``)
        self._preparing: asyncio.Future[Any] | None = None
        #: the id given to a new session for its first send, and whether the server was asked to
        #: create it: a send that does not get through leaves no session behind
        self._new_session: tuple[str, bool] | None = None
        #: :meth:`open` shows a session's newest page only, and :meth:`load_older` brings the
        #: older ones (the app, which paints the newest turns first); else open reads them all
        self.open_newest_first = False
        #: why the older turns of the open session could not be loaded ("" if they could)
        self.older_error = ""
        self._older_lock = asyncio.Lock()
        #: what the one undo would undo, per session (see rewindtui.chat.undo)
        self._undo: dict[str, UndoPoint] = {}
        #: what the undos undid, per session, newest last, to do again (rewindtui.chat.undo.RedoPoint)
        self._redo_points: dict[str, list[RedoPoint]] = {}
        #: the last staleness check of a redo point: the view, its item count and last item, the
        #: point, and the answer (Chat._redo_stale)
        self._redo_checked: tuple[object, int, object, object, bool] | None = None
        #: (task id, author, text) of the reply shown when the user stopped a turn
        self._shown_at_stop: tuple[str, str | None, str] | None = None

    @property
    def session_id(self) -> str | None:
        return self.conversation.session_id

    def _emit(self, change: Change) -> None:
        if self.listener is not None and not change.empty:
            self.listener(change)

    def _why_partial(self) -> str:
        """Why the view does not hold the whole session ("" when it does): its older turns are
        still loading, or could not be loaded. Rewind, edit, fork and redo wait for them (the
        server's answer to those is about the whole session)."""
        if self.conversation.older_token is None:
            return ""
        if self.older_error:
            return "the session's older turns could not be loaded (reload the session)"
        return "the session's older turns are still loading"

    def _older_note(self) -> str:
        if self.conversation.older_token is None:
            return ""
        shown = f"{len(self.conversation.items):,} messages"
        if self.older_error:
            return (
                f"Older turns could not be loaded ({self.older_error}): only the newest {shown} are shown. "
                "Reload the session to try again."
            )
        return f"Loading older turns… ({shown} shown so far; rewind, edit and fork wait for them)"

    def _undo_from(self, session_id: str, tasks: list[Any], whole: bool) -> None:
        """A session's tasks were read (its newest page on open): what the one undo can undo."""

    async def _undo_on_open(self) -> None:
        """After an open: what the one undo can undo, where the page read cannot say it."""

    # -- the gate (Chat.permissions; declared here for the parts that consult it) ---------------
    def permissions(self) -> Permissions:
        raise NotImplementedError

    def _require(self, what: str) -> None:
        raise NotImplementedError
