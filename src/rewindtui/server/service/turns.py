"""The turn runner: one A2A message through ``Runner.run_async``, stored and streamed.

A turn's stream opens with the Task (spec §3.1.2): state ``submitted``, its history the
user's message carrying kagent's metadata (the invocation id included). Then, as kagent-adk
does: ``working``; ``working`` per agent message (partial deltas first, never stored; then
the full message); an ``artifact-update`` with the final text; a final ``completed`` (or
``failed`` / ``canceled``).

Storage order, so a crash at any point leaves something recovery can finish (see
:mod:`rewindtui.server.storage.recovery`): the task and the user's message are stored *before* the
agent runs; the invocation id is recorded when ADK has appended the user's event; each agent
message is stored right after ADK committed its event. A running turn is also a
:class:`~rewindtui.server.service.live_task.LiveTask`: ``SubscribeToTask`` gets its current
Task, then its events from there on.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import os
import sqlite3
from collections.abc import AsyncIterator, Callable, Coroutine, Mapping
from dataclasses import dataclass
from typing import Any

from google.adk.agents.run_config import RunConfig, StreamingMode
from google.adk.events import Event
from google.adk.telemetry import TelemetryConfig
from google.genai import types as genai_types

from rewindtui.a2a import contract
from rewindtui.a2a.outgoing import APPROVE
from rewindtui.server.agent.model_errors import MODEL_ERROR_CODE, describe, describe_event_error
from rewindtui.server.service import confirmations
from rewindtui.server.service.adk_telemetry import ResolvedTelemetryConfig
from rewindtui.server.service.context import ServerContext, UsesContext
from rewindtui.server.service.faults import TURN_AFTER_AGENT_MESSAGE
from rewindtui.server.service.live_task import LiveTask
from rewindtui.server.service.sessions import derive_name
from rewindtui.server.shared.errors import (
    BadRequest,
    Conflict,
    NotFound,
    ServiceError,
    is_storage_failure,
    storage_error,
)
from rewindtui.server.shared.wire import (
    agent_message,
    agent_text_message,
    artifact_update,
    effective_events,
    genai_content_from_message,
    kagent_metadata,
    new_id,
    now_iso,
    status_update,
    text_of,
    usage_of,
)
from rewindtui.server.storage.store import SessionRow, TaskRow

log = logging.getLogger(__name__)

Emit = Callable[[dict[str, Any]], None]
#: a turn whose tool waits for the user's approval ends in this state
WAITING = "input-required"
#: set on a failed turn the agent had taken: the session's next turn rewinds it first, so the
#: model never sees the failed message as a stray (a re-send is its one copy)
CLEAN_RETRY_KEY = "rewindtui_rewind_on_next_turn"
#: how a stopped reply ends in the model's context (after the text the user saw, if any): the
#: user's message and the reply stay there as one exchange, marked stopped (docs/models.md)
STOP_NOTE = "[The user stopped this reply here.]"


@dataclass
class Resume:
    """A waiting task taking the user's answer: the task as stored, and ADK's new message."""

    row: TaskRow
    history: list[dict[str, Any]]
    new_message: Any  # google.genai.types.Content


class TurnRunner(UsesContext):
    def __init__(self, context: ServerContext, *, on_store_failure: Callable[[str], None]) -> None:
        super().__init__(context)
        self._on_store_failure = on_store_failure
        #: ADK's telemetry settings, read from the environment once: without one in the RunConfig,
        #: ADK builds a TelemetryConfig (reading every OTEL_*/ADK_* variable) several times a turn
        self.telemetry = telemetry_config()
        self.live: dict[str, LiveTask] = {}
        self.jobs: dict[str, asyncio.Task[Any]] = {}
        #: called with each turn as it starts running (a team server publishes its events for the
        #: other replicas: server/http/team_turns.py)
        self.on_live: Callable[[str, LiveTask], None] | None = None

    async def run(self, session: SessionRow, message: dict[str, Any], *, streaming: bool, emit: Emit) -> None:
        await _Turn(self, session, message, streaming, emit).run()

    async def answer(
        self, session: SessionRow, task_id: str, message: dict[str, Any], decision: str, *, streaming: bool, emit: Emit
    ) -> None:
        """Resume the waiting task ``task_id`` with the user's ``decision`` ("approve" /
        "reject"). Refused (nothing stored) if no question of that task is waiting."""
        row = await self.store.get_task(task_id)
        if row is None or row.session_id != session.id:
            raise NotFound(f"task {task_id!r} not found")
        if row.state != WAITING:
            raise Conflict(f"task {task_id!r} is {row.state}: no question is waiting for an answer")
        adk = await self.runner.session_service.get_session(
            app_name=self.app_name, user_id=session.user_id, session_id=session.id
        )
        new_message = confirmations.answer(list(adk.events) if adk else [], approve=decision == APPROVE)
        if new_message is None:
            raise Conflict(f"task {task_id!r} has no tool call waiting for approval")
        history = [json.loads(body) for body in await self.store.task_history_bodies(row)]
        resume = Resume(row, history, new_message)
        await _Turn(self, session, message, streaming, emit, resume=resume).run()

    def cancel(self, task_id: str) -> asyncio.Task[Any] | None:
        job = self.jobs.get(task_id)
        if job is not None:
            job.cancel()
        return job


def telemetry_config(env: Mapping[str, str] | None = None) -> TelemetryConfig:
    """ADK's telemetry settings for every turn.

    With no OpenTelemetry SDK installed in this process (the API's default proxy provider: every
    span is a non-recording one) and no semantic-convention choice in the environment, ADK's
    stable GenAI conventions: its default, the experimental ones, builds each model request's and
    response's operation details into span attributes (the whole request converted, 0.4 ms of a
    turn's CPU here) that nothing records. Whoever sets up tracing gets ADK's defaults."""
    from opentelemetry import trace

    env = os.environ if env is None else env
    chosen = any(env.get(name) for name in ("OTEL_SEMCONV_STABILITY_OPT_IN", "ADK_TELEMETRY_SCHEMA_VERSION_OPT_IN"))
    if chosen or not isinstance(trace.get_tracer_provider(), trace.ProxyTracerProvider):
        return ResolvedTelemetryConfig()
    return ResolvedTelemetryConfig(genai_semconv_stability_opt_in="stable")


class _TurnFailed(Exception):
    pass


class _Turn:
    def __init__(
        self,
        owner: TurnRunner,
        session: SessionRow,
        message: dict[str, Any],
        streaming: bool,
        emit: Emit,
        resume: Resume | None = None,
    ) -> None:
        self.owner = owner
        self.session = session
        self.sid = session.id
        self.streaming = streaming
        self._emit = emit
        self.resume = resume
        self.base: dict[str, Any] = {"app_name": owner.app_name, "user_id": session.user_id, "session_id": self.sid}
        self.message = message
        self.invocation_id: str | None = None
        if resume is None:
            self.task_id = new_id()
            self.task: dict[str, Any] = {
                "kind": "task",
                "id": self.task_id,
                "contextId": self.sid,
                "status": {"state": "submitted", "timestamp": now_iso()},
                "metadata": kagent_metadata(**self.base),
            }
            self.new_message: Any = genai_content_from_message(message)
            history: list[dict[str, Any]] = []
        else:
            # the answer continues the waiting task and its invocation
            self.task_id = resume.row.id
            self.invocation_id = resume.row.invocation_id
            self.task = {k: v for k, v in json.loads(resume.row.body).items() if k != "history"}
            self.task["status"] = {"state": "working", "timestamp": now_iso()}
            self.new_message = resume.new_message
            history = list(resume.history)
        self.user_message: dict[str, Any] = dict(
            message,
            taskId=self.task_id,
            contextId=self.sid,
            metadata={
                **(message.get("metadata") or {}),
                **kagent_metadata(**self.base, invocation_id=self.invocation_id, author="user", partial=False),
            },
        )
        self.live = LiveTask(self.task, [*history, self.user_message])
        self.last_text: str | None = None
        self.last_author: str | None = None
        self.usage: dict[str, Any] | None = None
        self.opened = False  # the Task frame went out
        self.question: dict[str, Any] | None = None  # the message asking for the user's approval
        #: the text streamed (as deltas) since the last whole message, and by whom: kept if the
        #: user stops the turn now, so what they saw is what the server holds
        self.partial_text = ""
        self.partial_author: str | None = None

    def emit(self, event: dict[str, Any]) -> None:
        self._emit(event)
        self.live.publish(event)

    async def run(self) -> None:
        store = self.owner.store
        try:
            if self.resume is None:
                await store.start_turn(
                    task=self.task,
                    session_id=self.sid,
                    user_id=self.session.user_id,
                    user_message=self.user_message,
                    name=None if self.session.name else derive_name(text_of(self.message)),
                )
            else:
                async with store.transaction() as tx:
                    await store.add_messages(
                        session_id=self.sid, task_id=self.task_id, messages=[self.user_message], tx=tx
                    )
                    await store.update_task(self.task, touch_session=True, tx=tx)
        except sqlite3.IntegrityError:
            raise BadRequest(f"messageId {self.message.get('messageId')!r} was already used in this session") from None
        except Exception as exc:
            if is_storage_failure(exc):
                raise storage_error(exc, "store the message") from None
            raise
        owner = self.owner
        owner.live[self.task_id] = self.live
        owner.jobs[self.task_id] = asyncio.current_task()  # type: ignore[assignment]
        if owner.on_live is not None:
            owner.on_live(self.task_id, self.live)
        try:
            await self._run_agent()
        finally:
            owner.live.pop(self.task_id, None)
            owner.jobs.pop(self.task_id, None)
            self.live.close()

    async def _run_agent(self) -> None:
        run_config = RunConfig(
            streaming_mode=StreamingMode.SSE if self.streaming else StreamingMode.NONE, telemetry=self.owner.telemetry
        )
        agen = self.owner.runner.run_async(
            user_id=self.session.user_id,
            session_id=self.sid,
            new_message=self.new_message,
            run_config=run_config,
            yield_user_message=True,
        )
        try:
            async for event in self._events(agen):
                if self.question is not None and event.actions.requested_tool_confirmations:
                    # the tool's response to its own question (ADK stored it; it needs it to
                    # resume): stop before another model call, as kagent-adk does
                    break
                if event.author == "user":
                    if not self.opened:
                        await self._started(event.invocation_id)
                    continue
                await self._agent_event(event)
            if self.invocation_id is None:
                raise _TurnFailed("the agent produced no events for this message")
            if self.question is not None:
                await self._finish(WAITING, message=self.question)
                return
            if self.last_text is not None:
                artifact = {"artifactId": new_id(), "parts": [{"kind": "text", "text": self.last_text}]}
                self.task["artifacts"] = [artifact]
                self.emit(artifact_update(task_id=self.task_id, context_id=self.sid, artifact=artifact))
            await self._finish("completed")
        except asyncio.CancelledError:
            try:
                with contextlib.suppress(Exception):
                    await agen.aclose()  # ADK's run ends here, in its own task, before _stopped writes
            finally:
                await _shielded(self._stopped())
            raise
        except _TurnFailed as exc:
            await self._finish("failed", str(exc))
        except ServiceError as exc:
            await self._finish("failed", exc.message)
        except Exception as exc:
            if is_storage_failure(exc):
                await self._finish("failed", storage_error(exc, "store the turn").message)
                return
            sentence = describe(exc, model=self._model_name(), timeout=self._model_timeout())
            if sentence is not None:
                log.warning("turn %s on session %s: %s (%s)", self.task_id, self.sid, sentence, type(exc).__name__)
                await self._finish("failed", sentence)
            else:
                log.exception("turn %s on session %s failed", self.task_id, self.sid)
                await self._finish("failed", f"The agent failed: {type(exc).__name__}: {exc}")
        finally:
            with contextlib.suppress(Exception):
                await agen.aclose()

    async def _events(self, agen: AsyncIterator[Any]) -> AsyncIterator[Any]:
        """ADK's events; a wait longer than the stall timeout for the next one fails the turn.
        (``asyncio.timeout``, not ``wait_for``: the generator must go on running in this task.)"""
        stall = self.owner.stall_timeout
        while True:
            try:
                async with asyncio.timeout(stall) as deadline:
                    event = await anext(agen)
            except StopAsyncIteration:
                return
            except TimeoutError:
                if deadline.expired():
                    raise _TurnFailed(
                        f"The model sent nothing for {stall:g} s, so the turn was stopped; try again, "
                        "or raise stall_timeout."
                    ) from None
                raise
            yield event

    def _message_of(self, event: Any) -> dict[str, Any] | None:
        """The A2A message an ADK event of this turn becomes (None: nothing to show)."""
        return agent_message(
            event,
            app_name=self.owner.app_name,
            user_id=self.session.user_id,
            session_id=self.sid,
            task_id=self.task_id,
            invocation_id=self.invocation_id,
        )

    def _model_name(self) -> str:
        model = getattr(getattr(self.owner.runner, "agent", None), "model", "")
        return model if isinstance(model, str) else str(getattr(model, "model", "") or "")

    def _model_timeout(self) -> float | None:
        model = getattr(getattr(self.owner.runner, "agent", None), "model", None)
        extra = getattr(model, "_additional_args", None)
        value = extra.get("timeout") if isinstance(extra, dict) else None
        return float(value) if isinstance(value, (int, float)) else None

    async def _started(self, invocation_id: str) -> None:
        """ADK appended the user's event: record the invocation, open the stream."""
        if self.resume is not None:
            # an answer: the invocation is the waiting turn's, already stored with the answer
            self.emit({**self.task, "history": list(self.live.history)})
            self.opened = True
            self.emit(self._working())
            return
        self.invocation_id = invocation_id
        self.user_message["metadata"] = {
            **(self.message.get("metadata") or {}),
            **kagent_metadata(**self.base, invocation_id=invocation_id, author="user", partial=False),
        }
        self.live.history[0] = self.user_message
        self.task["metadata"] = kagent_metadata(**self.base, invocation_id=invocation_id)
        self.emit({**self.task, "history": [self.user_message]})
        self.opened = True
        self.task["status"] = {"state": "working", "timestamp": now_iso()}
        await self._store(
            self.owner.store.set_turn_invocation(
                task=self.task, user_message=self.user_message, invocation_id=invocation_id
            )
        )
        self.emit(self._working())

    def _working(self) -> dict[str, Any]:
        return status_update(
            task_id=self.task_id,
            context_id=self.sid,
            state="working",
            metadata=kagent_metadata(**self.base, invocation_id=self.invocation_id),
        )

    async def _agent_event(self, event: Any) -> None:
        if event.error_code == MODEL_ERROR_CODE:
            raise _TurnFailed(event.error_message or "The model failed.")
        if event.error_code or event.error_message:
            raise _TurnFailed(describe_event_error(event.error_code, event.error_message, model=self._model_name()))
        event_usage = usage_of(event)
        if event_usage and not event.partial:
            self.usage = event_usage
        message = self._message_of(event)
        if message is None:
            return
        if event.partial:
            self.partial_text += "".join(
                p["text"] for p in message["parts"] if p.get("kind") == "text" and not p.get("metadata")
            )
            self.partial_author = event.author
        if not event.partial and confirmations.asks_for_confirmation(event):
            self.question = message
        if not event.partial:
            # ADK has committed this event; until the store has it too, the text streamed so far
            # stays what a stop keeps (a stop here finds the event in ADK: see _stopped)
            await self.owner.checkpoints.reach(TURN_AFTER_AGENT_MESSAGE)
            await self._store(
                self.owner.store.add_messages(session_id=self.sid, task_id=self.task_id, messages=[message])
            )
            self._took(message, event.author)
        self.emit(
            status_update(
                task_id=self.task_id,
                context_id=self.sid,
                state="working",
                message=message,
                metadata=message["metadata"],
            )
        )

    def _took(self, message: dict[str, Any], author: str | None) -> None:
        """A whole agent message is stored: it is the turn's, and the deltas before it were it."""
        self.partial_text = ""
        self.live.history.append(message)
        texts = [p["text"] for p in message["parts"] if p.get("kind") == "text" and not p.get("metadata")]
        if texts:
            self.last_text = "".join(texts)
        self.last_author = author

    async def _stopped(self) -> None:
        """The user stopped the turn. What they saw stays, in the store and in the model's context,
        as one exchange marked stopped:

        * a whole agent message ADK committed but the store did not have yet (the stop came in
          between) is stored now: what the model holds, the view holds;
        * the reply streamed since (deltas; ADK appends whole events only) is appended to ADK's
          session as the agent's event, its text then :data:`STOP_NOTE` (the note alone when
          nothing streamed), and stored as the agent's message under the same id, marked stopped.
          So the model's next request has the user's message and the reply as the user saw it,
          never the message alone as a stray;
        * the turn ends canceled, with no status message: the history says what came, and the
          view says the turn was canceled.

        A turn stopped before ADK took the message (no invocation yet) is in neither."""
        if self.invocation_id is not None:
            try:
                await self._stored_what_adk_took()
                await self._keep_stopped_reply()
            except Exception:
                log.warning("turn %s: could not keep its stopped reply", self.task_id, exc_info=True)
        await self._finish("canceled")

    async def _adk_session(self) -> Any:
        return await self.owner.runner.session_service.get_session(
            app_name=self.owner.app_name, user_id=self.session.user_id, session_id=self.sid
        )

    async def _stored_what_adk_took(self) -> None:
        """Store the agent's whole messages of this turn that ADK committed and the store lacks:
        those after the turn's own user event (an answer's turn: after the answer; what came
        before the question is the waiting turn's, as stored then)."""
        adk = await self._adk_session()
        known = {m.get("messageId") for m in self.live.history}
        since: list[Any] = []
        for event in effective_events(list(adk.events) if adk is not None else []):
            if event.invocation_id != self.invocation_id or event.partial:
                continue
            if event.author == "user":
                since = []
            elif event.id and event.id not in known:
                since.append(event)
        for event in since:
            message = self._message_of(event)
            if message is None:
                continue
            if not await self.owner.store.message_id_exists(self.sid, message["messageId"]):
                await self._store(
                    self.owner.store.add_messages(session_id=self.sid, task_id=self.task_id, messages=[message])
                )
            self._took(message, event.author)
            self._emit_message(message)

    async def _keep_stopped_reply(self) -> None:
        """The reply streamed since the last whole message, into ADK's session (with the note) and
        the store (marked stopped), under one id."""
        partial = self.partial_text
        author = self.partial_author if partial else (self.last_author or self._agent_name())
        text = f"{partial}\n\n{STOP_NOTE}" if partial else STOP_NOTE
        event = Event(
            id=Event.new_id(),
            invocation_id=self.invocation_id or "",
            author=author or self._agent_name(),
            content=genai_types.Content(role="model", parts=[genai_types.Part(text=text)]),
            custom_metadata={contract.STOPPED_KEY: True},
        )
        adk = await self._adk_session()
        if adk is None:
            return
        await self.owner.runner.session_service.append_event(adk, event)
        if not partial:
            return
        metadata = kagent_metadata(**self.base, invocation_id=self.invocation_id, author=author, partial=False)
        metadata[contract.STOPPED_KEY] = True
        kept = {
            **agent_text_message(partial, task_id=self.task_id, context_id=self.sid),
            "messageId": event.id,
            "metadata": metadata,
        }
        await self._store(self.owner.store.add_messages(session_id=self.sid, task_id=self.task_id, messages=[kept]))
        self._took(kept, author)
        self._emit_message(kept)

    def _emit_message(self, message: dict[str, Any]) -> None:
        self.emit(
            status_update(
                task_id=self.task_id,
                context_id=self.sid,
                state="working",
                message=message,
                metadata=message["metadata"],
            )
        )

    def _agent_name(self) -> str:
        return str(getattr(getattr(self.owner.runner, "agent", None), "name", "") or "agent")

    async def _store(self, write: Coroutine[Any, Any, None]) -> None:
        """A store write mid-turn; if it fails, ADK is ahead of the store: flag the session.

        A stop that arrives during the write waits for it to end, then goes on: a write cut
        halfway leaves a PostgreSQL connection in a transaction it cannot go on from."""
        try:
            await _uncut(write)
        except Exception as exc:
            if is_storage_failure(exc):
                self.owner._on_store_failure(self.sid)
            raise

    async def _finish(self, state: str, text: str | None = None, message: dict[str, Any] | None = None) -> None:
        self.task["status"] = {"state": state, "timestamp": now_iso()}
        self.task["metadata"] = kagent_metadata(
            **self.base, invocation_id=self.invocation_id, author=self.last_author, partial=False, usage=self.usage
        )
        if state == "failed" and self.invocation_id and self.resume is None:
            # the agent took the message: the next turn rewinds this one first (executor)
            self.task["metadata"][CLEAN_RETRY_KEY] = True
        status_message = message
        if text is not None:
            status_message = agent_text_message(text, task_id=self.task_id, context_id=self.sid)
        if status_message is not None:
            self.task["status"]["message"] = status_message
        try:
            await self._store(self.owner.store.update_task(self.task, touch_session=True))
        except Exception as exc:
            if not is_storage_failure(exc):
                raise
            log.warning("turn %s: could not store its end (%s); recovery will", self.task_id, exc)
        if not self.opened:
            self.emit({**self.task, "history": list(self.live.history)})
            self.opened = True
        final_meta = kagent_metadata(**self.base, invocation_id=self.invocation_id, usage=self.usage)
        self.emit(
            status_update(
                task_id=self.task_id, context_id=self.sid, state=state, message=status_message, metadata=final_meta
            )
        )


async def _uncut(coro: Coroutine[Any, Any, Any]) -> Any:
    """``await coro``, which a cancellation of the caller does not cut: the caller's
    ``CancelledError`` is raised once ``coro`` has ended."""
    task = asyncio.ensure_future(coro)
    try:
        return await asyncio.shield(task)
    except asyncio.CancelledError:
        if not task.done():
            with contextlib.suppress(Exception):
                await asyncio.shield(task)
        raise


async def _shielded(coro: Coroutine[Any, Any, Any]) -> None:
    """Run cleanup to completion even though the current task is being cancelled."""
    task = asyncio.get_running_loop().create_task(coro)
    try:
        await asyncio.shield(task)
    except asyncio.CancelledError:
        await task
