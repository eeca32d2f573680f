"""Rewind (A2A control message or REST) and edit-and-resend."""

from __future__ import annotations

import contextlib
import logging
from collections.abc import AsyncIterator, Sequence
from typing import Any

from rewindtui.a2a import contract, raw
from rewindtui.a2a.classify import EventKind, StreamEvent
from rewindtui.a2a.refusal import refusal_reason, turn_gone
from rewindtui.chat import limits
from rewindtui.chat.base import PendingEdit
from rewindtui.chat.errors import RewindFailed, RewindOutcomeUnknown
from rewindtui.chat.kagent1_hook import FORK_MODE, fork_rewind
from rewindtui.chat.turns import Turns
from rewindtui.chat.undo import EDIT_OF_KEY
from rewindtui.client.a2a_client import ClientError, ConnectFailed, ConnectionLost, HTTPStatusFailed, MalformedFrame
from rewindtui.client.attachments import Attachment
from rewindtui.model import Change, Conversation, RewindToken
from rewindtui.model.turn_watch import Watch, failure_text, state_of

log = logging.getLogger(__name__)


class Rewinds(Turns):
    # -- rewind ------------------------------------------------------------------------------
    async def _send(self, text: str, attachments: Sequence[Attachment] = ()) -> None:
        if self.edit is not None:
            edit, self.edit = self.edit, None
            await self._rewind(edit.invocation_id, text, token=edit.token)
            return
        await super()._send(text, attachments)

    async def _rewind_to(self, invocation_id: str, text: str | None = None) -> None:
        """Rewind before ``invocation_id`` (and, with ``text``, send it as the next turn).

        The view is truncated at once; the server's answer then becomes the view. A clear refusal
        rolls the view back exactly (RewindFailed); an unknown outcome shows the server's view,
        re-read (RewindOutcomeUnknown)."""
        await self._rewind(invocation_id, text or None, token=None)

    async def _rewind(self, invocation_id: str, text: str | None, token: RewindToken | None) -> None:
        conversation = self.conversation
        try:
            self._require("rewind")
            if token is None:
                try:
                    token, change = conversation.truncate_before(invocation_id)
                except KeyError:
                    raise RewindFailed(f"no turn {invocation_id!r} in this conversation; nothing was sent") from None
                self._emit(change)
        except ClientError:
            if token is not None:
                self._emit(conversation.rollback(token))
            raise
        caps = self.client.capabilities
        assert caps is not None
        self.rewinding = True
        self.last_rewind_answer = None
        try:
            if FORK_MODE in caps.rewind_modes:  # kagent 1.0: a fork from a checkpoint, the original kept
                await fork_rewind(self, invocation_id, token)  # type: ignore[arg-type]
            elif caps.rewind_mode == "rest":
                await self._rewind_rest(invocation_id, token)
            else:
                await self._rewind_a2a(invocation_id, text, token)
                text = None  # the same request carried it
        finally:
            self.rewinding = False
        if text:
            # REST rewind: the text goes as the next turn (marked as the edit's, see chat.undo)
            message = self.client.build_message(text, session_id=self.session_id, metadata={EDIT_OF_KEY: invocation_id})
            await self._turn(message, text)

    async def _refused(self, token: RewindToken, reason: str, reread: bool = False) -> RewindFailed:
        """A clear refusal: the view goes back exactly as it was (the server changed nothing); when
        the turn is no longer on the server (another client rewound it), the server is re-read."""
        self._emit(self.conversation.rollback(token).merge(Change(turn_ended=True)))
        reason = refusal_reason(reason)
        if reread and self.session_id:
            with contextlib.suppress(ClientError):
                read = await self.history.read(self.session_id)  # REST, ListTasks, or the remembered tasks
                server = Conversation(self.session_id)
                server.load_tasks(read.tasks)
                # the server holds the first turns of this view only: another client rewound the rest
                # away; show what it holds (any other difference: the view stays as it was)
                theirs, ours = server.turn_invocations(), self.conversation.turn_invocations()
                if read.source is not None and len(theirs) < len(ours) and ours[: len(theirs)] == theirs:
                    self._emit(self.conversation.load_tasks(read.tasks))
                    return RewindFailed(f"rewind refused: {reason}; the server's conversation is shown now")
        return RewindFailed(f"rewind refused: {reason}; the conversation is unchanged")

    async def _unknown(self, token: RewindToken, invocation_id: str, reason: str) -> RewindOutcomeUnknown:
        """The rewind's answer was lost: show the server's view, and say what it shows."""
        try:
            known = await self.refresh()
        except ClientError as exc:  # unreachable now (killed, restarting): not a server without history
            known, why = False, f"reading the session again failed too ({exc})"
        else:
            why = "this server cannot give its history back"
        if not known:
            self._emit(self.conversation.rollback(token))
            return RewindOutcomeUnknown(
                f"the rewind's answer was lost ({reason}) and {why}: "
                "whether it rewound is unknown (reopen the session to check)",
                reread=False,
            )
        rewound = self.conversation.index_of_invocation(invocation_id) is None
        shows = "rewound" if rewound else "not rewound (the conversation is as it was)"
        return RewindOutcomeUnknown(
            f"the rewind's answer was lost ({reason}); the server's view, shown now, is {shows}"
        )

    async def _rewind_error(self, exc: ClientError, token: RewindToken, invocation_id: str) -> ClientError:
        """A failed rewind request: a clear refusal (4xx, or never sent) rolls back; anything that
        may have reached the server (5xx, connection lost, a garbled answer) re-reads it."""
        if isinstance(exc, HTTPStatusFailed) and exc.status < 500:
            return await self._refused(token, exc.detail or str(exc))
        if isinstance(exc, ConnectFailed) and not isinstance(exc, ConnectionLost):
            return await self._refused(token, f"not sent: {exc}")
        return await self._unknown(token, invocation_id, str(exc))

    async def _rewind_rest(self, invocation_id: str, token: RewindToken) -> None:
        sid = self.session_id
        assert sid is not None
        try:
            answer = await self.client.rewind_rest(sid, invocation_id, history_length=limits.ANSWER_TAIL)
        except (HTTPStatusFailed, ConnectFailed, MalformedFrame) as exc:
            raise await self._rewind_error(exc, token, invocation_id) from None
        event = StreamEvent(EventKind.TASK, answer)
        total, count = self._bounded(event)
        if total is not None and total != count and self._joined(event, total):
            return  # else the session is re-read, as each turn shows on a reload (artifacts, outcomes)
        with contextlib.suppress(ClientError):
            await self.refresh()

    def _bounded(self, event: StreamEvent) -> tuple[int | None, int]:
        """(the effective history's total the answer's metadata gives, or None; the messages it holds)."""
        body = event.body if isinstance(event.body, dict) else {}
        total = raw.metadata(body).get(contract.EFFECTIVE_HISTORY_TOTAL_KEY)
        count = sum(1 for m in raw.history(body) if raw.is_message(m))
        if isinstance(total, float) and total.is_integer():
            total = int(total)  # A2A 1.0 metadata is a protobuf Struct: its numbers are floats
        return (total if isinstance(total, int) and not isinstance(total, bool) else None), count

    def _joined(self, event: StreamEvent, total: int) -> bool:
        """Join a bounded answer (fewer messages than its ``total``) to the view, if the ids show how."""
        change = self.conversation.apply_effective_tail(event, total)
        if change is None:
            return False
        self._emit(change)
        return True

    def _apply_tail(self, event: StreamEvent) -> bool:
        """Apply a rewind's (redo's) answer, asked for with ``limits.ANSWER_TAIL``: a whole effective
        history replaces the view; a bounded one (the contract's total says so) is joined to the
        view when the ids show the join. False, the view unchanged, when the answer cannot be
        told whole and cannot be joined: the server must be re-read."""
        total, count = self._bounded(event)
        if total is not None and total != count:
            return self._joined(event, total)
        if total is None and count == limits.ANSWER_TAIL:
            return False  # as many as asked for, without the count (not this contract): maybe cut
        self._emit(self.conversation.apply(event, effective=True))
        return True

    async def _apply_effective(self, event: StreamEvent) -> None:
        """A rewind's answer into the view; the server re-read when it cannot be joined."""
        if self._apply_tail(event):
            return
        try:
            shown = await self.refresh()
        except ClientError as exc:
            shown, reason = False, str(exc)
        else:
            reason = "the server cannot give its history back"
        if not shown:
            raise RewindOutcomeUnknown(
                "the session was rewound, but its answer held only the newest messages and they do not "
                f"join the view, and re-reading it failed ({reason}): reopen the session to see it",
                reread=False,
            )

    def _answer(self, event: StreamEvent) -> str | None:
        """``flag`` / ``fallback`` if this event is the rewind's answer (the effective history),
        ``drift`` for an unflagged answer from a server whose card promises the flag."""
        if not event.is_task or not isinstance(event.body, dict):
            return None
        if raw.metadata(event.body).get(contract.EFFECTIVE_HISTORY_KEY) is True:
            return "flag"
        if state_of(event) == "completed" and raw.history(event.body):
            caps = self.client.capabilities
            return "drift" if caps is not None and caps.advertised else "fallback"
        return None

    async def _rewind_a2a(self, invocation_id: str, text: str | None, token: RewindToken) -> None:
        """The control message; with text, the same stream then carries the new turn."""
        conversation = self.conversation
        sid = self.session_id
        assert sid is not None
        message = self.client.rewind_message(sid, invocation_id, text)
        if text:
            # the edit's new turn says which turn it replaced (the one undo reads it: chat.undo)
            message.setdefault("metadata", {})[EDIT_OF_KEY] = invocation_id
            self.last_message_id = raw.message_id(message)
            self._emit(conversation.add_user_message(message))
        # a rewind alone answers at once; rewind-and-send then runs a turn, which may think long
        stream = self.client.stream(
            message,
            read_timeout=None if text else self.client.config.timeout,
            history_length=None if text else limits.ANSWER_TAIL,
        )
        drift = False
        try:
            async with contextlib.aclosing(stream) as events:  # type: ignore[type-var]
                async for event in events:
                    failure = failure_text(event)
                    if failure is not None:
                        raise await self._refused(token, failure, reread=turn_gone(event))
                    answer = self._answer(event)
                    if answer == "drift":
                        drift = True
                    elif answer is not None:
                        self.last_rewind_answer = answer
                        # a server without a task list (kagent-adk with the add-on) is read back from
                        # the tasks this client remembers: the rewind's own Task too, or a new process
                        # could not find the rewind to redo
                        self.history.remember(sid, task_id=_task_id(event.body))
                        if not text:
                            await self._apply_effective(event)
                            return
                        self._emit(conversation.apply(event, effective=True))
                        await self._after_answer(events, message, text)
                        return
                    else:
                        self._emit(conversation.apply(event))
        except (HTTPStatusFailed, ConnectFailed, MalformedFrame) as exc:
            raise await self._rewind_error(exc, token, invocation_id) from None
        if drift:
            reason = (
                f"the server answered with a Task that lacks the {contract.EFFECTIVE_HISTORY_KEY} flag its agent card "
                "promises (a drift from the rewind contract)"
            )
        else:
            reason = "the stream ended without the rewound history"
        raise await self._unknown(token, invocation_id, reason)

    async def _after_answer(self, events: AsyncIterator[StreamEvent], message: dict[str, Any], text: str) -> None:
        """Rewind-and-send: the rest of the stream is the new message's turn. A server that rewound
        but did not take the text gets it as the next turn (never shown unless the server has it)."""
        conversation = self.conversation
        token = conversation.checkpoint()
        watch = Watch(raw.message_id(message))
        self.sending = True
        self._stop_requested = False
        self._watch = watch
        try:
            # read in this task: the stream was opened here (stop() still asks the server to cancel)
            outcome = await self._consume(events, watch)
            if outcome.kind == "unknown" and watch.events == 0:
                # nothing after the answer: did the server keep the text?
                if not await self._server_has_message(watch.message_id):
                    self._emit(conversation.restore(token))
                    if watch.message_id:
                        self._emit(conversation.remove_message(watch.message_id))
                    self.sending = False
                    edit = self.client.build_message(
                        text, session_id=self.session_id, metadata={EDIT_OF_KEY: raw.metadata(message).get(EDIT_OF_KEY)}
                    )
                    await self._turn(edit, text)
                    return
            await self._settle(outcome, watch, token)
            self._keep_shown()
        finally:
            self.sending = False
            self._watch = None
            self._remember(watch, text)

    # -- edit and resend ---------------------------------------------------------------------
    def begin_edit(self, invocation_id: str) -> str:
        """Truncate the view before a turn and return its user text for the composer. Nothing is
        sent until :meth:`send` (rewind-and-send); :meth:`cancel_edit` puts the view back."""
        self._require("rewind")
        if self.edit is not None:
            self.cancel_edit()
        text = self.conversation.user_text_of(invocation_id)
        shown = len(self.conversation.turn_invocations())
        token, change = self.conversation.truncate_before(invocation_id)
        self.edit = PendingEdit(invocation_id, token, text, shown - len(self.conversation.turn_invocations()))
        self._emit(change)
        return text

    def cancel_edit(self) -> None:
        if self.edit is not None:
            edit, self.edit = self.edit, None
            self._emit(self.conversation.rollback(edit.token))


def _task_id(task: Any) -> str | None:
    value = task.get("id") if isinstance(task, dict) else None
    return value if isinstance(value, str) and value else None
