"""The operations a user performs on a session — open, send, stop, confirm, rewind,
edit-and-resend, fork — as plain asyncio over the client and the conversation model. The app and
the headless commands both drive this; it knows nothing about terminals.

Every change to the conversation is passed to ``listener`` (a :class:`~rewindtui.conversation.Change`)
as it happens, so a view can redraw incrementally.

The view is the server's truth:

- A send the server refuses (an HTTP error, a JSON-RPC error, or a failed status before the server
  took the message) leaves no trace in the view and raises :class:`TurnRefused`: the caller keeps
  the draft.
- A stream that is cut, ends without a final status, or carries an error after the server took the
  message is never shown as a finished turn: the stream is resumed where the server offers it
  (``SubscribeToTask`` / ``tasks/resubscribe``), else the turn is re-read from the server; if
  it was not resumed, :class:`TurnInterrupted` says what the server holds. The turn is marked
  ``interrupted`` unless the server says how it ended.
- A rewind the server clearly refuses is rolled back exactly (:class:`RewindFailed`); one whose
  outcome is unknown (connection lost after sending, timeout, 5xx, no answer) re-reads the
  server's view and shows that (:class:`RewindOutcomeUnknown`).

What may be asked for at all is decided in one place, :meth:`Chat.permissions`.
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
import logging
import uuid
from collections.abc import AsyncIterator, Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from rewindtui import freshness
from rewindtui.a2a import contract, outgoing, raw
from rewindtui.a2a.classify import EventKind, StreamEvent
from rewindtui.a2a.dialect import TURN_ENDING_STATES
from rewindtui.a2a.refusal import refusal_reason, turn_gone
from rewindtui.attachments import Attachment
from rewindtui.client import (
    A2AClient,
    ClientError,
    ConnectFailed,
    ConnectionLost,
    HTTPStatusFailed,
    MalformedFrame,
    Session,
    Unsupported,
)
from rewindtui.conversation import CANCELED, INTERRUPTED, Change, Confirmation, Conversation, Item, RewindToken
from rewindtui.history import History, SessionNotFound
from rewindtui.kagent1.chat_hook import FORK_MODE, fork_rewind, fork_undo
from rewindtui.local_sessions import LocalSessions
from rewindtui.redo_a2a import redo_a2a
from rewindtui.turn_watch import Outcome, Watch, failure_text, has_message, state_in, state_of

log = logging.getLogger(__name__)

Listener = Callable[[Change], None]

#: How long :meth:`Chat.stop` waits for the server to end the turn before aborting locally.
STOP_GRACE = 2.0
#: A rewind (or redo) asks for at most this many of the effective history's newest messages; the
#: view keeps what it holds before them (:meth:`Conversation.apply_effective_tail`).
ANSWER_TAIL = 200
#: How often :meth:`Chat.resume` re-reads a running task when the server cannot stream it again.
POLL_INTERVAL = 1.0
_NAME_LIMIT = 40


# -- errors ------------------------------------------------------------------------------------
class Busy(ClientError):
    """Another turn or rewind is in flight."""


class TurnRefused(ClientError):
    """The server did not take the message; the view shows no trace of it (keep the draft)."""


class TurnInterrupted(ClientError):
    """The stream stopped before the turn's end and could not be resumed. The view shows what the
    server holds; ``server_state`` is its state of the turn (None: it could not say)."""

    def __init__(self, message: str, server_state: str | None = None) -> None:
        super().__init__(message)
        self.server_state = server_state


class RewindFailed(ClientError):
    """The server refused the rewind (or it was not sent); the view was rolled back exactly."""


class RewindOutcomeUnknown(ClientError):
    """The rewind's answer was lost; the view shows the server's view, re-read afterwards
    (``reread``; False: the server could not give it back, and the view is as before)."""

    def __init__(self, message: str, reread: bool = True) -> None:
        super().__init__(message)
        self.reread = reread


class RedoFailed(ClientError):
    """The server refused the redo (or it was not sent); nothing changed."""


# -- permissions -------------------------------------------------------------------------------
@dataclass(frozen=True)
class Permissions:
    """What the user may do now, and why not. The app and the CLI only follow this."""

    can_rewind: bool  # rewind and edit-and-resend
    can_fork: bool
    can_stop: bool
    can_confirm: bool  # answer a pending approval question
    rewind_reason: str = ""  # why not ("" when allowed)
    fork_reason: str = ""
    stop_reason: str = ""
    confirm_reason: str = ""
    #: said in the view when the server cannot give (all of) the conversation back
    history_note: str = ""
    #: what is in flight ("" when nothing is): a reason above equal to it means "not now", not "never"
    busy_reason: str = ""
    #: a rewound branch can be brought back: the server offers redo (and rewind is not off)
    can_restore: bool = False


@dataclass
class PendingEdit:
    invocation_id: str
    token: RewindToken
    text: str


#: Tasks per page when a session is read over REST by pages (newest first): one page is parsed and
#: shown at a time, so the memory a load peaks at is a page's, not the whole session's answer.
OPEN_PAGE_TASKS = 250

#: A load that leaves at least this many new objects for the cyclic collector (two a message, its
#: item and its list of message ids: about 10,000 messages) freezes what is alive out of its way
#: afterwards (see :func:`gc_paused`) ...
FREEZE_AFTER_OBJECTS = 20_000
#: ... as does, a page at a time, a session this long (in items) loaded by pages.
LONG_SESSION_ITEMS = FREEZE_AFTER_OBJECTS // 2


@contextlib.contextmanager
def gc_paused() -> Iterator[None]:
    """Pause the cyclic garbage collector: loading a long session makes thousands of small objects,
    none of them garbage, and the collector's passes over them would cost a third of the load.

    After a long load, what is alive is frozen (``gc.freeze``) after a collection of the young
    generations (what the load made, and any garbage among it): otherwise each later full pass
    walks every message again -- 0.2 s at 50,000 messages, a stall in the middle of a streamed
    reply or a scroll. Frozen objects are still freed by reference counting when nothing refers
    to them (a session's parsed JSON and its items hold no cycles, so leaving the session frees
    them). A full collection before freezing would also free cycles that were already garbage
    in the oldest generation, but it walks the whole session: a third of the time of loading
    100,000 messages (bench/bench_wire.py), so it is not made."""
    enabled = gc.isenabled()
    before = gc.get_count()[0]
    gc.disable()
    try:
        yield
    finally:
        if gc.get_count()[0] - before >= FREEZE_AFTER_OBJECTS:
            gc.collect(1)
            gc.freeze()
        if enabled:
            gc.enable()


def _freeze_if_large(items: int) -> None:
    """While a long session's pages come in: what is alive is frozen out of the cyclic
    collector's way once the session is long (see :func:`gc_paused`), a page at a time."""
    if items >= LONG_SESSION_ITEMS:
        gc.collect(1)
        gc.freeze()


