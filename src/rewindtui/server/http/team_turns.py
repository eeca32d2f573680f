"""Following and cancelling, from any replica, a turn that runs on another one; finishing the
turns of a replica that died (a team server).

Built on a2a-sdk 1.3's ``a2a.server.cluster``, the way its ``DefaultRequestHandlerV2`` uses it
(``a2a/server/request_handlers/default_request_handler_v2.py``: ``_subscribe_remote``,
``_cancel_remote``), over this server's own task store (which keeps rewound tasks and redo records
that a2a-sdk's ``VersionedDatabaseTaskStore`` has no place for):

* **Publish.** Each turn this replica runs (``TurnRunner.on_live``) has its events -- every event
  its own client gets, from the run's Task on, the model's deltas included -- appended
  to a2a-sdk's ``task_events`` table (:class:`~rewindtui.server.storage.turn_events.TurnEventLog`,
  a ``DatabaseTaskEventStream`` from ``a2a/server/cluster/database_event_stream.py``), a batch per
  insert, off the turn's path.
* **Follow** (``SubscribeToTask`` / ``tasks/resubscribe``) a task that is running but not here:
  a2a-sdk's snapshot-then-tail: the run's ``Task`` row, then the rows after it
  (``DatabaseTaskEventStream.subscribe``, polled every 0.25 s), until a final state -- the same
  events, deltas and all, in the same order, as the running replica's own client got from the
  start of the run. Every :data:`ALIVE_CHECK_SECONDS` the follower also reads the task from the
  store: a turn that ended without its replica writing the end (the replica died and was swept,
  below) ends the stream with the stored final status. A turn that published nothing (a replica
  of an older rewindtui, or a turn that failed before its Task) is followed from the store: its
  stored messages, whole.
* **Cancel** (``CancelTask``) a task running on another replica: as ``_cancel_remote`` records the
  cancel in the shared store and the running replica stops at its next save, the request is
  written to the database (``cancel_requests``); every replica looks there for its own running
  turns every :data:`POLL_SECONDS` (:meth:`TeamTurns.watch`) and cancels the ones asked for,
  exactly as a local cancel; the asking replica waits for the task to end (at most
  :data:`CANCEL_WAIT_SECONDS`) and answers it.
* **Sweep.** Every :data:`SWEEP_SECONDS` each replica looks for turns stored as running whose
  session no replica holds (the session's advisory lock, :mod:`~rewindtui.server.storage.session_leases`,
  went with the dead replica's connection) and finishes them as the session's next claim would
  (failed, with the messages stored): a follower sees the end without anyone touching the session.
  Every :data:`PRUNE_SECONDS` it removes the event rows of ended turns (at least that old).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
from collections.abc import AsyncIterator
from contextlib import aclosing
from typing import Any

from a2a.server.cluster import TaskVersion, VersionedEvent
from a2a.types import a2a_pb2 as pb

from rewindtui.a2a.dialect import TERMINAL_STATES
from rewindtui.server.service.agent_service import RUNNING_STATES, AgentService
from rewindtui.server.service.live_task import CLOSED, LiveTask
from rewindtui.server.shared.errors import Busy, Conflict
from rewindtui.server.shared.wire import event_to_proto, status_update
from rewindtui.server.storage.session_leases import SessionLeases
from rewindtui.server.storage.team_store import TeamStore
from rewindtui.server.storage.turn_events import TurnEventLog

log = logging.getLogger(__name__)

POLL_SECONDS = 0.25
#: how often a follower reads the task from the store (a turn whose replica died ends there)
ALIVE_CHECK_SECONDS = 2.0
CANCEL_WAIT_SECONDS = 30.0
#: how often a replica looks for turns whose replica died (and finishes them)
SWEEP_SECONDS = 2.0
#: how often a replica removes the event rows of ended turns (each at least this old)
PRUNE_SECONDS = 60.0
#: how long a follower waits for a just-started turn's first event row before reading the store
FIRST_ROW_WAIT_SECONDS = 1.0

#: where a run's stream ends (a2a-sdk's ``_subscribe_remote`` stops at the same states)
_STREAM_ENDS = frozenset(
    {
        pb.TASK_STATE_COMPLETED,
        pb.TASK_STATE_FAILED,
        pb.TASK_STATE_CANCELED,
        pb.TASK_STATE_REJECTED,
        pb.TASK_STATE_INPUT_REQUIRED,
        pb.TASK_STATE_AUTH_REQUIRED,
    }
)


def _ends_stream(event: Any) -> bool:
    if isinstance(event, pb.Message):
        return True
    return isinstance(event, (pb.TaskStatusUpdateEvent, pb.Task)) and event.status.state in _STREAM_ENDS


class TeamTurns:
    """Publish this replica's turns; follow, cancel and sweep the others' (see the module's docstring)."""

    def __init__(self, service: AgentService, team: TeamStore, events: TurnEventLog | None = None) -> None:
        self.service = service
        self.team = team
        #: a2a-sdk's event stream on the team database (None: follow from the store only)
        self.events = events
        self._watcher: asyncio.Task[None] | None = None
        self._sweeper: asyncio.Task[None] | None = None
        self._publishers: set[asyncio.Task[None]] = set()
        if events is not None:
            service.turns.on_live = self._on_live

    def runs_elsewhere(self, state: str, task_id: str) -> bool:
        return state in RUNNING_STATES and self.service.live_task(task_id) is None

    # -- publish -----------------------------------------------------------------------------
    def _on_live(self, task_id: str, live: LiveTask) -> None:
        """A turn starts here: subscribe now (nothing missed) and append its events off its path.
        (Not the subscription's snapshot: a run's first event is its Task -- turns.py ``_started``
        -- which is the snapshot a follower starts from; a run that fails before it has none, and
        is followed from the store.)"""
        _snapshot, queue = live.subscribe()
        job = asyncio.get_running_loop().create_task(self._publish(task_id, queue))
        self._publishers.add(job)
        job.add_done_callback(self._publishers.discard)

    async def _publish(self, task_id: str, queue: asyncio.Queue[dict[str, Any]]) -> None:
        assert self.events is not None
        version = 0
        with contextlib.suppress(Exception):  # a resumed task goes on from its last row
            version = await self.events.last_version(task_id)
        batch = [await queue.get()]
        while True:
            while not queue.empty():  # what came while the last insert ran: one insert
                batch.append(queue.get_nowait())
            closed = any(e is CLOSED for e in batch)
            versioned = []
            for event in batch:
                if event is not CLOSED:
                    version += 1
                    versioned.append(VersionedEvent(event=event_to_proto(event), version=TaskVersion(version)))
            try:
                await self.events.append(task_id, versioned)
            except asyncio.CancelledError:
                raise
            except Exception:  # followers on other replicas miss these; the turn goes on
                log.warning("could not publish %d event(s) of turn %s for other replicas", len(versioned), task_id)
            if closed:
                return
            batch = [await queue.get()]

    # -- follow ------------------------------------------------------------------------------
    async def follow(self, user_id: str, task_id: str) -> AsyncIterator[Any]:
        """A turn running on another replica: its run's events (protos), or, when it published
        none, its stored messages (0.3 dicts)."""
        start = await self._run_start(task_id)
        if start is None:
            async for event in self._follow_store(user_id, task_id):
                yield event
            return
        assert self.events is not None
        queue: asyncio.Queue[Any] = asyncio.Queue()

        async def tail() -> None:
            # a2a-sdk's tail: every row after ``start - 1`` (the run's Task row first)
            assert self.events is not None
            async with aclosing(self.events.subscribe(task_id, after=TaskVersion(start - 1))) as rows:
                async for row in rows:
                    await queue.put(row.event)

        reader = asyncio.get_running_loop().create_task(tail())
        told = False
        try:
            while True:
                try:
                    event = await asyncio.wait_for(queue.get(), ALIVE_CHECK_SECONDS)
                except TimeoutError:
                    if reader.done() and not reader.cancelled() and reader.exception() is not None and not told:
                        # the database failed under the tail: the end still comes from the store
                        told = True
                        log.warning("lost the events of turn %s: %s", task_id, reader.exception())
                    data = json.loads(await self.service.task_json(user_id, task_id))
                    if data["status"]["state"] not in RUNNING_STATES and queue.empty():
                        # ended without a final row: its replica died and was swept
                        status = data["status"]
                        yield status_update(
                            task_id=task_id,
                            context_id=data["contextId"],
                            state=status["state"],
                            message=status.get("message"),
                        )
                        return
                    continue
                yield event
                if _ends_stream(event):
                    return
        finally:
            reader.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await reader

    async def _run_start(self, task_id: str) -> int | None:
        """The version of the running turn's newest Task row (its run's start), or None."""
        if self.events is None:
            return None
        loop = asyncio.get_running_loop()
        deadline = loop.time() + FIRST_ROW_WAIT_SECONDS
        while True:
            try:
                start = await self.events.last_snapshot(task_id)
            except Exception:
                log.warning("could not read the events of turn %s", task_id, exc_info=True)
                return None
            if start is not None or loop.time() >= deadline:
                return start
            await asyncio.sleep(POLL_SECONDS)  # the turn has just started: its first row is on its way

    async def _follow_store(self, user_id: str, task_id: str) -> AsyncIterator[dict[str, Any]]:
        """The stored Task, then each message stored since, then the final status (whole
        messages, polled): for a turn whose replica published no events."""
        data = json.loads(await self.service.task_json(user_id, task_id))
        yield data
        seen = {m.get("messageId") for m in data.get("history", [])}
        while data["status"]["state"] not in TERMINAL_STATES and data["status"]["state"] != "input-required":
            await asyncio.sleep(POLL_SECONDS)
            live = self.service.live_task(task_id)
            if live is not None:  # it moved here (a resumed answer)
                async for event in live.follow():
                    if event.get("kind") != "task":
                        yield event
                return
            data = json.loads(await self.service.task_json(user_id, task_id))
            for message in data.get("history", []):
                if message.get("messageId") not in seen:
                    seen.add(message.get("messageId"))
                    if message.get("role") == "agent":
                        yield status_update(
                            task_id=task_id, context_id=data["contextId"], state="working", message=message
                        )
        status = data["status"]
        yield status_update(
            task_id=task_id, context_id=data["contextId"], state=status["state"], message=status.get("message")
        )

    # -- sweep -------------------------------------------------------------------------------
    async def sweep(self) -> int:
        """Finish the turns stored as running whose session no replica holds; how many sessions.

        Who holds what is read from ``pg_locks`` (:meth:`SessionLeases.held_anywhere`), not tried:
        trying would hold a busy session for a moment and turn its next request away. A turn ends
        by storing its end and then letting its session go, so a task read again after that look
        and still running has lost its replica."""
        leases = self.service.jobs.leases
        if not isinstance(leases, SessionLeases):
            return 0
        busy = self.service.jobs.busy_sessions()
        candidates = {
            t.session_id: t.id
            for t in await self.service.store.unfinished_tasks()
            if self.service.live_task(t.id) is None and t.session_id not in busy
        }
        held = await leases.held_anywhere(list(candidates))
        finished = 0
        for session_id, task_id in candidates.items():
            if session_id in held:
                continue
            row = await self.service.store.get_task(task_id)
            if row is None or row.state not in RUNNING_STATES:
                continue  # it ended between the two looks
            finished += await self._finish_if_orphaned(session_id)
        return finished

    async def _finish_if_orphaned(self, session_id: str) -> int:
        """No replica holds the session: the one running its turn is gone -- finish it."""
        jobs = self.service.jobs
        try:
            held = await jobs.claim_shared(session_id, "turn")
        except Busy:  # held here or elsewhere: someone runs it
            return 0
        try:
            if not held:
                return 0
            session = await self.service.store.get_session(session_id)
            if session is None:
                return 0
            report = await self.service.recovery.session(session_id, session.user_id)
            if report.turns_failed:
                log.warning(
                    "session %s: %d turn(s) of a replica that stopped finished as failed",
                    session_id,
                    report.turns_failed,
                )
            return 1
        finally:
            jobs.release(session_id)
            await jobs.release_shared(session_id)

    async def _sweep_loop(self) -> None:
        loop = asyncio.get_running_loop()
        next_prune = loop.time() + PRUNE_SECONDS
        while True:
            await asyncio.sleep(SWEEP_SECONDS)
            try:
                await self.sweep()
                if self.events is not None and loop.time() >= next_prune:
                    next_prune = loop.time() + PRUNE_SECONDS
                    running = [t.id for t in await self.service.store.unfinished_tasks()]
                    await self.events.prune(running)
            except asyncio.CancelledError:
                raise
            except Exception:  # the database may be briefly away: look again next time
                log.warning("could not look for the turns of stopped replicas", exc_info=True)

    # -- cancel ------------------------------------------------------------------------------
    async def cancel(self, user_id: str, task_id: str) -> str:
        """Cancel ``task_id`` running on another replica; the task JSON once it has ended."""
        await self.team.request_cancel(task_id, user_id)
        loop = asyncio.get_running_loop()
        deadline = loop.time() + CANCEL_WAIT_SECONDS
        while True:
            text = await self.service.task_json(user_id, task_id)
            if json.loads(text)["status"]["state"] not in RUNNING_STATES:
                return text
            if loop.time() > deadline:
                raise Conflict(
                    f"task {task_id!r} runs on another replica, which has not stopped it within "
                    f"{CANCEL_WAIT_SECONDS:g} s; the cancel stays asked for"
                )
            await asyncio.sleep(POLL_SECONDS)

    async def _watch_once(self) -> None:
        running = list(self.service.turns.jobs)
        asked = await self.team.cancels_for(running)
        for task_id in asked:
            self.service.turns.cancel(task_id)
        await self.team.drop_cancels(asked)

    async def _watch(self) -> None:
        while True:
            await asyncio.sleep(POLL_SECONDS)
            try:
                await self._watch_once()
            except asyncio.CancelledError:
                raise
            except Exception:  # the database may be briefly away: look again next time
                log.warning("could not read the cancels asked by other replicas", exc_info=True)

    def start(self) -> None:
        loop = asyncio.get_running_loop()
        self._watcher = loop.create_task(self._watch())
        self._sweeper = loop.create_task(self._sweep_loop())

    async def stop(self) -> None:
        """Stop watching and sweeping (turns still running go on publishing: :meth:`close`)."""
        jobs = [self._watcher, self._sweeper]
        self._watcher = self._sweeper = None
        for job in jobs:
            if job is not None:
                job.cancel()
        for job in jobs:
            if job is not None:
                with contextlib.suppress(asyncio.CancelledError, Exception):
                    await job

    async def close(self, grace: float = 5.0) -> None:
        """After the turns have ended: let their last events be written (at most ``grace`` s)."""
        self.service.turns.on_live = None
        publishers = list(self._publishers)
        if publishers:
            _done, pending = await asyncio.wait(publishers, timeout=grace)
            for job in pending:
                job.cancel()
