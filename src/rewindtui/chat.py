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
import sqlite3
import uuid
from collections.abc import AsyncIterator, Callable, Iterator
from dataclasses import dataclass
from typing import Any

from rewindtui.a2a import contract, outgoing, raw
from rewindtui.a2a.classify import EventKind, StreamEvent
from rewindtui.a2a.dialect import RPC_TASK_NOT_FOUND, TURN_ENDING_STATES, Dialect, norm_state
from rewindtui.client import (
    A2AClient,
    ClientError,
    ConnectFailed,
    ConnectionLost,
    HTTPStatusFailed,
    MalformedFrame,
    RpcError,
    Session,
    Unsupported,
)
from rewindtui.conversation import CANCELED, INTERRUPTED, Change, Confirmation, Conversation, Item, RewindToken
from rewindtui.local_sessions import LocalSessions

log = logging.getLogger(__name__)

Listener = Callable[[Change], None]

#: How long :meth:`Chat.stop` waits for the server to end the turn before aborting locally.
STOP_GRACE = 2.0
#: How often :meth:`Chat.resume` re-reads a running task when the server cannot stream it again.
POLL_INTERVAL = 1.0
#: ListTasks page size, and the most tasks read back for one session.
_PAGE = 100
_MAX_TASKS = 100_000
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
    """The rewind's answer was lost; the view shows the server's view, re-read afterwards."""


class SessionNotFound(ClientError):
    """No session with that id (or id prefix) on this server."""


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


@dataclass
class PendingEdit:
    invocation_id: str
    token: RewindToken
    text: str


