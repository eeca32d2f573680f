"""The agent service: the one face the A2A handler, the rewind fast path and REST talk to.

It routes; the rules live in the pieces it holds:

* :class:`~rewindtui.server.service.sessions.Sessions` -- ownership, create, delete;
* :class:`~rewindtui.server.service.jobs.Jobs` -- one job per session at a time, shutdown;
* :class:`~rewindtui.server.service.turns.TurnRunner` -- a turn, stored and streamed (and followed
  by ``SubscribeToTask``);
* :class:`~rewindtui.server.service.rewinds.RewindService` -- rewind, redo and fork, journaled;
* :class:`~rewindtui.server.storage.recovery.Recovery` -- startup replay and the consistency check.

Each piece is built from the one :class:`~rewindtui.server.service.context.ServerContext` (store, ADK's
session service and runner, app name, checkpoints, stall timeout, the per-session jobs).

Requests arrive classified (:mod:`rewindtui.server.service.requests`). Refusals of an A2A message
(bad rewind target, missing/other user's session, busy session, reused messageId, an answer to
a task with no question waiting) come as one final ``failed`` status and change nothing.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
from collections.abc import AsyncGenerator, AsyncIterator, Callable
from typing import Any

from rewindtui.server.service.context import ServerContext, UsesContext
from rewindtui.server.service.live_task import LiveTask
from rewindtui.server.service.requests import Kind, Request, check_id, check_invocation
from rewindtui.server.service.rewinds import RewindService
from rewindtui.server.service.sessions import Sessions
from rewindtui.server.service.turns import CLEAN_RETRY_KEY, TurnRunner
from rewindtui.server.shared.errors import Conflict, RecoveryPending, ServiceError
from rewindtui.server.shared.wire import failed_event
from rewindtui.server.storage.recovery import Recovery, Report
from rewindtui.server.storage.store import SessionRow, TaskPage, TaskRow
from rewindtui.server.storage.store_reader import StoreReader

log = logging.getLogger(__name__)

_END: dict[str, Any] = {"kind": "__end__"}


class AgentService(UsesContext):
    """Turns, rewind and fork for one agent (app) over a store and an ADK runner."""

    def __init__(self, context: ServerContext) -> None:
        super().__init__(context)
        self.jobs = context.jobs
        self.reader = StoreReader(context.store)
        self.sessions = Sessions(context)
        self.recovery = Recovery(
            store=context.store,
            session_service=context.session_service,
            app_name=context.app_name,
            leases=context.jobs.leases,
        )
        flag: Callable[[str], None] = self.recovery.needs.add
        self.turns = TurnRunner(context, on_store_failure=flag)
        self.rewinds = RewindService(context, on_store_failure=flag)

    # -- lifecycle -------------------------------------------------------------------
    async def startup(self) -> Report:
        return await self.recovery.startup()

    async def shutdown(self) -> None:
        await self.jobs.shutdown()

    def busy_sessions(self) -> dict[str, str]:
        return self.jobs.busy_sessions()

    async def _claim(self, session: SessionRow, what: str) -> None:
        """Hold the session for a job; first finish what a failed write left behind on it."""
        if session.id in self.recovery.needs:
            try:
                await self.recovery.session(session.id, session.user_id)
            except Exception as exc:
                raise RecoveryPending(
                    f"session {session.id!r} is being recovered after a storage failure ({exc}); try again later"
                ) from None
        if what == "turn" and self.recovery.mismatched:
            refused = await self.recovery.refused(session.id, session.user_id)
            if refused is not None:  # the view shows turns the agent lacks: said, not answered without them
                raise Conflict(refused)
        if await self.jobs.claim_shared(session.id, what):
            # a team server: this replica now holds the session, so a turn still marked running on
            # it was left by a replica that died -- finish it (failed, with what was streamed) first
            try:
                page = await self.store.session_tasks_page(session.id, limit=1)
                if page.tasks and page.tasks[-1].state in RUNNING_STATES:
                    await self.recovery.session(session.id, session.user_id)
            except BaseException:
                self.jobs.release(session.id)
                await self.jobs.release_shared(session.id)
                raise

    async def _exclusive(self, session: SessionRow, what: str, work: Callable[[], Any]) -> Any:
        await self._claim(session, what)
        job = self.jobs.spawn(session.id, _call(work), what)
        return await asyncio.shield(job)

    # -- sessions --------------------------------------------------------------------
    async def get_owned_session(self, user_id: str, session_id: str) -> SessionRow:
        return await self.sessions.owned(user_id, session_id)

    async def list_sessions(self, user_id: str) -> list[SessionRow]:
        return await self.sessions.list(user_id)

    async def create_session(
        self, user_id: str, *, name: str | None = None, session_id: str | None = None
    ) -> SessionRow:
        return await self.sessions.create(user_id, name=name, session_id=session_id)

    async def delete_session(self, user_id: str, session_id: str) -> None:
        await self.sessions.delete(user_id, session_id)

    async def rename_session(self, user_id: str, session_id: str, name: str) -> SessionRow:
        return await self.sessions.rename(user_id, session_id, name)

    async def session_detail(self, user_id: str, session_id: str) -> SessionRow:
        """The session with its fork turn and number of rewound branches."""
        session = await self.sessions.owned(user_id, session_id)
        return await self.store.get_session_detail(session.id) or session

    # -- tasks -----------------------------------------------------------------------
    async def session_tasks_json(
        self,
        user_id: str,
        session_id: str,
        *,
        include_rewound: bool = False,
        limit: int | None = None,
        before: str = "",
        history_length: int | None = None,
    ) -> tuple[list[bytes], str]:
        """The session's tasks, oldest first, as the pieces of a JSON array (0.3 task JSON,
        UTF-8), and the token of the next (older) page: every task, or with ``limit`` the newest
        ``limit`` before the page token ``before``; ``history_length``: each history's newest
        messages only (:meth:`StoreReader.tasks_pieces`)."""
        session = await self.sessions.owned(user_id, session_id)
        # no ADK session is loaded for a read: a rewind reads the events after its point
        # (checkpoints), and a turn loads the session when it runs
        return await self.reader.tasks_pieces(
            session, include_rewound=include_rewound, limit=limit, before=before, history_length=history_length
        )

    async def owned_task(self, user_id: str, task_id: str) -> TaskRow:
        return await self.reader.owned_task(user_id, task_id)

    async def task_json(self, user_id: str, task_id: str) -> str:
        return await self.reader.task_json(user_id, task_id)

    async def list_tasks(self, user_id: str, **query: Any) -> tuple[TaskPage, dict[str, list[str]]]:
        """One page of ``ListTasks`` and each listed task's history bodies (0.3 JSON)."""
        page = await self.store.list_tasks(user_id, **query)
        histories = await self.store.tasks_history_bodies(page.tasks)
        return page, histories

    async def cancel_task(self, user_id: str, task_id: str) -> str:
        """Cancel a running turn; returns the task JSON afterwards."""
        row = await self.owned_task(user_id, task_id)
        job = self.turns.cancel(task_id)
        if job is None:
            raise Conflict(f"task {task_id!r} is not running (state {row.state})")
        await asyncio.wait([job])
        return await self.task_json(user_id, task_id)

    def live_task(self, task_id: str) -> LiveTask | None:
        return self.turns.live.get(task_id)

    # -- rewind and fork -------------------------------------------------------------
    async def rewind(
        self, user_id: str, session_id: str, invocation_id: Any, *, v1: bool = False, history_length: int | None = None
    ) -> tuple[dict[str, Any], list[str]]:
        """Rewind: the rewind task (without history) and its history's raw JSON bodies (the newest
        ``history_length`` of them when given)."""
        inv = check_invocation(invocation_id)
        session = await self.sessions.owned(user_id, session_id)
        return await self._exclusive(
            session, "rewind", lambda: self.rewinds.rewind(session, inv, v1=v1, history_length=history_length)
        )

    async def redo(
        self, user_id: str, session_id: str, rewind_task_id: Any, *, v1: bool = False, history_length: int | None = None
    ) -> tuple[dict[str, Any], list[str]]:
        """Undo a rewind (None: the last one): the redo task and its history's raw JSON bodies."""
        target = None if rewind_task_id is None else check_id(rewind_task_id, "rewind task id")
        session = await self.sessions.owned(user_id, session_id)
        return await self._exclusive(
            session, "rewind", lambda: self.rewinds.redo(session, target, v1=v1, history_length=history_length)
        )

    async def fork(self, user_id: str, session_id: str, invocation_id: Any) -> SessionRow:
        inv = check_invocation(invocation_id)
        session = await self.sessions.owned(user_id, session_id)
        result: SessionRow = await self._exclusive(session, "fork", lambda: self.rewinds.fork(session, inv))
        return result

    # -- A2A messages ------------------------------------------------------------------
    async def handle(self, user_id: str, request: Request, *, streaming: bool) -> AsyncIterator[dict[str, Any]]:
        """Events (0.3 dicts) for one classified A2A message: a turn, a rewind, or both."""
        async with contextlib.aclosing(self.handle_batches(user_id, request, streaming=streaming)) as batches:
            async for batch in batches:
                for event in batch:
                    yield event

    async def handle_batches(
        self, user_id: str, request: Request, *, streaming: bool
    ) -> AsyncGenerator[list[dict[str, Any]], None]:
        """:meth:`handle`'s events, in order, each time as many as the request's job has emitted
        since the last batch was taken (never waiting for more): a stream writer can send them in
        one write, where under load a turn's events pile up between two runs of the writer."""
        try:
            if request.kind is Kind.TURN:
                session = await self.sessions.for_message(user_id, request.context_id)
            else:
                assert request.context_id is not None
                session = await self.sessions.owned(user_id, request.context_id)
            await self._claim(session, "rewind" if request.rewind_before is not None else "turn")
        except ServiceError as exc:
            yield [failed_event(exc.message, context_id=request.context_id, code=exc.code)]
            return

        queue: asyncio.Queue[dict[str, Any]] = asyncio.Queue()
        self.jobs.spawn(session.id, self._request_job(session, request, streaming, queue.put_nowait), "turn")
        while True:
            batch = [await queue.get()]
            while not queue.empty():
                batch.append(queue.get_nowait())
            if batch[-1] is _END:
                if len(batch) > 1:
                    yield batch[:-1]
                return
            yield batch

    async def _request_job(
        self, session: SessionRow, request: Request, streaming: bool, emit: Callable[[dict[str, Any]], None]
    ) -> None:
        try:
            rewind_before = request.rewind_before
            if rewind_before is None and request.kind is Kind.TURN:
                rewind_before = await self._failed_turn(session)
            if rewind_before is not None:
                try:
                    # its own job: a cancelled request must not stop a rewind half way
                    rewind = self.jobs.track(self.rewinds.rewind(session, rewind_before), "rewind")
                    task, bodies = await asyncio.shield(rewind)
                except ServiceError as exc:
                    emit(failed_event(exc.message, context_id=session.id, code=exc.code))
                    return
                emit({**task, "history": [json.loads(b) for b in bodies]})
            if request.kind is Kind.ANSWER:
                assert request.task_id is not None and request.decision is not None
                try:
                    await self.turns.answer(
                        session, request.task_id, request.message, request.decision, streaming=streaming, emit=emit
                    )
                except ServiceError as exc:
                    emit(failed_event(exc.message, context_id=session.id, code=exc.code))
            elif request.runs_turn:
                try:
                    await self.turns.run(session, request.message, streaming=streaming, emit=emit)
                except ServiceError as exc:
                    emit(failed_event(exc.message, context_id=session.id, code=exc.code))
        except Exception as exc:  # a bug or an infrastructure failure: report it, keep serving
            log.exception("request on session %s failed", session.id)
            emit(failed_event(f"internal error: {exc}", context_id=session.id, code="internal"))
        finally:
            # a team server: the session is free for the next request once the client has the end
            await asyncio.shield(self.jobs.release_shared(session.id))
            emit(_END)

    async def _failed_turn(self, session: SessionRow) -> str | None:
        """The invocation of the session's last turn if that turn failed after the agent took its
        message: a new turn first rewinds it, so the model never sees the failed message as a
        stray (a re-send is then the one copy of it). The failed turn stays in the session's
        rewound branches."""
        page = await self.store.session_tasks_page(session.id, limit=1)
        last = page.tasks[-1] if page.tasks else None
        if last is None or last.kind != "turn" or last.state != "failed" or not last.invocation_id:
            return None
        metadata = json.loads(last.body).get("metadata") or {}
        return last.invocation_id if metadata.get(CLEAN_RETRY_KEY) else None


#: a task in one of these states is running (on a team server: on the replica holding its session)
RUNNING_STATES = frozenset({"submitted", "working"})


async def _call(work: Callable[[], Any]) -> Any:
    return await work()
