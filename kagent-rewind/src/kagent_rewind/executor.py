"""The rewind executor: kagent's ``A2aAgentExecutor`` plus the seeds' rewind control message.

A message whose metadata holds ``kagent_rewind_before_invocation_id`` is a rewind:

1. It is checked against the ADK session (the target must be one of its current turns) and the
   stored tasks are read; a refusal is one final ``failed`` status with ``rewindtui_error`` set,
   and nothing is changed: no ADK event, no stored task.
2. ADK's ``Runner.rewind_async`` appends its rewind event (state and artifacts go back; nothing
   is deleted; the model no longer sees the rewound turns).
3. The stored tasks are rewritten without the rewound messages (kept in their metadata), so what
   kagent lists and returns for the session is the rewound conversation. (Should that fail, the
   answer below says so in ``kagent_rewind_store_error``: the session itself is rewound.)
4. The answer is one Task holding the session's effective history, with each message's original
   ``messageId``, flagged ``rewindtui_effective_history``; a2a-sdk stores it as this request's
   task, so ``tasks/get`` of it returns the effective history too.
5. With text, the same request then runs that text as the next turn through kagent's executor
   (rewind-and-send): its events follow the Task in the stream, under the same task id.

Every other message goes to kagent's executor untouched.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any
from uuid import uuid4

from a2a.server.agent_execution import AgentExecutor, RequestContext
from a2a.server.events import EventQueue
from a2a.types import (
    DataPart,
    FilePart,
    Message,
    Part,
    Role,
    Task,
    TaskState,
    TaskStatus,
    TaskStatusUpdateEvent,
    TextPart,
)
from google.adk.runners import Runner
from kagent.adk._agent_executor import A2aAgentExecutor
from kagent.adk.converters.request_converter import convert_a2a_request_to_adk_run_args

from kagent_rewind import contract
from kagent_rewind.history import (
    Cut,
    Refused,
    cut_history,
    effective_after_redo,
    merged_history,
    redo_event,
    restore_task,
    rewind_invocation_of,
    rewound_by,
    rewrite_task,
)
from kagent_rewind.tasks import RefusalAwareTaskStore, session_tasks

log = logging.getLogger("kagent_rewind")


def _now() -> str:
    return datetime.now(UTC).isoformat()


def rewind_target(message: Message | None, key: str = contract.REWIND_METADATA_KEY) -> Any:
    """The control message's target (any value: it is checked later), or ``None``."""
    if message is None or not message.metadata:
        return None
    return message.metadata.get(key)


def has_content(message: Message) -> bool:
    """Text (not just spaces), data or a file: the control message also sends a turn."""
    for part in message.parts:
        root = part.root
        if isinstance(root, TextPart) and root.text.strip():
            return True
        if isinstance(root, (DataPart, FilePart)):
            return True
    return False


@dataclass
class _Gate:
    """One session's traffic: a rewind never overlaps a turn of the same session."""

    lock: asyncio.Lock = field(default_factory=asyncio.Lock)
    turns: int = 0