@contextlib.contextmanager
def gc_paused() -> Iterator[None]:
    """Pause the cyclic garbage collector: loading a long session makes thousands of small objects,
    none of them garbage, and the collector's passes over them would cost a third of the load."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def derive_title(text: str) -> str:
    line = " ".join(text.strip().split("\n", 1)[0].split())
    return line if len(line) <= _NAME_LIMIT else line[: _NAME_LIMIT - 1].rstrip() + "…"


# -- reading a stream --------------------------------------------------------------------------
def _failure_text(event: StreamEvent) -> str | None:
    """The reason, if this event says the request failed (a failed status or a JSON-RPC error)."""
    if event.kind is EventKind.ERROR:
        body = event.body if isinstance(event.body, dict) else {}
        return f"JSON-RPC error {body.get('code')}: {body.get('message') or 'no message'}"
    if event.kind in (EventKind.STATUS, EventKind.TASK, EventKind.TASK_LIKE) and isinstance(event.body, dict):
        status = event.body.get("status")
        if isinstance(status, dict) and norm_state(status.get("state")) in ("failed", "rejected"):
            return raw.text_of(status.get("message")) or "the server reported failure"
    return None


def _state_of(event: StreamEvent) -> str | None:
    if event.kind in (EventKind.STATUS, EventKind.TASK, EventKind.TASK_LIKE) and isinstance(event.body, dict):
        status = event.body.get("status")
        if isinstance(status, dict):
            return norm_state(status.get("state"))
    return None


def _task_id_of(event: StreamEvent) -> str | None:
    body = event.body
    if event.is_task and isinstance(body, dict):
        return raw.text_or_none(body.get("id"))
    return raw.task_id(body)


def _carries(event: StreamEvent, message_id: str | None) -> bool:
    """The event shows the message ``message_id`` back (a status echo, a Task's history)."""
    if not message_id or not isinstance(event.body, dict):
        return False
    if event.is_task:
        return any(raw.message_id(m) == message_id for m in raw.history(event.body))
    if event.kind is EventKind.STATUS:
        status = event.body.get("status")
        return isinstance(status, dict) and raw.message_id(status.get("message")) == message_id
    return event.kind is EventKind.MESSAGE and raw.message_id(event.body) == message_id


def _has_message(tasks: list[dict[str, Any]], message_id: str) -> bool:
    return any(raw.message_id(m) == message_id for t in tasks for m in raw.history(t))


def _state_in(tasks: list[dict[str, Any]], task_id: str | None) -> str | None:
    for task in reversed(tasks):
        if task_id is None or task.get("id") == task_id:
            status = task.get("status")
            return norm_state(status.get("state")) if isinstance(status, dict) else None
    return None


class _Watch:
    """What one request's stream has shown so far."""

    def __init__(self, message_id: str | None, *, accepted: bool = False, task_id: str | None = None) -> None:
        self.message_id = message_id
        self.accepted = accepted  # the server took the message
        self.echoed = False  # ... and showed it back
        self.task_id = task_id
        self.state: str | None = None
        self.events = 0

    @property
    def ended(self) -> bool:
        return self.state in TURN_ENDING_STATES

    def see(self, event: StreamEvent) -> None:
        self.events += 1
        if event.kind is EventKind.UNKNOWN:
            return
        self.accepted = True
        task_id = _task_id_of(event)
        if task_id and (self.task_id is None or event.is_task):
            self.task_id = task_id
        if _carries(event, self.message_id):
            self.echoed = True
        state = _state_of(event)
        if state and state != "unknown":
            self.state = state


@dataclass
class _Outcome:
    """How reading a stream ended: ``done`` (the turn ended), ``cut`` (it stopped after the server
    took the message), ``unknown`` (it stopped before we could tell), ``refused``, ``stopped``."""

    kind: str
    reason: str = ""


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
        self.store = store
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
        self._watch: _Watch | None = None
        self._inner: asyncio.Task[Any] | None = None
        self._stop_requested = False
        #: the id given to a new session for its first send, and whether the server was asked to
        #: create it: a send that does not get through leaves no session behind
        self._new_session: tuple[str, bool] | None = None

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
        rewind_reason = caps.why_no_rewind() if not caps.can_rewind else busy
        if not rewind_reason and self.conversation.items and not self.conversation.turn_invocations():
            rewind_reason = (
                "this server does not say which turn a message belongs to (its messages carry no "
                "invocation ids), so there is no point to rewind to"
            )
        fork_reason = caps.why_no_fork() if not caps.fork else busy
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
            history_note=self.history_note,
        )

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
        session: Session | None = None
        self.history_source, self.history_note = None, ""
        if session_id is not None:
            session_id = await self.resolve_session_id(session_id)
            conversation.session_id = session_id
            session, tasks = await self._read_history(session_id)
            with gc_paused():
                conversation.load_tasks(tasks)
        self.conversation = conversation
        self.session = session
        self.edit = None
        self.interrupted_task_id = None
        self._emit(Change(first=0, turn_ended=True))

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
        remembered = self._remembered()
        if self.client.has_api:
            sessions = await self.client.list_sessions()
            known = {s.id for s in sessions}
            for entry in remembered:
                if entry.id not in known:
                    self._store_call("mark_gone", entry.id)
                    sessions.append(Session(entry.id, entry.title, None, entry.created_at, entry.updated_at, gone=True))
            return sessions
        out = []
        for entry in remembered:
            gone = entry.gone
            if self._can_list_tasks():
                try:
                    gone = not (await self.client.list_tasks(entry.id, page_size=1)).tasks
                except ClientError:
                    gone = entry.gone
                if gone != entry.gone:
                    self._store_call("mark_gone", entry.id, gone)
            out.append(Session(entry.id, entry.title, self.client.config.user_id, entry.created_at, entry.updated_at, gone=gone))
        return out

    async def resolve_session_id(self, prefix: str) -> str:
        """The full id of the session ``prefix`` names: itself, or the one known session it starts."""
        if self.client.has_api:
            ids = [s.id for s in await self.client.list_sessions()]
        else:
            ids = [s.id for s in self._remembered()]
        if prefix in ids:
            return prefix
        matches = [i for i in ids if i.startswith(prefix)]
        if len(matches) == 1:
            return matches[0]
        if len(matches) > 1:
            shown = ", ".join(m[:12] for m in matches[:5])
            raise SessionNotFound(f"session id {prefix!r} is ambiguous: it starts {len(matches)} sessions ({shown}); give more of it")
        return prefix  # not listed: the server is asked for it by its full id

    async def _read_history(self, session_id: str) -> tuple[Session | None, list[dict[str, Any]]]:
        """The session and its tasks (oldest first), from the REST API, else from A2A."""
        if self.client.has_api:
            try:
                session = await self.client.get_session(session_id)
            except HTTPStatusFailed as exc:
                if exc.status == 404:
                    raise SessionNotFound(f"session {session_id!r} does not exist on this server") from None
                raise
            self.history_source = "rest"
            return session, await self.client.session_tasks(session_id)
        remembered = self.store.get(session_id) if self.store is not None else None
        session = Session(session_id, remembered.title if remembered else "", self.client.config.user_id)
        if self._can_list_tasks():
            try:
                tasks = await self._list_all_tasks(session_id)
            except RpcError as exc:
                if not exc.not_offered:
                    raise
            else:
                if not tasks and remembered is None:
                    raise SessionNotFound(f"session {session_id!r} does not exist on this server (it lists no tasks for it)")
                self.history_source = "a2a"
                return session, tasks
        task_ids = self.store.task_ids(session_id) if self.store is not None else []
        tasks = []
        for task_id in task_ids:
            try:
                tasks.append(await self.client.get_task(task_id))
            except RpcError as exc:
                if exc.code != RPC_TASK_NOT_FOUND:
                    raise
        if tasks:
            self.history_source = "a2a"
        if remembered is None:
            self.history_note = (
                "This server cannot give a conversation back (it has no REST API and no A2A ListTasks), "
                "and this session was not used from here: earlier turns are not shown."
            )
        elif len(tasks) < len(task_ids):
            self.history_note = f"The server no longer has {len(task_ids) - len(tasks)} of this session's turns."
        return session, tasks

    def _can_list_tasks(self) -> bool:
        caps = self.client.capabilities
        return caps is not None and caps.dialect is Dialect.V10

    async def _list_all_tasks(self, context_id: str) -> list[dict[str, Any]]:
        """Every task of a context (ListTasks, all pages), oldest first."""
        tasks: list[dict[str, Any]] = []
        token: str | None = None
        while len(tasks) < _MAX_TASKS:
            page = await self.client.list_tasks(context_id, page_size=_PAGE, page_token=token)
            tasks.extend(page.tasks)
            token = page.next_page_token
            if not token or not page.tasks:
                break
        return _oldest_first(tasks)

    async def refresh(self) -> bool:
        """Re-read the whole session from the server (the server's view is the truth). False when
        the server cannot give it back."""
        sid = self.session_id
        if not sid:
            return False
        try:
            if self.client.has_api:
                tasks = await self.client.session_tasks(sid)
            elif self._can_list_tasks():
                tasks = await self._list_all_tasks(sid)
            else:
                return False
        except RpcError as exc:
            if exc.not_offered:
                return False
            raise
        with gc_paused():
            self._emit(self.conversation.load_tasks(tasks))
        return True

    # -- the local store -----------------------------------------------------------------------
    def _remembered(self) -> list[Any]:
        if self.store is None:
            return []
        try:
            return self.store.sessions()
        except sqlite3.Error as exc:
            log.warning("local sessions store unreadable: %s", exc)
            return []

    def _store_call(self, name: str, *args: Any, **kw: Any) -> None:
        """Record in the local store; a broken store never fails a turn."""
        if self.store is None:
            return
        try:
            getattr(self.store, name)(*args, **kw)
        except sqlite3.Error as exc:
            log.warning("local sessions store: %s failed: %s", name, exc)

    def _remember(self, watch: _Watch, text: str) -> None:
        sid = self.session_id
        if not sid or not watch.accepted:
            return
        self._store_call("remember", sid, title=derive_title(text))
        if watch.task_id:
            self._store_call("add_task", sid, watch.task_id)

    # -- turns ---------------------------------------------------------------------------------
    async def send(self, text: str) -> None:
        """Send a message. During an edit, this is the rewind-and-send request.

        TurnRefused: the server did not take it (the view is as before). TurnInterrupted: the
        stream stopped before the turn's end and could not be resumed. A turn that the server ends
        as failed returns normally (``conversation.turn_state`` says so)."""
        if self.edit is not None:
            edit, self.edit = self.edit, None
            await self._rewind(edit.invocation_id, text, token=edit.token)
            return
        if self.sending or self.rewinding:
            raise Busy("a turn is still running")
        await self._start_session(text)
        conversation = self.conversation
        message = self.client.build_message(
            text, session_id=conversation.session_id, task_id=conversation.input_task_id
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
        watch = _Watch(raw.message_id(message))
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

    async def _settle(self, outcome: _Outcome, watch: _Watch, token: RewindToken) -> None:
        """Make the view the server's truth after a stream, and raise what the caller must know."""
        conversation = self.conversation
        if outcome.kind == "unknown":
            has = await self._server_has_message(watch.message_id)
            if has is False:
                outcome = _Outcome("refused", f"{outcome.reason}; the server does not have the message")
            else:
                watch.accepted = True
                outcome = _Outcome("cut", outcome.reason)
        if outcome.kind == "refused":
            self._emit(conversation.restore(token))
            raise TurnRefused(f"not sent: {outcome.reason}")
        if outcome.kind == "stopped":
            state = await self._reread(watch.task_id)
            if state not in TURN_ENDING_STATES:
                self._emit(conversation.end_turn(CANCELED))
                self._emit(conversation.add_error("Stopped: the turn was stopped before it finished."))
            return
        if outcome.kind == "cut":
            await self._recover(watch, outcome.reason)

    async def _consume_stoppable(self, events: AsyncIterator[StreamEvent], watch: _Watch) -> _Outcome:
        """:meth:`_consume` in its own task, so that :meth:`stop` can abort it locally."""
        inner = asyncio.ensure_future(self._consume(events, watch))
        self._inner = inner
        try:
            return await inner
        except asyncio.CancelledError:
            current = asyncio.current_task()
            if self._stop_requested and inner.cancelled() and not (current and current.cancelling()):
                return _Outcome("stopped", "stopped by the user")
            raise
        finally:
            self._inner = None

    async def _consume(self, events: AsyncIterator[StreamEvent], watch: _Watch) -> _Outcome:
        """Apply a stream's events to the view until it ends; say how it ended."""
        conversation = self.conversation
        try:
            async with contextlib.aclosing(events) as stream:  # type: ignore[type-var]
                async for event in stream:
                    failure = _failure_text(event)
                    if not watch.accepted and failure is not None:
                        return _Outcome("refused", f"the server refused the message: {failure}")
                    if event.kind is EventKind.ERROR:
                        # an error in the middle of a turn: the rest of this stream is not to be believed
                        return _Outcome("cut", f"the server sent an error in the middle of the turn ({failure})")
                    watch.see(event)
                    self._emit(conversation.apply(event))
                    if event.kind is EventKind.STATUS and isinstance(event.body, dict) and event.body.get("final") is True:
                        break
        except (HTTPStatusFailed, Unsupported) as exc:
            return _Outcome("refused", str(exc))
        except ConnectionLost as exc:
            return _Outcome("cut" if watch.accepted else "unknown", str(exc))
        except ConnectFailed as exc:
            return _Outcome("refused" if watch.events == 0 else "cut", str(exc))
        except MalformedFrame as exc:
            return _Outcome("cut" if watch.accepted else "unknown", str(exc))
        if watch.ended:
            return _Outcome("done")
        if not watch.accepted:
            return _Outcome("unknown", "the stream ended before the server said anything about the message")
        return _Outcome("cut", "the stream ended before the turn finished")

    async def _recover(self, watch: _Watch, reason: str) -> None:
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

    async def _resume_stream(self, task_id: str, watch: _Watch) -> bool:
        """Resume a live task's stream where the server offers it; True if it ran to the turn's end."""
        caps = self.client.capabilities
        if caps is None or not caps.streaming:
            return False
        resumed = _Watch(watch.message_id, accepted=True, task_id=task_id)
        outcome = await self._consume(self.client.subscribe(task_id), resumed)
        watch.state = resumed.state or watch.state
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
                state = _state_in(tasks, task_id)
            elif task_id:
                task = await self.client.get_task(task_id)
                self._emit(conversation.apply(StreamEvent(EventKind.TASK, task)))
                state = _state_in([task], task_id)
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
            if self.client.has_api:
                tasks = await self.client.session_tasks(sid)
            elif self._can_list_tasks():
                tasks = await self._list_all_tasks(sid)
            else:
                return None
        except HTTPStatusFailed as exc:
            return False if exc.status == 404 else None
        except ClientError:
            return None
        return _has_message(tasks, message_id)

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
        watch = _Watch(None, accepted=True, task_id=task_id)
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
            if caps.rewind_mode == "rest":
                await self._rewind_rest(invocation_id, token)
            else:
                await self._rewind_a2a(invocation_id, text, token)
                text = None  # the same request carried it
        finally:
            self.rewinding = False
        if text:
            # REST rewind: the text goes as the next turn
            await self._turn(self.client.build_message(text, session_id=self.session_id), text)

    async def _refused(self, token: RewindToken, reason: str) -> RewindFailed:
        """A clear refusal: the view goes back exactly as it was (the server changed nothing)."""
        self._emit(self.conversation.rollback(token).merge(Change(turn_ended=True)))
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
                "whether it rewound is unknown (reopen the session to check)"
            )
        rewound = self.conversation.index_of_invocation(invocation_id) is None
        shows = "rewound" if rewound else "not rewound (the conversation is as it was)"
        return RewindOutcomeUnknown(f"the rewind's answer was lost ({reason}); the server's view, shown now, is {shows}")

    async def _rewind_rest(self, invocation_id: str, token: RewindToken) -> None:
        sid = self.session_id
        assert sid is not None
        try:
            await self.client.rewind_rest(sid, invocation_id)
        except HTTPStatusFailed as exc:
            if exc.status < 500:
                raise await self._refused(token, exc.detail or str(exc)) from None
            raise await self._unknown(token, invocation_id, str(exc)) from None
        except (ConnectionLost, MalformedFrame) as exc:
            raise await self._unknown(token, invocation_id, str(exc)) from None
        except ConnectFailed as exc:
            raise await self._refused(token, f"not sent: {exc}") from None
        with contextlib.suppress(ClientError):
            await self.refresh()

    def _answer(self, event: StreamEvent) -> str | None:
        """``flag`` / ``fallback`` if this event is the rewind's answer (the effective history),
        ``drift`` for an unflagged answer from a server whose card promises the flag."""
        if not event.is_task or not isinstance(event.body, dict):
            return None
        if raw.metadata(event.body).get(contract.EFFECTIVE_HISTORY_KEY) is True:
            return "flag"
        if _state_of(event) == "completed" and raw.history(event.body):
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
        stream = self.client.stream(message, read_timeout=None if text else self.client.config.timeout)
        drift = False
        try:
            async with contextlib.aclosing(stream) as events:  # type: ignore[type-var]
                async for event in events:
                    failure = _failure_text(event)
                    if failure is not None:
                        raise await self._refused(token, failure)
                    answer = self._answer(event)
                    if answer == "drift":
                        drift = True
                    elif answer is not None:
                        self.last_rewind_answer = answer
                        self._emit(conversation.apply(event, effective=True))
                        if text:
                            await self._after_answer(events, message, text)
                        return
                    else:
                        self._emit(conversation.apply(event))
        except HTTPStatusFailed as exc:
            if exc.status < 500:
                raise await self._refused(token, exc.detail or str(exc)) from None
            raise await self._unknown(token, invocation_id, str(exc)) from None
        except (ConnectionLost, MalformedFrame) as exc:
            raise await self._unknown(token, invocation_id, str(exc)) from None
        except ConnectFailed as exc:
            raise await self._refused(token, f"not sent: {exc}") from None
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
        watch = _Watch(raw.message_id(message))
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
        session = await self.client.fork(original, invocation_id)
        self._store_call("remember", session.id, title=session.name, forked_from=original)
        await self.open(session.id)
        return session


def _oldest_first(tasks: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """ListTasks answers newest first (by last update, per the spec); some servers answer oldest
    first. Order by the status timestamps when every task has one, else reverse the spec's order."""
    stamps = []
    for task in tasks:
        status = task.get("status")
        stamp = status.get("timestamp") if isinstance(status, dict) else None
        if not isinstance(stamp, str) or not stamp:
            return list(reversed(tasks))
        stamps.append(stamp)
    order = sorted(range(len(tasks)), key=lambda i: stamps[i])
    return [tasks[i] for i in order]


__all__ = [
    "Busy",
    "Chat",
    "Confirmation",
    "Listener",
    "PendingEdit",
    "Permissions",
    "RewindFailed",
    "RewindOutcomeUnknown",
    "SessionNotFound",
    "TurnInterrupted",
    "TurnRefused",
    "gc_paused",
]
