"""The chat: the operations a user performs on a session, as plain asyncio over the client and
the conversation model, and the one permissions gate (:meth:`Chat.permissions`).

Its parts, each a class of its own module, one on top of the other: :class:`ChatBase` (state),
:class:`~rewindtui.chat.sessions.Sessions`, :class:`~rewindtui.chat.turns.Turns`,
:class:`~rewindtui.chat.rewind.Rewinds`, :class:`~rewindtui.chat.branches.Branches`; this module
adds the gate, the one undo and the :class:`~rewindtui.chat.outcome.Outcome` of each
rewind-like operation."""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import Any

from rewindtui.chat import freshness, kagent1_hook
from rewindtui.chat.branches import Branches
from rewindtui.chat.errors import Busy, QuestionWaiting, RedoFailed, RewindFailed, TurnRefused, UndoFailed
from rewindtui.chat.outcome import Outcome, plural
from rewindtui.chat.pages import undo_page
from rewindtui.chat.permissions import Action, Permissions, disconnected, read_only
from rewindtui.chat.redo_a2a import undo_point_a2a
from rewindtui.chat.retry import RetryTarget, retry_target
from rewindtui.chat.status import TurnStatus, turn_status
from rewindtui.chat.undo import UNDO_PAGE, RedoPoint, UndoPoint, undo_point
from rewindtui.client.a2a_client import ClientError, Unsupported
from rewindtui.client.attachments import Attachment
from rewindtui.model import Item

log = logging.getLogger(__name__)

#: said when a send waits on an answer (the app's keys; the headless commands say their flags)
QUESTION_FIRST = "Answer the question first: alt+y approves, alt+n rejects."


def _came_back(back: int, gone: int) -> str:
    said = f"{plural(back, 'turn')} back, with the agent's state as it was"
    if gone:
        said += f"; {plural(gone, 'turn')} went to the rewound turns"
    return said + "."


