"""Turns: send, confirm (answer a question), stop, resume -- and making the view the server's
truth after a stream."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import uuid
from collections.abc import AsyncIterator, Awaitable, Sequence
from typing import Any, TypeVar

from rewindtui.a2a import outgoing, raw
from rewindtui.a2a.classify import EventKind, StreamEvent
from rewindtui.a2a.dialect import TURN_ENDING_STATES
from rewindtui.chat import limits
from rewindtui.chat.errors import AnsweredElsewhere, Busy, StoppedBeforeSending, TurnInterrupted, TurnRefused
from rewindtui.chat.limits import derive_title, gc_paused
from rewindtui.chat.sessions import Sessions
from rewindtui.client.a2a_client import (
    ClientError,
    ConnectFailed,
    ConnectionLost,
    HTTPStatusFailed,
    MalformedFrame,
    Unsupported,
)
from rewindtui.client.attachments import Attachment
from rewindtui.model import CANCELED, INTERRUPTED, Confirmation, RewindToken
from rewindtui.model.turn_watch import StreamEnd, Watch, failure_text, has_message, state_in

log = logging.getLogger(__name__)
T = TypeVar("T")
#: how often a stop pressed before the turn's task is known looks for it (seconds)
_STOP_POLL = 0.02


class Turns(Sessions):
    # -- turns ---------------------------------------------------------------------------------
    @property
    def session_on_server(self) -> bool:
        """The session id names a session the server holds: one opened, one a controller created,
        or a new one (its id the client's, see :meth:`_start_session`) once the server took its first
        message. False before that: a send refused then leaves no session."""
        if self.session_id is None:
            return False
        new, watch = self._new_session, self._watch
        return new is None or new[1] or (watch is not None and watch.accepted)

    async def _send(self, text: str, attachments: Sequence[Attachment] = ()) -> None:
        """Send a message (with ``attachments`` as file and data parts after its text). During an
        edit, :meth:`Chat.send` makes it the rewind-and-send request instead.

        TurnRefused: the server did not take it (the view is as before). TurnInterrupted: the
        stream stopped before the turn's end and could not be resumed. A turn that the server ends
        as failed returns normally (``conversation.turn_state`` says so)."""
        if self.sending or self.rewinding:
            raise Busy("a turn is still running")
        if attachments:
            await self.client.connect()
            self.client.build_message(None, session_id=None, attachments=attachments)  # can they be sent?
        await self._start_session(text)
        conversation = self.conversation
        message = self.client.build_message(
            text if text or not attachments else None,
            session_id=conversation.session_id,
            task_id=conversation.input_task_id,
            attachments=attachments,
        )
        if self._stop_before_send:  # stopped while the send was prepared: the message never leaves
            self._stop_before_send = False
            new, self._new_session = self._new_session, None
            if new is not None:
                await self._drop_new_session(*new)
            raise StoppedBeforeSending()
        self.preparing_send = False
        await self._turn(message, text)

    async def confirm(self, approve: bool) -> None:
        """Answer the pending approval question (``input-required`` with kagent's
        ``adk_request_confirmation``): the same task id and a ``{"decision_type": ...}`` part."""
        perms = self.permissions()
        if not perms.can_confirm:
            raise Busy(perms.confirm_reason) if self.sending or self.rewinding else Unsupported(perms.confirm_reason)
        task_id = self.conversation.input_task_id
        assert task_id is not None
        message = outgoing.decision_message(
            approve, dialect=self.client.dialect, context_id=self.session_id, task_id=task_id
        )
        try:
            await self._turn(message, "")
        except TurnRefused:
            # answered from another client meanwhile? the view follows the server either way
            state = await self._reread(task_id)
            if state is not None and state not in ("input-required", "auth-required"):
                raise AnsweredElsewhere(
                    f"The question was already answered elsewhere: the turn is {state} on the server, as shown now."
                ) from None
            raise

    def pending_confirmation(self) -> Confirmation | None:
        return self.conversation.pending_confirmation()

    async def _start_session(self, text: str) -> None:
        """A new session gets its id now. On a kagent controller the session is created first
        (with the agent's ``agent_ref``, as kagent's UI does); elsewhere the client names the
        context and the server creates it with the first message."""
        if self.session_id is not None:
            return
        if self.client.config.agent_ref and self.client.has_api:
            try:
                session = await self.client.create_session(name=derive_title(text))
            except ClientError as exc:
                raise TurnRefused(f"could not create a session on the controller: {exc}") from exc
            self.session = session
            self.conversation.session_id = session.id
            self._new_session = (session.id, True)
        else:
            self.conversation.session_id = str(uuid.uuid4())
            self._new_session = (self.conversation.session_id, False)

    async def _turn(self, message: dict[str, Any], text: str) -> None:
        """Run one turn for ``message``: show it, stream the answer, and settle the outcome."""
        conversation = self.conversation
        token = conversation.checkpoint()
        watch = Watch(raw.message_id(message))
        self.last_message_id = watch.message_id
        self._shown_at_stop = None
        self.sending = True
        self._stop_requested = False
        self._watch = watch
        self._emit(conversation.add_user_message(message))
        try:
            outcome = await self._consume_stoppable(self.client.stream(message), watch)
            self._note_shown()
            await self._settle(outcome, watch, token)
            self._keep_shown()
        finally:
            self.sending = False
            self._watch = None
            self._remember(watch, text)
            new, self._new_session = self._new_session, None
            if new is not None and not watch.accepted:
                await self._drop_new_session(*new)

    async def _drop_new_session(self, session_id: str, on_server: bool) -> None:
        """A new session whose first send never got through: leave no empty session behind."""
        if on_server:
            with contextlib.suppress(ClientError):
                await self.client.delete_session(session_id)
        if self.session_id == session_id:
            self.conversation.session_id = None
            self.session = None

    async def _settle(self, outcome: StreamEnd, watch: Watch, token: RewindToken) -> None:
        """Make the view the server's truth after a stream, and raise what the caller must know."""
        conversation = self.conversation
        if outcome.kind == "unknown":
            has = await self._server_has_message(watch.message_id)
            if has is False:
                outcome = StreamEnd("refused", f"{outcome.reason}; the server does not have the message")
            else:
                watch.accepted = True
                outcome = StreamEnd("cut", outcome.reason)
        if outcome.kind == "refused":
            self._emit(conversation.restore(token))
            raise TurnRefused(f"not sent: {outcome.reason}")
        if outcome.kind == "stopped" or (outcome.kind == "cut" and self._stop_requested):
            # stopped by the user (a stream the server closed on cancel without a final status
            # is that stop, not an interruption): the view is what the server holds
            state = await self._reread(watch.task_id)
            if state not in TURN_ENDING_STATES:
                self._emit(conversation.end_turn(CANCELED))
                self._emit(conversation.add_error("Stopped: the turn was stopped before it finished."))
            return
        if outcome.kind == "cut":
            await self._recover(watch, outcome.reason)

    def _note_shown(self) -> None:
        """After a stop was pressed: what the view shows of the reply now, when it holds more than
        what was noted (the server streams on until the cancel reaches it, and those words were
        shown too; a shorter text is the server's own replacing them)."""
        noted = self._shown_at_stop
        if noted is None:
            return
        author, text = self.conversation.shown_reply(noted[0])
        if len(text) > len(noted[2]):
            self._shown_at_stop = (noted[0], author, text)

    def _keep_shown(self) -> None:
        """After a stop: nothing streamed is lost. When the server's canceled turn holds less of
        the reply than was shown, the server's text is what the view shows, and what was shown
        before the stop is kept beside it (a note, and ``conversation.stopped_shown``)."""
        shown, self._shown_at_stop = self._shown_at_stop, None
        if shown is None:
            return
        task_id, author, text = shown
        if not text.strip():
            return
        _, now = self.conversation.shown_reply(task_id)
        if text.strip() in now:
            return
        self.conversation.stopped_shown[task_id] = text
        who = author or "the agent"
        self._emit(
            self.conversation.add_error(
                f"Stopped. The server kept less of the reply than was shown; {who} had shown: {text}"
            )
        )

    async def _consume_stoppable(self, events: AsyncIterator[StreamEvent], watch: Watch) -> StreamEnd:
        """:meth:`_consume` in its own task, so that :meth:`stop` can abort it locally."""
        inner = asyncio.ensure_future(self._consume(events, watch))
        self._inner = inner
        try:
            return await inner
        except asyncio.CancelledError:
            current = asyncio.current_task()
            if self._stop_requested and inner.cancelled() and not (current and current.cancelling()):
                return StreamEnd("stopped", "stopped by the user")
            raise
        finally:
            self._inner = None

    async def _consume(self, events: AsyncIterator[StreamEvent], watch: Watch) -> StreamEnd:
        """Apply a stream's events to the view until it ends; say how it ended."""
        conversation = self.conversation
        try:
            async with contextlib.aclosing(events) as stream:  # type: ignore[type-var]
                async for event in stream:
                    failure = failure_text(event)
                    if not watch.accepted and failure is not None:
                        return StreamEnd("refused", f"the server refused the message: {failure}")
                    if event.kind is EventKind.ERROR:
                        # an error in the middle of a turn: the rest of this stream is not to be believed
                        return StreamEnd("cut", f"the server sent an error in the middle of the turn ({failure})")
                    watch.see(event)
                    if self._shown_at_stop is not None:
                        self._note_shown()
                    self._emit(conversation.apply(event))
                    if (
                        event.kind is EventKind.STATUS
                        and isinstance(event.body, dict)
                        and event.body.get("final") is True
                    ):
                        break
        except (HTTPStatusFailed, Unsupported) as exc:
            return StreamEnd("refused", str(exc))
        except ConnectionLost as exc:
            return StreamEnd("cut" if watch.accepted else "unknown", str(exc))
        except ConnectFailed as exc:
            return StreamEnd("refused" if watch.events == 0 else "cut", str(exc))
        except MalformedFrame as exc:
            return StreamEnd("cut" if watch.accepted else "unknown", str(exc))
        if watch.ended:
            return StreamEnd("done")
        if not watch.accepted:
            return StreamEnd("unknown", "the stream ended before the server said anything about the message")
        return StreamEnd("cut", "the stream ended before the turn finished")

    async def _recover(self, watch: Watch, reason: str) -> None:
        """The stream stopped mid-turn: resume it, else re-read the turn; raise TurnInterrupted
        unless it was resumed to its end."""
        conversation = self.conversation
        if watch.task_id and await self._resume_stream(watch.task_id, watch):
            return
        state = await self._reread(watch.task_id)
        if state in TURN_ENDING_STATES:
            what = f"the server has the turn as {state}, shown here"
        else:
            self._emit(conversation.end_turn(INTERRUPTED))
            if state in ("submitted", "working"):
                what = "the turn is still running on the server"
                self.interrupted_task_id = watch.task_id
            else:
                what = "the server cannot say how the turn ended"
        self._emit(conversation.add_error(f"Interrupted: {reason}; {what}."))
        raise TurnInterrupted(f"the turn was interrupted: {reason}; {what}", server_state=state)

    async def _resume_stream(self, task_id: str, watch: Watch) -> bool:
        """Resume a live task's stream where the server offers it; True if it ran to the turn's end."""
        caps = self.client.capabilities
        if caps is None or not caps.streaming:
            return False
        resumed = Watch(watch.message_id, accepted=True, task_id=task_id)
        # stoppable: stop() closes a resumed stream as it closes a turn's own
        outcome = await self._consume_stoppable(self.client.subscribe(task_id), resumed)
        watch.state = resumed.state or watch.state
        if outcome.kind == "done":
            # a resumed stream may repeat a piece its first Task already held (a2a-sdk taps the
            # queue, then reads the task): the turn ends as the server's Task has it, read once
            with contextlib.suppress(ClientError):
                self._emit(self.conversation.apply(StreamEvent(EventKind.TASK, await self.client.get_task(task_id))))
        return outcome.kind == "done"

    async def _reread(self, task_id: str | None) -> str | None:
        """Make the view the server's for this turn; the server's state of it (None: unknown)."""
        conversation = self.conversation
        sid = conversation.session_id
        try:
            if self.client.has_api and sid:
                tasks = await self.client.session_tasks(sid)
                with gc_paused():
                    self._emit(conversation.load_tasks(tasks))
                state = state_in(tasks, task_id)
            elif task_id:
                task = await self.client.get_task(task_id)
                self._emit(conversation.apply(StreamEvent(EventKind.TASK, task)))
                state = state_in([task], task_id)
            else:
                return None
        except ClientError as exc:
            log.info("re-reading the turn failed: %s", exc)
            return None
        if state in TURN_ENDING_STATES:
            conversation.turn_state = state
        return state

    async def _server_has_message(self, message_id: str | None) -> bool | None:
        """Does the server's history of this session hold the message? None: it cannot say."""
        sid = self.session_id
        if not message_id or not sid:
            return None
        try:
            tasks = await self.history.tasks(sid)
        except HTTPStatusFailed as exc:
            return False if exc.status == 404 else None
        except ClientError:
            return None
        return None if tasks is None else has_message(tasks, message_id)

    async def _prepared(self, step: Awaitable[T]) -> T:
        """A step of a send's preparation that waits on the server: a stop meanwhile cancels it, and
        the send ends at once with :class:`StoppedBeforeSending` (the message never left)."""
        task = asyncio.ensure_future(step)
        self._preparing = task
        try:
            return await task
        except asyncio.CancelledError:
            current = asyncio.current_task()
            if self._stop_before_send and task.cancelled() and not (current is not None and current.cancelling()):
                raise StoppedBeforeSending() from None
            raise
        finally:
            self._preparing = None

    # -- stop and resume -----------------------------------------------------------------------
    async def stop(self, grace: float = limits.STOP_GRACE) -> None:
        """Stop the running turn: ask the server to cancel it (CancelTask / tasks/cancel), wait up
        to ``grace`` seconds for the stream to end, then stop reading it. A stop pressed before the
        server's first frame named the turn waits for that frame as long as the stream is alive (up
        to :data:`limits.STOP_NAME_WAIT`), so the cancel is sent however slow the server is. The turn ends
        ``canceled`` (or as the server says, if it finished first); nothing stored is lost. A send
        still being prepared is stopped before its message leaves (it raises
        :class:`StoppedBeforeSending`)."""
        if not self.sending:
            if self.preparing_send:
                self._stop_before_send = True
                if self._preparing is not None:  # e.g. the freshness check, held by a slow server
                    self._preparing.cancel()
            return
        self._stop_requested = True
        task_id = await self._task_id_within(limits.STOP_NAME_WAIT)
        inner = self._inner
        self._shown_at_stop = (task_id, *self.conversation.shown_reply(task_id)) if task_id else None
        if task_id:
            try:
                await asyncio.wait_for(self.client.cancel_task(task_id), grace)
            except (ClientError, TimeoutError) as exc:
                log.info("cancel of task %s not taken: %s", task_id, exc)
        if inner is not None and not inner.done():
            done, _ = await asyncio.wait({inner}, timeout=grace)
            if not done:
                inner.cancel()

    async def _task_id_within(self, grace: float) -> str | None:
        """The running turn's task id; a stop pressed before the server's first frame named it
        waits for that frame (up to ``grace``, or until the stream ends), so the cancel still
        reaches the server."""
        deadline = asyncio.get_running_loop().time() + grace
        while True:
            watch, inner = self._watch, self._inner
            if watch is None or watch.task_id is not None or (inner is not None and inner.done()):
                return watch.task_id if watch is not None else None
            if asyncio.get_running_loop().time() >= deadline:
                return None
            await asyncio.sleep(_STOP_POLL)

    async def resume(self, poll_interval: float = limits.POLL_INTERVAL) -> None:
        """Reattach to a turn still running on the server (after opening a session whose last task
        is working, or after an interruption): stream it again where the server offers it, else
        re-read it until it ends (or :meth:`stop`)."""
        task_id = self.conversation.running_task_id or self.interrupted_task_id
        if task_id is None or self.sending:
            return
        self.sending = True
        self._stop_requested = False
        watch = Watch(None, accepted=True, task_id=task_id)
        self._watch = watch
        try:
            self.interrupted_task_id = None
            if await self._resume_stream(task_id, watch):
                return
            while not self._stop_requested:
                state = await self._reread(task_id)
                if state is None or state in TURN_ENDING_STATES:
                    break
                await asyncio.sleep(poll_interval)
            if self.conversation.turn_state not in TURN_ENDING_STATES:
                self._emit(self.conversation.end_turn(CANCELED if self._stop_requested else INTERRUPTED))
            self._keep_shown()
        finally:
            self.sending = False
            self._watch = None
