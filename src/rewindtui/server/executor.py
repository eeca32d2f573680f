"""The agent service: turns, rewind and fork on top of ADK and the store.

One object, :class:`AgentService`, owns the rules; the A2A handler
(``handler.py``) and the REST routes (``rest.py``) are thin adapters over it.

* A **turn** runs ``Runner.run_async`` (with ``yield_user_message=True`` so the
  user event -- and with it the invocation id -- is known before the model
  runs) and emits kagent-shaped events: status ``submitted`` echoing the user
  message, ``working``, ``working`` per agent message (partial deltas first,
  never stored; then the full message), an ``artifact-update`` with the final
  text, and a final ``completed``. Stored messages carry kagent's metadata,
  the user message included.
* A **rewind** checks the target against the store's effective history, calls
  the real ``Runner.rewind_async`` (the model is not called), then stores one
  Task (kind ``rewind``) whose history is the effective history -- the
  original messages with their original ``messageId``\\ s -- and marks the
  undone tasks ``rewound`` (nothing is deleted).
* A **fork** copies the session's ADK events before the invocation into a new
  ADK session (one transaction, session-scoped state replayed; see
  ``CachedDatabaseSessionService.import_events``) and stores the effective
  history as the new session's one task (kind ``fork``).

Work on a session is exclusive: while a turn, rewind or fork runs, another one
on the same session is refused (:class:`~rewindtui.server.errors.Busy`). Each
job runs as its own asyncio task, so a client that disconnects mid-stream does
not interrupt a turn or leave a rewind half done.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import re
from collections.abc import AsyncIterator, Awaitable, Callable, Coroutine
from typing import Any

from google.adk.agents.run_config import RunConfig, StreamingMode
from google.adk.errors.already_exists_error import AlreadyExistsError
from google.adk.errors.not_found_error import NotFoundError as AdkNotFoundError
from google.adk.runners import Runner
from google.adk.sessions.base_session_service import BaseSessionService

from rewindtui.a2a import contract
from rewindtui.a2a.dialect import TERMINAL_STATES
from rewindtui.server.errors import BadRequest, Busy, Conflict, InvalidInvocation, NotFound, ServiceError
from rewindtui.server.store import (
    InvocationLookupError,
    SessionRow,
    Store,
    task_json,
)
from rewindtui.server.wire import (
    EFFECTIVE_HISTORY_KEY,
    REWIND_KEY,
    agent_text_message,
    artifact_update,
    failed_event,
    genai_content_from_message,
    kagent_metadata,
    new_id,
    now_iso,
    parts_from_adk,
    status_update,
    text_of,
    usage_of,
)

log = logging.getLogger(__name__)

Emit = Callable[[dict[str, Any]], None]
_END: dict[str, Any] = {"kind": "__end__"}
_RUN_TO_COMPLETION = frozenset({"rewind", "delete"})
_ID_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._:@+=-]{0,199}$")
NAME_LIMIT = 40


def derive_name(text: str) -> str:
    """A session name from the first user text (first line, ~40 characters)."""
    line = " ".join(text.strip().split("\n", 1)[0].split())
    if not line:
        return "New chat"
    return line if len(line) <= NAME_LIMIT else line[: NAME_LIMIT - 1].rstrip() + "…"


def check_id(value: str, what: str) -> str:
    if not isinstance(value, str) or not _ID_RE.match(value):
        raise BadRequest(f"invalid {what} {value!r}: use 1-200 letters, digits and ._:@+=-")
    return value


class ShuttingDown(ServiceError):
    status = 503
    code = "shutting_down"


class AgentService:
    """Turns, rewind and fork for one agent (app) over a store and an ADK runner."""

    def __init__(
        self,
        *,
        store: Store,
        session_service: BaseSessionService,
        runner: Runner,
        app_name: str,
        agent_ref: str,
    ) -> None:
        self.store = store
        self.session_service = session_service
        self.runner = runner
        self.app_name = app_name
        self.agent_ref = agent_ref
        self._busy: dict[str, str] = {}
        self._jobs: dict[asyncio.Task[Any], str] = {}
        self._turns: dict[str, asyncio.Task[Any]] = {}
        self._create_lock = asyncio.Lock()
        self._warming: set[str] = set()
        self._closing = False

    # -- exclusivity ---------------------------------------------------------------
    def busy_sessions(self) -> dict[str, str]:
        return dict(self._busy)

    def _claim(self, session_id: str, what: str) -> None:
        if self._closing:
            raise ShuttingDown("the server is shutting down")
        running = self._busy.get(session_id)
        if running is not None:
            raise Busy(f"a {running} is running on session {session_id!r}; try again when it has finished")
        self._busy[session_id] = what

    def _track(self, coro: Coroutine[Any, Any, Any], kind: str) -> asyncio.Task[Any]:
        """Run ``coro`` as a job of ``kind`` (see :meth:`shutdown`)."""
        job = asyncio.get_running_loop().create_task(coro)
        self._jobs[job] = kind
        job.add_done_callback(lambda task: self._jobs.pop(task, None))
        return job

    def _spawn(self, session_id: str, coro: Coroutine[Any, Any, Any], kind: str) -> asyncio.Task[Any]:
        """Run ``coro`` as a job holding ``session_id`` (claimed just before) until it ends."""
        job = self._track(coro, kind)
        job.add_done_callback(lambda _task: self._busy.pop(session_id, None))
        return job

    async def _exclusive(self, session_id: str, what: str, factory: Callable[[], Awaitable[Any]]) -> Any:
        self._claim(session_id, what)
        try:
            job = self._spawn(session_id, _await(factory), what)
        except BaseException:
            self._busy.pop(session_id, None)
            raise
        return await asyncio.shield(job)

    async def shutdown(self) -> None:
        """Refuse new work, cancel turns (and forks, warm-ups), let rewinds and deletes finish.

        A rewind is two writes (ADK's rewind event, then the store); it is never
        interrupted between them. A cancelled fork cleans up after itself.
        """
        self._closing = True
        jobs = dict(self._jobs)
        for job, kind in jobs.items():
            if kind not in _RUN_TO_COMPLETION:
                job.cancel()
        if jobs:
            await asyncio.gather(*jobs, return_exceptions=True)

    # -- sessions --------------------------------------------------------------------
    async def get_owned_session(self, user_id: str, session_id: str) -> SessionRow:
        row = await self.store.get_session(session_id)
        if row is None or row.user_id != user_id:
            raise NotFound(f"session {session_id!r} not found")
        return row

    async def list_sessions(self, user_id: str) -> list[SessionRow]:
        return await self.store.list_sessions(user_id)

    async def create_session(
        self, user_id: str, *, name: str | None = None, session_id: str | None = None
    ) -> SessionRow:
        sid = check_id(session_id, "session id") if session_id is not None else new_id()
        if self._closing:
            raise ShuttingDown("the server is shutting down")
        async with self._create_lock:
            if await self.store.get_session(sid) is not None:
                raise Conflict(f"session {sid!r} already exists")
            with contextlib.suppress(AlreadyExistsError):
                await self.session_service.create_session(app_name=self.app_name, user_id=user_id, session_id=sid)
            ts = now_iso()
            row = SessionRow(
                id=sid, user_id=user_id, name=name or "", agent_ref=self.agent_ref, created_at=ts, updated_at=ts
            )
            await self.store.create_session(row)
        return row

    async def delete_session(self, user_id: str, session_id: str) -> None:
        session = await self.get_owned_session(user_id, session_id)

        async def _delete() -> None:
            await self.store.delete_session(session.id)
            await self.session_service.delete_session(
                app_name=self.app_name, user_id=session.user_id, session_id=session.id
            )

        await self._exclusive(session.id, "delete", _delete)

    # -- tasks -------------------------------------------------------------------------
    async def session_tasks_json(self, user_id: str, session_id: str, *, include_rewound: bool = False) -> str:
        """The session's tasks, oldest first, as a JSON array (0.3 task JSON)."""
        session = await self.get_owned_session(user_id, session_id)
        tasks = await self.store.session_tasks(session.id, include_rewound=include_rewound)
        histories = await self.store.tasks_history_bodies(tasks)
        self.warm(session)
        return "[" + ",".join(task_json(t, histories[t.id]) for t in tasks) + "]"

    def warm(self, session: SessionRow) -> None:
        """Load the ADK session in the background (a client that reads a conversation may rewind it next).

        A long session takes ADK ~100+ ms to load; with it cached, a rewind skips that.
        """
        if self._closing or session.id in self._warming:
            return
        is_cached = getattr(self.session_service, "is_cached", None)
        if is_cached is None or is_cached(self.app_name, session.user_id, session.id):
            return

        async def _load() -> None:
            try:
                await self.session_service.get_session(
                    app_name=self.app_name, user_id=session.user_id, session_id=session.id
                )
            except Exception:  # only an optimization
                log.debug("warming session %s failed", session.id, exc_info=True)
            finally:
                self._warming.discard(session.id)

        self._warming.add(session.id)
        self._track(_load(), "warm")

    async def task_json(self, user_id: str, task_id: str) -> str:
        row = await self.store.get_task(task_id)
        if row is None or row.user_id != user_id:
            raise NotFound(f"task {task_id!r} not found")
        return task_json(row, await self.store.task_history_bodies(row))

    async def task_state(self, user_id: str, task_id: str) -> str:
        row = await self.store.get_task(task_id)
        if row is None or row.user_id != user_id:
            raise NotFound(f"task {task_id!r} not found")
        return row.state

    async def cancel_task(self, user_id: str, task_id: str) -> str:
        """Cancel a running turn; returns the task JSON afterwards."""
        row = await self.store.get_task(task_id)
        if row is None or row.user_id != user_id:
            raise NotFound(f"task {task_id!r} not found")
        job = self._turns.get(task_id)
        if job is None:
            raise Conflict(f"task {task_id!r} is not running (state {row.state})")
        job.cancel()
        await asyncio.wait([job])
        return await self.task_json(user_id, task_id)

    # -- rewind ------------------------------------------------------------------------
    @staticmethod
    def _check_invocation_arg(invocation_id: Any) -> str:
        if not isinstance(invocation_id, str) or not invocation_id.strip():
            raise BadRequest("rewind_before_invocation_id must be a non-empty string")
        return invocation_id

    async def rewind(self, user_id: str, session_id: str, invocation_id: Any) -> tuple[dict[str, Any], list[str]]:
        """REST rewind: the rewind task (without history) and its history's raw JSON bodies."""
        inv = self._check_invocation_arg(invocation_id)
        session = await self.get_owned_session(user_id, session_id)
        return await self._exclusive(session.id, "rewind", lambda: self._rewind(session, inv))

    async def rewind_for_message(
        self, user_id: str, message: dict[str, Any], *, v1: bool = False
    ) -> tuple[dict[str, Any], list[str]]:
        """A2A rewind control message without content: the rewind task and its history's JSON bodies.

        ``v1`` picks the A2A 1.0 JSON of the messages instead of 0.3 JSON.
        """
        metadata = message.get("metadata") or {}
        inv = self._check_invocation_arg(metadata.get(REWIND_KEY))
        context_id = message.get("contextId")
        if not context_id:
            raise BadRequest("a rewind needs the contextId of the session to rewind")
        session = await self.get_owned_session(user_id, context_id)
        return await self._exclusive(session.id, "rewind", lambda: self._rewind(session, inv, v1=v1))

    async def _rewind(
        self, session: SessionRow, invocation_id: str, *, v1: bool = False
    ) -> tuple[dict[str, Any], list[str]]:
        try:
            plan = await self.store.plan_rewind(session.id, invocation_id)
        except InvocationLookupError as exc:
            raise InvalidInvocation(str(exc)) from None
        try:
            await self.runner.rewind_async(
                user_id=session.user_id, session_id=session.id, rewind_before_invocation_id=invocation_id
            )
        except AdkNotFoundError as exc:  # InvocationNotFoundError / SessionNotFoundError
            raise InvalidInvocation(f"the agent session has no invocation {invocation_id!r}: {exc}") from None
        rewind_invocation = await self._last_rewind_invocation(session, invocation_id)
        task: dict[str, Any] = {
            "kind": "task",
            "id": new_id(),
            "contextId": session.id,
            "status": {"state": "completed", "timestamp": now_iso()},
            "metadata": {
                **kagent_metadata(app_name=self.app_name, user_id=session.user_id, session_id=session.id),
                EFFECTIVE_HISTORY_KEY: True,
                contract.REWOUND_BEFORE_KEY: invocation_id,
                contract.REWIND_INVOCATION_KEY: rewind_invocation,
            },
        }
        await self.store.apply_rewind(
            session_id=session.id,
            rewind_task=task,
            plan=plan,
            user_id=session.user_id,
            invocation_id=rewind_invocation,
        )
        bodies = await self.store.message_bodies([entry.seq for entry in plan.effective], v1=v1)
        return task, bodies

    async def _last_rewind_invocation(self, session: SessionRow, invocation_id: str) -> str | None:
        adk = await self.session_service.get_session(
            app_name=self.app_name, user_id=session.user_id, session_id=session.id
        )
        if adk is not None and adk.events:
            last = adk.events[-1]
            if last.actions.rewind_before_invocation_id == invocation_id:
                return last.invocation_id
        return None

    # -- fork --------------------------------------------------------------------------
    async def fork(self, user_id: str, session_id: str, invocation_id: Any) -> SessionRow:
        inv = self._check_invocation_arg(invocation_id)
        session = await self.get_owned_session(user_id, session_id)
        return await self._exclusive(session.id, "fork", lambda: self._fork(session, inv))

    async def _fork(self, session: SessionRow, invocation_id: str) -> SessionRow:
        try:
            plan = await self.store.plan_rewind(session.id, invocation_id)
        except InvocationLookupError as exc:
            raise InvalidInvocation(str(exc)) from None
        adk = await self.session_service.get_session(
            app_name=self.app_name, user_id=session.user_id, session_id=session.id
        )
        events = adk.events if adk is not None else []
        cut = next((i for i, e in enumerate(events) if e.invocation_id == invocation_id), None)
        if cut is None:
            raise InvalidInvocation(f"the agent session has no invocation {invocation_id!r}")
        new_sid = new_id()
        fork_task_id = new_id()
        new_adk = await self.session_service.create_session(
            app_name=self.app_name, user_id=session.user_id, session_id=new_sid
        )
        try:
            copies = [event.model_copy(deep=True) for event in events[:cut]]
            import_events = getattr(self.session_service, "import_events", None)
            if import_events is not None:
                await import_events(new_adk, copies)
            else:
                for event in copies:
                    await self.session_service.append_event(new_adk, event)
            messages = []
            for body in await self.store.message_bodies([entry.seq for entry in plan.effective]):
                message = json.loads(body)
                message["contextId"] = new_sid
                message["taskId"] = fork_task_id
                meta = dict(message.get("metadata") or {})
                if "kagent_session_id" in meta:
                    meta["kagent_session_id"] = new_sid
                message["metadata"] = meta
                messages.append(message)
            ts = now_iso()
            row = SessionRow(
                id=new_sid,
                user_id=session.user_id,
                name=f"Fork of {session.name or session.id}",
                agent_ref=self.agent_ref,
                created_at=ts,
                updated_at=ts,
                forked_from=session.id,
                forked_before_invocation_id=invocation_id,
            )
            task = {
                "kind": "task",
                "id": fork_task_id,
                "contextId": new_sid,
                "status": {"state": "completed", "timestamp": ts},
                "metadata": {
                    **kagent_metadata(app_name=self.app_name, user_id=session.user_id, session_id=new_sid),
                    EFFECTIVE_HISTORY_KEY: True,
                    "rewindtui_forked_from": session.id,
                    "rewindtui_fork_before_invocation_id": invocation_id,
                },
            }
            await self.store.create_fork(session=row, fork_task=task, messages=messages)
        except BaseException:
            with contextlib.suppress(Exception):
                await self.session_service.delete_session(
                    app_name=self.app_name, user_id=session.user_id, session_id=new_sid
                )
            raise
        return row

    # -- A2A messages ----------------------------------------------------------------
    async def handle_message(
        self, user_id: str, message: dict[str, Any], *, streaming: bool
    ) -> AsyncIterator[dict[str, Any]]:
        """Events (0.3 dicts) for one A2A message: a turn, a rewind, or rewind-and-send.

        Refusals (bad rewind target, missing/other user's session, busy
        session, empty message, reused messageId) come as one final ``failed``
        status and change nothing.
        """
        metadata = message.get("metadata") or {}
        rewind_id = metadata.get(REWIND_KEY)
        context_id = message.get("contextId") or None
        text = text_of(message).strip()
        has_content = bool(text) or any(p.get("kind") in ("data", "file") for p in message.get("parts") or [])
        if rewind_id is not None and not has_content:
            try:
                task, bodies = await self.rewind_for_message(user_id, message)
            except ServiceError as exc:
                yield failed_event(exc.message, context_id=context_id, code=exc.code)
                return
            yield {**task, "history": [json.loads(b) for b in bodies]}
            return
        try:
            if rewind_id is not None:
                rewind_id = self._check_invocation_arg(rewind_id)
                if not context_id:
                    raise BadRequest("a rewind needs the contextId of the session to rewind")
                session = await self.get_owned_session(user_id, context_id)
            else:
                if not has_content:
                    raise BadRequest("the message has no content")
                session = await self._session_for_message(user_id, context_id, text)
            if has_content and await self.store.message_id_exists(session.id, message.get("messageId", "")):
                raise BadRequest(f"messageId {message.get('messageId')!r} was already used in this session")
            self._claim(session.id, "rewind" if rewind_id is not None else "turn")
        except ServiceError as exc:
            yield failed_event(exc.message, context_id=context_id, code=exc.code)
            return

        queue: asyncio.Queue[dict[str, Any]] = asyncio.Queue()
        try:
            self._spawn(
                session.id,
                self._request_job(session, message, rewind_id, has_content, streaming, queue.put_nowait),
                "turn",
            )
        except BaseException:
            self._busy.pop(session.id, None)
            raise
        while True:
            event = await queue.get()
            if event is _END:
                return
            yield event

    async def _session_for_message(self, user_id: str, context_id: str | None, text: str) -> SessionRow:
        if context_id is None:
            return await self.create_session(user_id, name=derive_name(text))
        row = await self.store.get_session(context_id)
        if row is None:
            try:
                return await self.create_session(user_id, name=derive_name(text), session_id=context_id)
            except Conflict:
                row = await self.store.get_session(context_id)
                if row is None:
                    raise
        if row.user_id != user_id:
            raise NotFound(f"session {context_id!r} not found")
        return row

    async def _request_job(
        self,
        session: SessionRow,
        message: dict[str, Any],
        rewind_id: str | None,
        run_turn: bool,
        streaming: bool,
        emit: Emit,
    ) -> None:
        try:
            if rewind_id is not None:
                try:
                    # its own job: a cancelled request must not stop a rewind half way
                    rewind = self._track(self._rewind(session, rewind_id), "rewind")
                    task, bodies = await asyncio.shield(rewind)
                except ServiceError as exc:
                    emit(failed_event(exc.message, context_id=session.id, code=exc.code))
                    return
                emit({**task, "history": [json.loads(b) for b in bodies]})
            if run_turn:
                turn_message = dict(message)
                meta = {k: v for k, v in (message.get("metadata") or {}).items() if k != REWIND_KEY}
                if meta:
                    turn_message["metadata"] = meta
                else:
                    turn_message.pop("metadata", None)
                await self._run_turn(session, turn_message, streaming, emit)
        except Exception as exc:  # a bug or an infrastructure failure: report it, keep serving
            log.exception("request on session %s failed", session.id)
            emit(failed_event(f"internal error: {exc}", context_id=session.id, code="internal"))
        finally:
            emit(_END)

    # -- turns ---------------------------------------------------------------------------
    async def _run_turn(self, session: SessionRow, message: dict[str, Any], streaming: bool, emit: Emit) -> None:
        sid, user_id = session.id, session.user_id
        task_id = new_id()
        base: dict[str, Any] = {"app_name": self.app_name, "user_id": user_id, "session_id": sid}
        user_message = dict(message, taskId=task_id, contextId=sid)
        task: dict[str, Any] = {
            "kind": "task",
            "id": task_id,
            "contextId": sid,
            "status": {"state": "submitted", "timestamp": now_iso()},
            "metadata": kagent_metadata(**base),
        }
        if not session.name:
            await self.store.rename_session(sid, derive_name(text_of(message)))
        run_config = RunConfig(streaming_mode=StreamingMode.SSE if streaming else StreamingMode.NONE)
        invocation_id: str | None = None
        last_text: str | None = None
        last_author: str | None = None
        usage: dict[str, Any] | None = None
        stored = False
        self._turns[task_id] = asyncio.current_task()  # type: ignore[assignment]

        async def _store_start(inv: str | None) -> None:
            nonlocal stored
            meta = kagent_metadata(**base, invocation_id=inv, author="user", partial=False)
            user_message["metadata"] = {**(message.get("metadata") or {}), **meta}
            task["metadata"] = kagent_metadata(**base, invocation_id=inv)
            await self.store.insert_task(
                task=task, session_id=sid, user_id=user_id, kind="turn", invocation_id=inv
            )
            await self.store.add_message(session_id=sid, task_id=task_id, message=user_message)
            stored = True

        async def _finish(state: str, text: str | None = None) -> None:
            task["status"] = {"state": state, "timestamp": now_iso()}
            meta = kagent_metadata(**base, invocation_id=invocation_id, author=last_author, partial=False, usage=usage)
            task["metadata"] = meta
            status_message = None
            if text is not None:
                status_message = agent_text_message(text, task_id=task_id, context_id=sid)
                task["status"]["message"] = status_message
            if not stored:
                await _store_start(invocation_id)
            await self.store.update_task(task)
            await self.store.touch_session(sid)
            final_meta = kagent_metadata(**base, invocation_id=invocation_id, usage=usage)
            emit(status_update(task_id=task_id, context_id=sid, state=state, message=status_message, metadata=final_meta))

        agen = self.runner.run_async(
            user_id=user_id,
            session_id=sid,
            new_message=genai_content_from_message(message),
            run_config=run_config,
            yield_user_message=True,
        )
        try:
            async for event in agen:
                if event.author == "user" and invocation_id is None:
                    invocation_id = event.invocation_id
                    await _store_start(invocation_id)
                    emit(status_update(task_id=task_id, context_id=sid, state="submitted", message=user_message))
                    task["status"] = {"state": "working", "timestamp": now_iso()}
                    await self.store.update_task(task)
                    emit(
                        status_update(
                            task_id=task_id,
                            context_id=sid,
                            state="working",
                            metadata=kagent_metadata(**base, invocation_id=invocation_id),
                        )
                    )
                    continue
                if event.error_code or event.error_message:
                    raise _TurnFailed(f"model error {event.error_code or ''}: {event.error_message or ''}".strip())
                event_usage = usage_of(event)
                if event_usage and not event.partial:
                    usage = event_usage
                parts = parts_from_adk(event.content)
                if not parts:
                    continue
                partial = bool(event.partial)
                meta = kagent_metadata(
                    **base,
                    invocation_id=event.invocation_id or invocation_id,
                    author=event.author,
                    partial=partial,
                    usage=None if partial else event_usage,
                )
                agent_message = {
                    "kind": "message",
                    "messageId": new_id() if partial or not event.id else event.id,
                    "role": "agent",
                    "parts": parts,
                    "contextId": sid,
                    "taskId": task_id,
                    "metadata": meta,
                }
                if not partial:
                    if not stored:
                        await _store_start(invocation_id)
                    await self.store.add_message(session_id=sid, task_id=task_id, message=agent_message)
                    texts = [p["text"] for p in parts if p.get("kind") == "text" and not p.get("metadata")]
                    if texts:
                        last_text = "".join(texts)
                    last_author = event.author
                emit(status_update(task_id=task_id, context_id=sid, state="working", message=agent_message, metadata=meta))
            if invocation_id is None:
                raise _TurnFailed("the agent produced no events for this message")
            if last_text is not None:
                artifact = {"artifactId": new_id(), "parts": [{"kind": "text", "text": last_text}]}
                task["artifacts"] = [artifact]
                emit(artifact_update(task_id=task_id, context_id=sid, artifact=artifact))
            await _finish("completed")
        except asyncio.CancelledError:
            await _shielded(_finish("canceled", "The turn was canceled."))
            raise
        except _TurnFailed as exc:
            await _finish("failed", str(exc))
        except Exception as exc:
            log.exception("turn %s on session %s failed", task_id, sid)
            await _finish("failed", f"The agent failed: {type(exc).__name__}: {exc}")
        finally:
            self._turns.pop(task_id, None)
            with contextlib.suppress(Exception):
                await agen.aclose()

    async def fail_interrupted(self) -> int:
        """Mark tasks left non-terminal by an earlier process as failed (startup)."""
        return await self.store.fail_unfinished(
            "The server stopped before this turn finished.", terminal=TERMINAL_STATES
        )


class _TurnFailed(Exception):
    pass


async def _await(factory: Callable[[], Awaitable[Any]]) -> Any:
    return await factory()


async def _shielded(coro: Coroutine[Any, Any, Any]) -> None:
    """Run cleanup to completion even though the current task is being cancelled."""
    task = asyncio.get_running_loop().create_task(coro)
    try:
        await asyncio.shield(task)
    except asyncio.CancelledError:
        await task
