"""Fork, redo and the rewound turns."""

from __future__ import annotations

import contextlib
import logging

from rewindtui.a2a.classify import EventKind, StreamEvent
from rewindtui.chat import limits
from rewindtui.chat.errors import Busy, RedoFailed, RewindOutcomeUnknown
from rewindtui.chat.kagent1_hook import FORK_MODE, fork_undo
from rewindtui.chat.redo_a2a import redo_a2a
from rewindtui.chat.rewind import Rewinds
from rewindtui.client.a2a_client import (
    ClientError,
    ConnectFailed,
    ConnectionLost,
    HTTPStatusFailed,
    MalformedFrame,
    Session,
    Unsupported,
)

log = logging.getLogger(__name__)


class Branches(Rewinds):
    # -- fork --------------------------------------------------------------------------------
    async def _fork(self, invocation_id: str) -> Session:
        """Fork a new session holding what came before ``invocation_id``, and open it."""
        self._require("fork")
        original = self.session_id
        assert original is not None
        if self.conversation.index_of_invocation(invocation_id) is None:
            raise ClientError(f"no turn {invocation_id!r} in this conversation; nothing was sent")
        return await self._fork_open(original, invocation_id)

    async def _fork_open(self, original: str, invocation_id: str) -> Session:
        session = await self.client.fork(original, invocation_id)
        self.history.remember(session.id, title=session.name, forked_from=original)
        await self.open(session.id)
        return session

    async def _fork_branch(self, invocation_id: str) -> Session:
        """Fork a new session holding this one as it was just before ``invocation_id``, which may
        be a rewound turn's or a rewind's own (``Item.rewound.fork_before``: a rewound branch up to
        and including one of its turns), and open it."""
        self._require("fork")
        original = self.session_id
        if original is None:
            raise ClientError("no session is open; nothing was sent")
        return await self._fork_open(original, invocation_id)

    # -- redo ----------------------------------------------------------------------------------
    def why_not_redo(self) -> str:
        """Why redo is unavailable now ("" when it is available)."""
        caps = self.client.capabilities
        if caps is None:
            return "not connected"
        if not caps.redo:
            return caps.why_no_redo()
        if self.rewinding:
            return "a rewind is in progress"
        if self.sending:
            return "wait for the current turn to finish"
        if self.edit is not None:
            return "an edit is in progress (Esc cancels it)"
        if self.session_id is None:
            return "nothing to redo: this session has no turns yet"
        return self._why_partial()

    async def _redo(self, rewind_task_id: str | None = None) -> None:
        """Undo a rewind on the server (None: the last one): the turns it took away come back, with
        the agent's state. The view becomes the server's. RedoFailed: refused or not sent, nothing
        changed; RewindOutcomeUnknown: the answer was lost, the view shows the server's, re-read."""
        reason = self.why_not_redo()
        if reason:
            raise Busy(reason) if self.sending or self.rewinding else Unsupported(reason)
        caps = self.client.capabilities
        assert caps is not None
        if FORK_MODE in caps.rewind_modes:  # kagent 1.0
            return await fork_undo(self)  # type: ignore[arg-type]  # back to the original the fork came from
        if not self.client.has_api and caps.rewind_mode == "a2a":  # the kagent-rewind add-on
            return await redo_a2a(self, rewind_task_id)  # type: ignore[arg-type]
        sid = self.session_id
        assert sid is not None
        self.rewinding = True
        try:
            try:
                answer = await self.client.redo(sid, rewind_task_id, history_length=limits.ANSWER_TAIL)
            except HTTPStatusFailed as exc:
                if exc.status < 500:
                    raise RedoFailed(f"redo refused: {exc.detail or exc}; the conversation is unchanged") from None
                raise await self._redo_unknown(str(exc)) from None
            except ConnectionLost as exc:
                raise await self._redo_unknown(str(exc)) from None
            except ConnectFailed as exc:
                raise RedoFailed(f"redo not sent: {exc}") from None
            except MalformedFrame as exc:
                raise await self._redo_unknown(str(exc)) from None
            event = StreamEvent(EventKind.TASK, answer)
            total, count = self._bounded(event)
            kept = list(self.conversation.items)
            if not self._apply_tail(event):
                try:
                    # the answer alone does not say the whole view (most of a long session came back)
                    await self.reread_by_pages()
                except ClientError as exc:
                    raise await self._redo_unknown(str(exc)) from None
                return
            if total is not None and total != count:
                # a tail joined to the view: the turns that came back, from the newest pages, as a
                # reload shows them (their artifacts, outcomes); else (rare) the session by pages
                items = self.conversation.items
                at = next((i for i, (a, b) in enumerate(zip(kept, items, strict=False)) if a is not b), len(kept))
                with contextlib.suppress(ClientError):
                    if not await self.reread_newest(at):
                        await self.reread_by_pages()
                return
            with contextlib.suppress(ClientError):
                await self.reread_by_pages()  # each turn as a reload shows it (artifacts, outcomes)
        finally:
            self.rewinding = False

    async def _redo_unknown(self, reason: str) -> RewindOutcomeUnknown:
        try:
            known = await self.refresh()
        except ClientError:
            known = False
        shown = "the server's view is shown now" if known else "reopen the session to see what the server holds"
        return RewindOutcomeUnknown(f"the redo's answer was lost ({reason}); {shown}")

    # -- rewound turns -------------------------------------------------------------------------
    def why_not_rewound(self) -> str:
        """Why rewound turns cannot be shown ("" when they can)."""
        if self.client.capabilities is None:
            return "not connected"
        if not self.client.has_api:
            return "this server keeps no list of rewound turns that a client can read (it has no REST API)"
        if self.session_id is None:
            return "this session has no turns yet"
        return self._why_partial()

    async def show_rewound(self) -> int:
        """Show the session's rewound turns in place (read from the server), marked and not part
        of the conversation; returns how many rewound messages are shown."""
        reason = self.why_not_rewound()
        if reason:
            raise Unsupported(reason)
        sid = self.session_id
        assert sid is not None
        tasks = await self.client.session_tasks(sid, include_rewound=True)
        self._emit(self.conversation.show_rewound(tasks))
        return sum(1 for item in self.conversation.items if item.rewound is not None)

    def hide_rewound(self) -> None:
        self._emit(self.conversation.hide_rewound())