def derive_title(text: str) -> str:
    line = " ".join(text.strip().split("\n", 1)[0].split())
    return line if len(line) <= _NAME_LIMIT else line[: _NAME_LIMIT - 1].rstrip() + "…"


# -- the chat ----------------------------------------------------------------------------------
class Chat:
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
        #: the id given to a new session for its first send, and whether the server was asked to
        #: create it: a send that does not get through leaves no session behind
        self._new_session: tuple[str, bool] | None = None
        #: :meth:`open` shows a session's newest page only, and :meth:`load_older` brings the
        #: older ones (the app, which paints the newest turns first); else open reads them all
        self.open_newest_first = False
        #: why the older turns of the open session could not be loaded ("" if they could)
        self.older_error = ""
        self._older_lock = asyncio.Lock()

    @property
    def session_id(self) -> str | None:
        return self.conversation.session_id

    def _emit(self, change: Change) -> None:
        if self.listener is not None and not change.empty:
            self.listener(change)

    # -- permissions ---------------------------------------------------------------------------
    def permissions(self) -> Permissions:
        """What may be done now and why not: the one capability gate (the app renders it, the
        client only does what it is asked)."""
        caps = self.client.capabilities
        if caps is None:
            reason = "not connected"
            return Permissions(False, False, False, False, reason, reason, reason, reason, self.history_note)
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
        stop_reason = "" if self.sending else "no turn is running"
        confirmation = self.conversation.pending_confirmation()
        confirm_reason = busy or ("" if confirmation is not None else "no question is waiting for an answer")
        return Permissions(
            can_rewind=not rewind_reason,
            can_fork=not fork_reason,
            can_stop=self.sending,
            can_confirm=not confirm_reason,
            rewind_reason=rewind_reason,
            fork_reason=fork_reason,
            stop_reason=stop_reason,
            confirm_reason=confirm_reason,
            history_note=self._older_note() or self.history_note,
            busy_reason=busy,
            can_restore=caps.redo and not caps.rewind_off,
        )

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

    def why_not_rewind_to(self, item: Item) -> str:
        """Why "Rewind to here" on ``item`` is unavailable ("" when it is available)."""
        reason = self.permissions().rewind_reason
        if reason:
            return reason
        if item.rewind_target is None:
            return "this message does not belong to a turn the server can rewind to"
        return ""

    def _require(self, what: str) -> None:
        perms = self.permissions()
        reason = {"rewind": perms.rewind_reason, "fork": perms.fork_reason}[what]
        if reason:
            raise Busy(reason) if self.sending or self.rewinding else Unsupported(reason)

    # -- sessions ------------------------------------------------------------------------------
    async def open(self, session_id: str | None = None) -> None:
        """Open a session, or (None) start a new one. A new session is created on the server only
        by its first message. ``session_id`` may be any unique prefix of a known session's id.
        SessionNotFound when the server (or, without a REST API, this client) knows no such session."""
        await self.client.connect()
        conversation = Conversation()
        read = None
        if session_id is not None:
            read = await self.history.read(session_id, page=OPEN_PAGE_TASKS)
            conversation.session_id = read.session.id if read.session else session_id
            with gc_paused():
                conversation.load_tasks(read.tasks, read.older_token)
            read.tasks = []  # parsed: let the page's wire dicts go
        self.conversation = conversation
        self.session = read.session if read else None
        self.history_source = read.source if read else None
        self.history_note = read.note if read else ""
        self.older_error = ""
        self.edit = None
        self.interrupted_task_id = None
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
                    page = await self.client.session_tasks_page(sid, OPEN_PAGE_TASKS, token)
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
                    change = conversation.prepend_tasks(page.tasks, page.next_page_token)
                del page
                _freeze_if_large(len(conversation.items))
                self.older_error = ""
                self._emit(change)

    async def _reread_newest(self, conversation: Conversation) -> None:
        """After a page could not be read: the view becomes the session's newest page again, as
        the server has it now (its older pages then load from there)."""
        sid = conversation.session_id
        assert sid is not None
        newest = await self.client.session_tasks_page(sid, OPEN_PAGE_TASKS)
        if conversation is self.conversation:
            with gc_paused():
                change = conversation.load_tasks(newest.tasks, newest.next_page_token)
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
        """Re-read the whole session from the server (the server's view is the truth). False when
        the server cannot give it back."""
        sid = self.session_id
        tasks = await self.history.tasks(sid) if sid else None
        if tasks is None:
            return False
        with gc_paused():
            self._emit(self.conversation.load_tasks(tasks))
        return True

    def _remember(self, watch: Watch, text: str) -> None:
        if self.session_id and watch.accepted:
            self.history.remember(self.session_id, title=derive_title(text), task_id=watch.task_id)

    # -- turns ---------------------------------------------------------------------------------
    async def send(self, text: str, attachments: Sequence[Attachment] = ()) -> None:
        """Send a message (with ``attachments`` as file and data parts after its text). During an
        edit, this is the rewind-and-send request.

        TurnRefused: the server did not take it (the view is as before). TurnInterrupted: the
        stream stopped before the turn's end and could not be resumed. A turn that the server ends
        as failed returns normally (``conversation.turn_state`` says so)."""
        await freshness.ensure_fresh(self, TurnRefused)  # another client changed the session: reload
        if self.edit is not None:
            edit, self.edit = self.edit, None
            await self._rewind(edit.invocation_id, text, token=edit.token)
            return
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
        await self._turn(message, "")

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
        self.sending = True
        self._stop_requested = False
        self._watch = watch
        self._emit(conversation.add_user_message(message))
        try:
            outcome = await self._consume_stoppable(self.client.stream(message), watch)
            await self._settle(outcome, watch, token)
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

    async def _settle(self, outcome: Outcome, watch: Watch, token: RewindToken) -> None:
        """Make the view the server's truth after a stream, and raise what the caller must know."""
        conversation = self.conversation
        if outcome.kind == "unknown":
            has = await self._server_has_message(watch.message_id)
            if has is False:
                outcome = Outcome("refused", f"{outcome.reason}; the server does not have the message")
            else:
                watch.accepted = True
                outcome = Outcome("cut", outcome.reason)
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

    async def _consume_stoppable(self, events: AsyncIterator[StreamEvent], watch: Watch) -> Outcome:
        """:meth:`_consume` in its own task, so that :meth:`stop` can abort it locally."""
        inner = asyncio.ensure_future(self._consume(events, watch))
        self._inner = inner
        try:
            return await inner
        except asyncio.CancelledError:
            current = asyncio.current_task()
            if self._stop_requested and inner.cancelled() and not (current and current.cancelling()):
                return Outcome("stopped", "stopped by the user")
            raise
        finally:
            self._inner = None

    async def _consume(self, events: AsyncIterator[StreamEvent], watch: Watch) -> Outcome:
        """Apply a stream's events to the view until it ends; say how it ended."""
        conversation = self.conversation
        try:
            async with contextlib.aclosing(events) as stream:  # type: ignore[type-var]
                async for event in stream:
                    failure = failure_text(event)
                    if not watch.accepted and failure is not None:
                        return Outcome("refused", f"the server refused the message: {failure}")
                    if event.kind is EventKind.ERROR:
                        # an error in the middle of a turn: the rest of this stream is not to be believed
                        return Outcome("cut", f"the server sent an error in the middle of the turn ({failure})")
                    watch.see(event)
                    self._emit(conversation.apply(event))
                    if event.kind is EventKind.STATUS and isinstance(event.body, dict) and event.body.get("final") is True:
                        break
        except (HTTPStatusFailed, Unsupported) as exc:
            return Outcome("refused", str(exc))
        except ConnectionLost as exc:
            return Outcome("cut" if watch.accepted else "unknown", str(exc))
        except ConnectFailed as exc:
            return Outcome("refused" if watch.events == 0 else "cut", str(exc))
        except MalformedFrame as exc:
            return Outcome("cut" if watch.accepted else "unknown", str(exc))
        if watch.ended:
            return Outcome("done")
        if not watch.accepted:
            return Outcome("unknown", "the stream ended before the server said anything about the message")
        return Outcome("cut", "the stream ended before the turn finished")

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

    # -- stop and resume -----------------------------------------------------------------------
    async def stop(self, grace: float = STOP_GRACE) -> None:
        """Stop the running turn: ask the server to cancel it (CancelTask / tasks/cancel), wait up
        to ``grace`` seconds for the stream to end, then stop reading it. The turn ends
        ``canceled`` (or as the server says, if it finished first); nothing stored is lost."""
        if not self.sending:
            return
        self._stop_requested = True
        inner = self._inner
        task_id = self._watch.task_id if self._watch else None
        if task_id:
            try:
                await asyncio.wait_for(self.client.cancel_task(task_id), grace)
            except (ClientError, TimeoutError) as exc:
                log.info("cancel of task %s not taken: %s", task_id, exc)
        if inner is not None and not inner.done():
            done, _ = await asyncio.wait({inner}, timeout=grace)
            if not done:
                inner.cancel()

    async def resume(self, poll_interval: float = POLL_INTERVAL) -> None:
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
        finally:
            self.sending = False
            self._watch = None

    # -- rewind ------------------------------------------------------------------------------
    async def rewind(self, invocation_id: str, text: str | None = None) -> None:
        """Rewind before ``invocation_id`` (and, with ``text``, send it as the next turn).

        The view is truncated at once; the server's answer then becomes the view. A clear refusal
        rolls the view back exactly (RewindFailed); an unknown outcome shows the server's view,
        re-read (RewindOutcomeUnknown)."""
        await freshness.ensure_fresh(self, RewindFailed)  # another client changed the session: reload
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
                await fork_rewind(self, invocation_id, token)
            elif caps.rewind_mode == "rest":
                await self._rewind_rest(invocation_id, token)
            else:
                await self._rewind_a2a(invocation_id, text, token)
                text = None  # the same request carried it
        finally:
            self.rewinding = False
        if text:
            # REST rewind: the text goes as the next turn
            await self._turn(self.client.build_message(text, session_id=self.session_id), text)

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
        except ClientError:
            known = False
        if not known:
            self._emit(self.conversation.rollback(token))
            return RewindOutcomeUnknown(
                f"the rewind's answer was lost ({reason}) and this server cannot give its history back: "
                "whether it rewound is unknown (reopen the session to check)",
                reread=False,
            )
        rewound = self.conversation.index_of_invocation(invocation_id) is None
        shows = "rewound" if rewound else "not rewound (the conversation is as it was)"
        return RewindOutcomeUnknown(f"the rewind's answer was lost ({reason}); the server's view, shown now, is {shows}")

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
            answer = await self.client.rewind_rest(sid, invocation_id, history_length=ANSWER_TAIL)
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
        """Apply a rewind's (redo's) answer, asked for with ``ANSWER_TAIL``: a whole effective
        history replaces the view; a bounded one (the contract's total says so) is joined to the
        view when the ids show the join. False, the view unchanged, when the answer cannot be
        told whole and cannot be joined: the server must be re-read."""
        total, count = self._bounded(event)
        if total is not None and total != count:
            return self._joined(event, total)
        if total is None and count == ANSWER_TAIL:
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
            self.last_message_id = raw.message_id(message)
            self._emit(conversation.add_user_message(message))
        # a rewind alone answers at once; rewind-and-send then runs a turn, which may think long
        stream = self.client.stream(
            message,
            read_timeout=None if text else self.client.config.timeout,
            history_length=None if text else ANSWER_TAIL,
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
                    await self._turn(self.client.build_message(text, session_id=self.session_id), text)
                    return
            await self._settle(outcome, watch, token)
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
        token, change = self.conversation.truncate_before(invocation_id)
        self.edit = PendingEdit(invocation_id, token, text)
        self._emit(change)
        return text

    def cancel_edit(self) -> None:
        if self.edit is not None:
            edit, self.edit = self.edit, None
            self._emit(self.conversation.rollback(edit.token))

    # -- fork --------------------------------------------------------------------------------
    async def fork(self, invocation_id: str) -> Session:
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

    async def fork_branch(self, invocation_id: str) -> Session:
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

    async def redo(self, rewind_task_id: str | None = None) -> None:
        """Undo a rewind on the server (None: the last one): the turns it took away come back, with
        the agent's state. The view becomes the server's. RedoFailed: refused or not sent, nothing
        changed; RewindOutcomeUnknown: the answer was lost, the view shows the server's, re-read."""
        reason = self.why_not_redo()
        if reason:
            raise Busy(reason) if self.sending or self.rewinding else Unsupported(reason)
        caps = self.client.capabilities
        assert caps is not None
        if FORK_MODE in caps.rewind_modes:  # kagent 1.0
            return await fork_undo(self)  # back to the original the fork came from
        if not self.client.has_api and caps.rewind_mode == "a2a":  # the kagent-rewind add-on
            return await redo_a2a(self, rewind_task_id)
        sid = self.session_id
        assert sid is not None
        self.rewinding = True
        try:
            try:
                answer = await self.client.redo(sid, rewind_task_id, history_length=ANSWER_TAIL)
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
            if not self._apply_tail(StreamEvent(EventKind.TASK, answer)):
                try:
                    await self.refresh()  # the answer alone does not say the whole view
                except ClientError as exc:
                    raise await self._redo_unknown(str(exc)) from None
                return
            with contextlib.suppress(ClientError):
                await self.refresh()  # each turn as a reload shows it (artifacts, outcomes)
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


__all__ = [
    "Busy",
    "Chat",
    "Confirmation",
    "Listener",
    "PendingEdit",
    "Permissions",
    "RedoFailed",
    "RewindFailed",
    "RewindOutcomeUnknown",
    "SessionNotFound",
    "TurnInterrupted",
    "TurnRefused",
    "gc_paused",
]