class RewindExecutor(AgentExecutor):
    """Wraps kagent's executor (``inner``); see the module docstring.

    ``task_store`` is the store the request handler saves through (a
    :class:`RefusalAwareTaskStore` around the app's store).
    """

    def __init__(
        self,
        inner: A2aAgentExecutor,
        task_store: RefusalAwareTaskStore,
        metadata_key: str = contract.REWIND_METADATA_KEY,
    ) -> None:
        self.inner = inner
        self.task_store = task_store
        self.metadata_key = metadata_key
        self._gates: dict[str, _Gate] = {}

    # -- the session gate ------------------------------------------------------------------------
    def _gate(self, session_id: str) -> _Gate:
        return self._gates.setdefault(session_id, _Gate())

    def _release(self, session_id: str) -> None:
        gate = self._gates.get(session_id)
        if gate is not None and gate.turns == 0 and not gate.lock.locked():
            del self._gates[session_id]

    @asynccontextmanager
    async def _turn(self, session_id: str, *, admitted: bool = False) -> AsyncIterator[None]:
        """A turn runs: it waits for a rewind in progress (``admitted``: already counted)."""
        gate = self._gate(session_id)
        if not admitted:
            async with gate.lock:
                gate.turns += 1
        try:
            yield
        finally:
            gate.turns -= 1
            self._release(session_id)

    # -- AgentExecutor ---------------------------------------------------------------------------
    async def execute(self, context: RequestContext, event_queue: EventQueue) -> None:
        target = rewind_target(context.message, self.metadata_key)
        session_id = context.context_id or ""
        if target is None:
            async with self._turn(session_id):
                await self.inner.execute(context, event_queue)
            return
        assert context.message is not None
        send = has_content(context.message)
        gate = self._gate(session_id)
        if gate.turns or gate.lock.locked():
            self._release(session_id)
            await self._refuse(context, event_queue, Refused(contract.CODE_BUSY, "a turn or another rewind is running on this session; try again when it ends"))
            return
        async with gate.lock:
            task: Task | None
            try:
                task = await self._rewind(context, target, send)
            except Refused as refusal:
                task = None
                await self._refuse(context, event_queue, refusal)
            else:
                await event_queue.enqueue_event(task)
                if send:
                    gate.turns += 1  # admitted before another request can come between
        if task is None or not send:
            self._release(session_id)
            return
        # the turn's user message is stored without the control key
        metadata = {k: v for k, v in (context.message.metadata or {}).items() if k != self.metadata_key}
        context.message.metadata = metadata or None
        async with self._turn(session_id, admitted=True):
            await self.inner.execute(context, event_queue)

    async def cancel(self, context: RequestContext, event_queue: EventQueue) -> None:
        await self.inner.cancel(context, event_queue)

    # -- rewind ----------------------------------------------------------------------------------
    async def _refuse(self, context: RequestContext, event_queue: EventQueue, refusal: Refused) -> None:
        log.info("rewind refused (%s): %s", refusal.code, refusal.message)
        if context.task_id:
            self.task_store.refused.add(context.task_id)
        await event_queue.enqueue_event(
            TaskStatusUpdateEvent(
                task_id=context.task_id or "",
                context_id=context.context_id or "",
                status=TaskStatus(
                    state=TaskState.failed,
                    timestamp=_now(),
                    message=Message(
                        message_id=str(uuid4()),
                        role=Role.agent,
                        parts=[Part(root=TextPart(text=refusal.message))],
                    ),
                ),
                final=True,
                metadata={contract.ERROR_CODE_KEY: refusal.code},
            )
        )

    @staticmethod
    def _redo_plan(stored: list[Task], target: str) -> tuple[str, list[Task], list[Message]]:
        """(the rewind Task undone, the stored tasks with what it moved put back, the effective
        history once they are back); Refused when there is nothing this add-on can bring back."""
        rewind_task = next(
            (t for t in stored if (t.metadata or {}).get(contract.REWIND_INVOCATION_KEY) == target and not (t.metadata or {}).get(contract.REDO_OF_KEY)),
            None,
        )
        if rewind_task is None:
            raise Refused(contract.CODE_INVALID_INVOCATION, "nothing to redo: the rewind's task is not stored for this session")
        restored = [restore_task(t, rewind_task.id) for t in stored]
        changed = [r for r in restored if r is not None]
        if not changed:
            raise Refused(
                contract.CODE_INVALID_INVOCATION,
                "nothing to redo: that rewind's record is not known (it was made by an older kagent-rewind)",
            )
        return rewind_task.id, changed, effective_after_redo([r or t for r, t in zip(restored, stored, strict=True)])

    async def _runner(self) -> Runner:
        return await self.inner._resolve_runner()

    async def _close(self, runner: Runner) -> None:
        close = getattr(self.inner, "_safe_close_runner", None)
        if close is not None:
            await close(runner)
        else:  # pragma: no cover - kagent's executor has it
            await runner.close()

    @staticmethod
    async def _rewind_invocation(runner: Runner, user_id: str, session_id: str, target: str) -> str | None:
        """The invocation id ADK gave its rewind event (for the answer's metadata; best effort)."""
        try:
            after = await runner.session_service.get_session(
                app_name=runner.app_name, user_id=user_id, session_id=session_id
            )
        except Exception:
            log.warning("rewind of session %s: could not read the rewind event back", session_id, exc_info=True)
            return None
        return rewind_invocation_of(after.events if after else [], target)

    async def _rewind(self, context: RequestContext, target: Any, send: bool) -> Task:
        if context.current_task is not None:
            raise Refused(
                contract.CODE_BAD_REQUEST,
                "a rewind names the session by contextId only; it cannot continue a task",
            )
        run_args = convert_a2a_request_to_adk_run_args(context)
        user_id, session_id = run_args["user_id"], run_args["session_id"]
        runner = await self._runner()
        try:
            try:
                session = await runner.session_service.get_session(
                    app_name=runner.app_name, user_id=user_id, session_id=session_id
                )
                if session is None:
                    raise Refused(contract.CODE_NOT_FOUND, f"there is no session {session_id!r} to rewind")
                redo = redo_event(session.events, target) if isinstance(target, str) else None
                stored = await session_tasks(self.task_store, session_id, context.call_context)
                redo_of: str | None = None
                rewritten: list[Task] = []
                if redo is None:
                    cut = cut_history(merged_history(stored), rewound_by(session.events, target))
                else:
                    # redo: the control message names the rewind's own event; ADK's rewind before it
                    # brings back what it took away (state and artifacts too), as the embedded server does
                    redo_of, rewritten, effective = self._redo_plan(stored, target)
                    cut = Cut(effective=effective)
                await runner.rewind_async(user_id=user_id, session_id=session_id, rewind_before_invocation_id=target)
            except Refused:
                raise
            except Exception as exc:  # the session is as it was: ADK's rewind appends its event last
                log.exception("rewind of session %s failed", session_id)
                raise Refused(contract.CODE_INTERNAL, f"the rewind failed: {type(exc).__name__}: {exc}") from None
            rewind_invocation = await self._rewind_invocation(runner, user_id, session_id, target)
            app_name = runner.app_name
        finally:
            await self._close(runner)
        task_id = context.task_id or str(uuid4())
        metadata: dict[str, Any] = {
            "kagent_app_name": app_name,
            "kagent_user_id": user_id,
            "kagent_session_id": session_id,
            contract.EFFECTIVE_HISTORY_KEY: True,
            contract.REWOUND_BEFORE_KEY: target,
            contract.REWIND_INVOCATION_KEY: rewind_invocation,
        }
        if redo_of is not None:
            metadata[contract.REDO_OF_KEY] = redo_of
        try:
            changed = rewritten if redo_of is not None else [rewrite_task(task, cut, task_id) for task in stored]
            for task in changed:
                if task is not None:
                    await self.task_store.inner.save(task, context.call_context)
        except Exception as exc:
            # the session is rewound (the model's view): answer with it, and say what lags behind
            log.exception("rewind of session %s: storing the rewound tasks failed", session_id)
            metadata[contract.STORE_ERROR_KEY] = f"the stored tasks could not all be rewritten: {exc}"
        return Task(
            id=task_id,
            context_id=session_id,
            # a completed Task ends the stream; with a turn to follow, it stays open
            status=TaskStatus(state=TaskState.working if send else TaskState.completed, timestamp=_now()),
            history=cut.effective,
            metadata=metadata,
        )
