"""A running turn's events in the team database (server/storage/turn_events.py): written in
batches with per-task versions, read back with a2a-sdk's own ``DatabaseTaskEventStream.subscribe``
from the newest run's Task row, and pruned once their turn has ended. On a real PostgreSQL."""

from __future__ import annotations

import asyncio
from contextlib import aclosing

from a2a.server.cluster import TaskVersion, VersionedEvent
from a2a.types import a2a_pb2 as pb
from sqlalchemy import text

from rewindtui.server.storage.team_store import TeamStore
from rewindtui.server.storage.turn_events import TurnEventLog


def _task(task_id: str, state: int) -> pb.Task:
    return pb.Task(id=task_id, context_id="s", status=pb.TaskStatus(state=state))


def _delta(task_id: str, text: str, state: int = pb.TASK_STATE_WORKING) -> pb.TaskStatusUpdateEvent:
    return pb.TaskStatusUpdateEvent(
        task_id=task_id,
        context_id="s",
        status=pb.TaskStatus(
            state=state, message=pb.Message(message_id=text, role=pb.ROLE_AGENT, parts=[pb.Part(text=text)])
        ),
    )


def _versioned(events: list[object], first: int) -> list[VersionedEvent]:
    return [VersionedEvent(event=e, version=TaskVersion(first + n)) for n, e in enumerate(events)]  # type: ignore[arg-type]


async def _read(log: TurnEventLog, task_id: str, count: int) -> list[object]:
    start = await log.last_snapshot(task_id)
    assert start is not None
    got: list[object] = []
    async with aclosing(log.subscribe(task_id, after=TaskVersion(start - 1))) as rows:
        async for row in rows:
            got.append(row.event)
            if len(got) == count:
                break
    return got


def test_a_follower_reads_the_newest_run_from_its_task_row_and_old_rows_are_pruned(pg_url: str) -> None:
    async def run() -> None:
        team = TeamStore(pg_url)
        await team.open()
        log = TurnEventLog(team.engine, poll_interval_s=0.05)
        try:
            await log.initialize()
            async with team.engine.connect() as conn:  # a2a-sdk's table, in the rewindtui schema
                where = (await conn.execute(text("SELECT to_regclass('rewindtui.task_events')"))).scalar()
                assert where is not None
            first_run = [_task("t1", pb.TASK_STATE_SUBMITTED), _delta("t1", "He"), _delta("t1", "Hello")]
            await log.append("t1", _versioned(first_run, 1))
            await log.append("t2", _versioned([_task("t2", pb.TASK_STATE_SUBMITTED)], 1))  # another task between
            await log.append("t1", _versioned([_delta("t1", "asked", pb.TASK_STATE_INPUT_REQUIRED)], 4))
            assert await log.last_version("t1") == 4 and await log.last_version("nope") == 0
            assert await _read(log, "t1", 4) == [*first_run, _delta("t1", "asked", pb.TASK_STATE_INPUT_REQUIRED)]
            # the task resumes (an answer): a new run, a new Task row; a follower starts there
            resumed = [_task("t1", pb.TASK_STATE_WORKING), _delta("t1", "Again")]
            await log.append("t1", _versioned(resumed, 5))
            assert await log.last_snapshot("t1") == 5
            assert await _read(log, "t1", 2) == resumed
            # a row appended while the follower waits reaches it (a2a-sdk's polling tail)
            follower = asyncio.create_task(_read(log, "t2", 2))
            await asyncio.sleep(0.2)
            await log.append("t2", _versioned([_delta("t2", "late", pb.TASK_STATE_COMPLETED)], 2))
            assert (await asyncio.wait_for(follower, 10))[-1] == _delta("t2", "late", pb.TASK_STATE_COMPLETED)
            # pruning: only rows that were there at the previous prune, and not a running task's
            assert await log.prune(running=[]) == 0  # the first prune only marks
            await log.append("t3", _versioned([_task("t3", pb.TASK_STATE_SUBMITTED)], 1))
            assert await log.prune(running=["t2"]) == 6  # t1's rows; t2 runs; t3 came after the mark
            assert await log.last_version("t1") == 0
            assert await log.last_version("t2") == 2 and await log.last_version("t3") == 1
        finally:
            await team.close()

    asyncio.run(run())