class Chat(Branches):
    # -- the gate --------------------------------------------------------------------------
    def permissions(self) -> Permissions:
        """What may be done now and why not: the one capability gate (the app renders it, the
        client only does what it is asked)."""
        caps = self.client.capabilities
        if caps is None:
            return disconnected(self.history_note)
        busy = ""
        if self.rewinding:
            busy = "a rewind is in progress"
        elif self.sending:
            busy = "wait for the current turn to finish"
        partial = self._why_partial()
        rewind_reason = caps.why_no_rewind() if not caps.can_rewind else busy or partial
        fork_reason = caps.why_no_fork() if not caps.fork else busy or partial
        if (not rewind_reason or not fork_reason) and self.conversation.items and not self.conversation.has_turns():
            no_turns = (
                "this server does not say which turn a message belongs to (its messages carry no "
                "invocation ids), so there is no point to rewind to"
            )
            rewind_reason = rewind_reason or no_turns
            fork_reason = fork_reason or no_turns.replace("rewind to", "fork from")
        question = self.conversation.pending_confirmation()
        redo = self.why_not_redo()
        running = self.conversation.running_task_id or self.interrupted_task_id
        reasons = {
            Action.SEND: busy or (QUESTION_FIRST if question is not None else ""),
            Action.STOP: "" if self.sending or self.preparing_send else "no turn is running",
            Action.RESUME: busy or ("" if running else "no turn is running on the server"),
            Action.ANSWER: busy or ("" if question is not None else "no question is waiting for an answer"),
            Action.REWIND: rewind_reason,
            Action.EDIT: rewind_reason,
            Action.FORK: fork_reason,
            Action.REDO: redo,
            Action.RESTORE: self._why_not_restore(redo),
            Action.UNDO: self._why_not_undo(redo),
            Action.REAPPLY: self._why_not_reapply(busy),
            Action.RETRY: busy
            or ("" if retry_target(self.conversation) is not None else "nothing to retry: the last turn did not fail"),
            Action.SWITCH_SESSION: busy and f"{busy} (or stop it)" if self.sending else busy,
            Action.LOAD_OLDER: "" if self.conversation.older_token is not None else "the whole session is shown",
            Action.SHOW_REWOUND: self.why_not_rewound(),
        }
        perms = Permissions(
            reasons,
            history_note=self._older_note() or self.history_note,
            busy_reason=busy,
            undo_label=self.undo_label(),
            redo_label=self.redo_label(),
        )
        return read_only(perms, kagent1_hook.read_only_reason(self))  # a read-only share

    def rewind_preview(self, before_turn: int) -> str:
        """What confirming a rewind to before turn ``before_turn`` (1-based) does, when it is not
        "those turns go, on the server too" ("" then): kagent 1.0 forks, the original kept."""
        return kagent1_hook.preview_for(self, before_turn)

    def rewind_words(self) -> str:
        """What rewind is here, for a status line: "a2a", "rest", "unavailable", or the
        profile's words (kagent 1.0: "fork" and what its checkpoints cost)."""
        caps = self.client.capabilities
        if caps is None:
            return "unknown"
        return kagent1_hook.rewind_words(self) or caps.rewind_mode or "unavailable"

    def why_not(self, action: Action) -> str:
        return self.permissions().why_not(action)

    def turn_status(self) -> TurnStatus:
        """The turn's state in words, from the conversation (what the server holds)."""
        return turn_status(self.conversation, sending=self.sending)

    def _why_not_restore(self, redo: str) -> str:
        caps = self.client.capabilities
        if caps is None or not caps.redo or caps.rewind_off:
            return redo
        return redo or self.why_not_rewound()

    def _why_not_reapply(self, busy: str) -> str:
        caps = self.client.capabilities
        if caps is None:
            return "not connected"
        if self.redo_point() is None:
            if caps.redo and self._redo_stale():
                return "nothing to redo: the session changed since the undo"
            return caps.why_no_redo() if not caps.redo else "nothing to redo: undo something first (ctrl+z)"
        if busy:
            return busy
        if self.edit is not None:
            return "an edit is in progress (Esc cancels it)"
        return self._why_partial()

    def _why_not_undo(self, redo: str) -> str:
        if redo.startswith("nothing to redo"):
            return "nothing to undo"
        if redo:
            return redo
        return "" if self.undo_label() else "nothing to undo"

    def why_not_rewind_to(self, item: Item) -> str:
        """Why "Rewind to here" on ``item`` is unavailable ("" when it is available)."""
        reason = self.permissions().rewind_reason
        if reason:
            return reason
        if item.rewind_target is None:
            return "this message does not belong to a turn the server can rewind to"
        return ""

    def _require(self, what: str) -> None:
        reason = self.why_not(Action(what))
        if reason:
            raise Busy(reason) if self.sending or self.rewinding else Unsupported(reason)

    # -- the one undo ------------------------------------------------------------------------
    def undo_point(self) -> UndoPoint | None:
        """What the one undo would undo in the open session (None: nothing). Kept per session:
        another session's rewind is never the open session's undo."""
        sid = self.session_id
        return self._undo.get(sid) if sid is not None else None

    def undo_label(self) -> str | None:
        """What the one undo would undo, in words ("undo the rewind of 2 turns"); None: nothing."""
        point = self.undo_point()
        return point.label if point is not None else None

    async def refresh_undo(self) -> UndoPoint | None:
        """Read what can be undone in the open session from the server (it survives restarts)."""
        sid = self.session_id
        if sid is None:
            return None
        point = await self._read_undo(sid)
        if point is None:
            self._undo.pop(sid, None)
        else:
            self._undo[sid] = point
        return point

    async def _read_undo(self, session_id: str) -> UndoPoint | None:
        caps = self.client.capabilities
        if caps is not None and kagent1_hook.FORK_MODE in caps.rewind_modes:  # where the fork came from
            return await kagent1_hook.read_undo_point(self, session_id)
        if caps is None or not caps.redo:
            return None
        if not self.client.has_api:
            if caps.rewind_mode != "a2a":
                return None
            return await undo_point_a2a(self, session_id)  # the kagent-rewind add-on
        try:
            page = await undo_page(self.client, session_id, UNDO_PAGE)
        except ClientError as exc:
            log.info("could not read what can be undone in %s: %s", session_id, exc)
            return None
        return undo_point(session_id, page.tasks, whole=page.next_page_token is None)

    async def undo(self) -> Outcome:
        """Undo what :meth:`undo_label` names, in the open session only. A rewind's turns come
        back with the agent's state; undoing an edit brings back the turns it replaced, and the
        edited turn becomes a rewound branch. A send is never undone. UndoFailed: nothing to
        undo, or the session changed on the server since (nothing was undone)."""
        reason = self.why_not(Action.UNDO)
        if reason:
            raise Busy(reason) if self.sending or self.rewinding else UndoFailed(reason)
        sid = self.session_id
        point = self.undo_point()
        if point is None or sid is None or point.session_id != sid:
            raise UndoFailed("nothing to undo in this session")
        if point.kind == "restore":
            return await self._undo_restore(sid, point)
        fresh = await self._read_undo(sid)
        if fresh != point:
            await self.open(sid)  # the session changed on the server: the view follows it
            self._set_undo(sid, fresh)
            now = f"now: {fresh.label}" if fresh is not None else "nothing to undo now"
            raise UndoFailed(f"the session changed on the server since; nothing was undone ({now})")
        before = self.conversation.turn_invocations()
        try:
            await self._redo(point.rewind_task_id)
        finally:
            await self.refresh_undo()  # whatever happened, the label says what the server holds now
        after = self.conversation.turn_invocations()  # one walk over a long view, not one per use
        had, has = set(before), set(after)
        back, gone = len(has - had), len(had - has)
        came = [t for t in after if t not in had]
        if point.kind == "rewind" and came and not gone and self._redo_kept():
            self._redo_points.setdefault(sid, []).append(RedoPoint(sid, "rewind", back, tuple(after), before=came[0]))
        what = "the edit" if point.kind == "edit" else "the rewind"
        said = f"Undid {what}: {plural(back, 'turn')} back, with the agent's state as it was"
        if gone:
            said += f"; {plural(gone, 'turn')} kept as a rewound branch"
        return self._outcome(Action.UNDO, said + ".", back=back, gone=gone)

    async def _undo_restore(self, sid: str, point: UndoPoint) -> Outcome:
        """Undo a restore: rewind again before the first turn it brought back (they go back to the
        rewound turns; nothing is lost), on the state the restore left only."""
        try:
            await freshness.ensure_fresh(self, UndoFailed)
        except UndoFailed:
            self._undo.pop(sid, None)
            raise UndoFailed(
                "the session changed on the server since the restore: reloaded; nothing was undone"
            ) from None
        if self._turns() != point.fingerprint:
            self._undo.pop(sid, None)
            raise UndoFailed("the session changed since the restore; nothing was undone")
        before = self.conversation.turn_invocations()
        try:
            await self._rewind_to(point.before)
        finally:
            self._undo.pop(sid, None)
            await self.refresh_undo()
        back, gone = self._moved(before)
        rewind = self.undo_point()  # the rewind just made: redoing the restore is its server redo
        if rewind is not None and rewind.kind == "rewind" and self._redo_kept():
            redo = RedoPoint(sid, "restore", gone, self._turns(), rewind_task_id=rewind.rewind_task_id)
            self._redo_points.setdefault(sid, []).append(redo)
        return self._outcome(
            Action.UNDO, f"Undid the restore: {plural(gone, 'turn')} went back to the rewound turns.", gone=gone
        )

    # -- redo: what the undo undid, again -----------------------------------------------------
    def redo_point(self) -> RedoPoint | None:
        """What redo would do again in the open session (None: nothing, or the view changed since
        the undo -- e.g. another client's turn, shown when the session was re-read -- so a redo
        would only be refused: it is not offered)."""
        sid = self.session_id
        stack = self._redo_points.get(sid, []) if sid is not None else []
        return stack[-1] if stack and not self._redo_stale() else None

    def _redo_stale(self) -> bool:
        """The open session has redo points, but its turns are no longer those right after the undo.
        The gate asks this for every key the footer shows, and the view's turns are a walk over its
        items (20 ms at 50,000 messages): the answer is kept while the view is the same object,
        with the same number of items and the same last one (a re-read is a new view; a turn sent
        or streaming adds or replaces the last item)."""
        stack = self._redo_points.get(self.session_id, []) if self.session_id is not None else []
        if not stack:
            return False
        view, point = self.conversation, stack[-1]
        items = view.items
        last = items[-1] if items else None
        checked = self._redo_checked
        if checked is None or not (
            checked[0] is view and checked[1] == len(items) and checked[2] is last and checked[3] is point
        ):
            checked = self._redo_checked = (view, len(items), last, point, point.fingerprint != self._turns())
        return checked[4]

    def redo_label(self) -> str | None:
        """What redo would do again, in words ("redo the rewind of 2 turns"); None: nothing."""
        point = self.redo_point()
        return point.label if point is not None else None

    def _turns(self) -> tuple[str, ...]:
        return tuple(self.conversation.turn_invocations())

    def _redo_kept(self) -> bool:
        """Redo is offered where the undo is the server's redo of a rewind (not kagent 1.0's fork)."""
        caps = self.client.capabilities
        return caps is not None and caps.redo and kagent1_hook.FORK_MODE not in caps.rewind_modes

    async def reapply(self) -> Outcome:
        """Do again what the last undo undid: the same rewind again (the server rewinds again), or
        the same restore; the undo before it is next (ctrl+z ctrl+z ctrl+r ctrl+r). RedoFailed, nothing
        done: nothing to redo, or the session changed since the undo (another client's turn or
        rewind; the view is re-read)."""
        reason = self.why_not(Action.REAPPLY)
        if reason:
            raise Busy(reason) if self.sending or self.rewinding else RedoFailed(reason)
        point = self.redo_point()
        sid = self.session_id
        assert point is not None and sid is not None
        try:
            await freshness.ensure_fresh(self, RedoFailed)
        except RedoFailed:
            self._redo_points.pop(sid, None)
            raise RedoFailed("the session changed on the server since the undo: reloaded; nothing was redone") from None
        if self._turns() != point.fingerprint:
            self._redo_points.pop(sid, None)
            raise RedoFailed("the session changed since the undo; nothing was redone")
        rest = self._redo_points.pop(sid, [])[:-1]  # the older undos: redone after this one, in turn
        if point.kind == "rewind":
            outcome = await self.rewind(point.before)
            self._redo_points[sid] = rest
            return self._outcome(
                Action.REAPPLY,
                f"Redid the rewind: {plural(outcome.turns_gone, 'turn')} rewound again.",
                gone=outcome.turns_gone,
            )
        outcome = await self.restore(point.rewind_task_id)
        self._redo_points[sid] = rest
        return self._outcome(
            Action.REAPPLY,
            f"Redid the restore: {plural(outcome.turns_back, 'turn')} back, with the agent's state as it was.",
            back=outcome.turns_back,
            gone=outcome.turns_gone,
            warning=outcome.warning,
        )

    def _set_undo(self, session_id: str, point: UndoPoint | None) -> None:
        kept = self._undo.get(session_id)
        if (
            kept is not None
            and kept.kind == "restore"
            and session_id == self.session_id
            and kept.fingerprint == self._turns()
        ):
            return  # the restore is still the last thing done here (the server cannot say it)
        if point is None:
            self._undo.pop(session_id, None)
        else:
            self._undo[session_id] = point

    def _moved(self, before: Sequence[str]) -> tuple[int, int]:
        after = self.conversation.turn_invocations()
        return len(set(after) - set(before)), len(set(before) - set(after))

    def _outcome(self, action: Action, said: str, *, back: int = 0, gone: int = 0, warning: str = "") -> Outcome:
        return Outcome(
            action,
            self.session_id,
            said,
            turns_gone=gone,
            turns_back=back,
            undo_label=self.undo_label(),
            warning=warning,
        )

    # -- the operations, each with its outcome --------------------------------------------------
    def _undo_from(self, session_id: str, tasks: list[Any], whole: bool) -> None:
        """On open: the undo is read from the session's newest page, which the open reads anyway
        (no request of its own)."""
        caps = self.client.capabilities
        point = (
            undo_point(session_id, tasks, whole=whole)
            if caps is not None and caps.redo and self.client.has_api
            else None
        )
        if caps is not None and kagent1_hook.FORK_MODE in caps.rewind_modes:  # where the fork came from
            point = kagent1_hook.undo_point_from(self, session_id, tasks, whole=whole)
        self._set_undo(session_id, point)

    async def _undo_on_open(self) -> None:
        caps = self.client.capabilities
        if caps is not None and caps.redo and not self.client.has_api and caps.rewind_mode == "a2a":
            await self.refresh_undo()  # the kagent-rewind add-on: no task list, the view's rewind is read

    async def send(self, text: str, attachments: Sequence[Attachment] = ()) -> Outcome | None:
        """Send a message; during an edit this is the edit's rewind-and-send, and its
        :class:`Outcome` is returned (None for a plain turn). QuestionWaiting (a TurnRefused):
        a question waits for its answer; nothing was sent. StoppedBeforeSending (a TurnRefused):
        :meth:`stop` came before the message left."""
        self.preparing_send = self.edit is None and not self.sending and not self.rewinding
        try:
            # another client changed the session: reload (a stop meanwhile ends the send at once)
            await self._prepared(freshness.ensure_fresh(self, TurnRefused))
            if self.edit is None and self.conversation.pending_confirmation() is not None and not self.sending:
                raise QuestionWaiting(QUESTION_FIRST)
            editing = self.edit is not None
            set_aside = self.edit.turns if self.edit is not None else 0
            try:
                await self._send(text, attachments)
            finally:
                if editing:
                    await self.refresh_undo()
                elif self.session_id is not None:
                    self._undo.pop(self.session_id, None)  # a send after a rewind: that rewind is done with
                if self.session_id is not None:
                    self._redo_points.pop(self.session_id, None)  # a new turn: what was undone stays undone
        finally:
            self.preparing_send = self._stop_before_send = False
        if not editing:
            return None
        # the turns the edit set aside went (counted when it began: the view has been without them since)
        return self._outcome(
            Action.EDIT, f"Rewound {plural(set_aside, 'turn')} and sent the edited message.", gone=set_aside
        )

    async def retry(self) -> Outcome | None:
        """Send the failed last turn again as one clean turn: a rewind-and-send of it where the
        server rewinds (the model then sees the message once), else a plain send (the server never
        took it). Unsupported when the last turn did not fail."""
        target = await self._retry_target()
        if target.invocation_id and not self.why_not(Action.REWIND):
            if not target.attachments:
                return await self.rewind(target.invocation_id, target.text)
            outcome = await self.rewind(target.invocation_id)  # files go on a turn of their own
            await self.send(target.text, target.attachments)
            return outcome
        await self.send(target.text, target.attachments)
        return None

    async def _retry_target(self) -> RetryTarget:
        target = retry_target(self.conversation)
        if target is not None and not target.certain:  # read back from the server: ask it
            state = ""
            if target.task_id:
                task = await self.client.get_task(target.task_id, history_length=0)
                state = str(((task or {}).get("status") or {}).get("state") or "")
            if state.removeprefix("TASK_STATE_").lower() != "failed":
                target = None
        if target is None:
            raise Unsupported(
                f"nothing to retry in session {self.session_id}: its last turn did not fail "
                f"(it is {self.conversation.turn_state})"
            )
        return target

    async def rewind(self, invocation_id: str, text: str | None = None) -> Outcome:
        """Rewind before ``invocation_id`` (with ``text``: and send it, as an edit does)."""
        await freshness.ensure_fresh(self, RewindFailed)  # another client changed the session: reload
        before = self.conversation.turn_invocations()
        self._forget_redo()
        try:
            await self._rewind_to(invocation_id, text)
        finally:
            await self.refresh_undo()
        back, gone = self._moved(before)
        gone -= 1 if text else 0
        return self._outcome(Action.EDIT if text else Action.REWIND, f"Rewound {plural(gone, 'turn')}.", gone=gone)

    def _forget_redo(self) -> None:
        if self.session_id is not None:
            self._redo_points.pop(self.session_id, None)

    async def redo(self, rewind_task_id: str | None = None) -> Outcome:
        """The server's redo: undo its rewind ``rewind_task_id`` (None: the last one)."""
        before = self.conversation.turn_invocations()
        self._forget_redo()
        try:
            await self._redo(rewind_task_id)
        finally:
            await self.refresh_undo()
        back, gone = self._moved(before)
        return self._outcome(Action.REDO, _came_back(back, gone), back=back, gone=gone)

    async def restore(self, rewind_task_id: str, up_to: str | None = None) -> Outcome:
        """Bring a rewound branch back: undo the rewind ``rewind_task_id`` that took it away; with
        ``up_to`` (the invocation after the turn restored to), rewind again before it, so the
        branch comes back only up to there (its later turns stay rewound: nothing is lost)."""
        before = self.conversation.turn_invocations()
        self._forget_redo()
        warning = ""
        try:
            await self._redo(rewind_task_id)
            if up_to is not None and up_to in self.conversation.turn_invocations():
                try:
                    await self._rewind_to(up_to)
                except ClientError as exc:
                    warning = (
                        "The whole branch came back, but the turns after the one chosen could not be "
                        f"rewound again: {exc}"
                    )
        finally:
            await self.refresh_undo()
        back, gone = self._moved(before)
        had = set(before)  # once: not per turn (quadratic: 3 s at 10,000 turns)
        came = [t for t in self.conversation.turn_invocations() if t not in had]
        sid = self.session_id
        if came and not gone and sid is not None:  # its undo: rewind again before the first turn back
            self._undo[sid] = UndoPoint(sid, "", "restore", back, before=came[0], fingerprint=self._turns())
        return self._outcome(Action.RESTORE, _came_back(back, gone), back=back, gone=gone, warning=warning)

    async def fork(self, invocation_id: str) -> Outcome:
        original = self.session_id
        session = await self._fork(invocation_id)
        return Outcome(
            Action.FORK,
            session.id,
            f"Forked into “{session.name or session.id}” (from {original}).",
            undo_label=self.undo_label(),
            session=session,
        )

    async def fork_branch(self, invocation_id: str) -> Outcome:
        original = self.session_id
        session = await self._fork_branch(invocation_id)
        return Outcome(
            Action.FORK,
            session.id,
            f"Forked the rewound branch into “{session.name or session.id}” (from {original}).",
            undo_label=self.undo_label(),
            session=session,
        )
