"""Jobs with holds shared across replicas (service/jobs.py): a session another replica holds is
refused in one sentence, a database that is away is one sentence too, and the hold goes back
before the job's caller hears the result. The holds here are a fault-injecting stand-in for
storage/session_leases.py (the real ones run in tests/server/test_team_replicas.py)."""

from __future__ import annotations

import pytest

from rewindtui.server.service.jobs import OTHER_REPLICA_BUSY, Jobs
from rewindtui.server.shared.errors import Busy, StorageError


class Holds:
    def __init__(self) -> None:
        self.held: set[str] = set()
        self.other_replica: set[str] = set()
        self.fail = False
        self.log: list[str] = []

    async def try_hold(self, session_id: str) -> bool:
        if self.fail:
            raise ConnectionError("connection refused\nDETAIL: more lines")
        if session_id in self.other_replica or session_id in self.held:
            return False
        self.held.add(session_id)
        self.log.append(f"hold {session_id}")
        return True

    async def release(self, session_id: str) -> None:
        if session_id in self.held:
            self.held.discard(session_id)
            self.log.append(f"release {session_id}")


async def test_a_session_another_replica_holds_is_refused_and_left_unclaimed_here() -> None:
    holds = Holds()
    holds.other_replica.add("s")
    jobs = Jobs(holds)
    with pytest.raises(Busy) as refused:
        await jobs.claim_shared("s", "turn")
    assert refused.value.message == OTHER_REPLICA_BUSY
    assert jobs.busy_sessions() == {}  # the local claim was given back


async def test_a_database_that_is_away_is_a_one_line_storage_error() -> None:
    holds = Holds()
    holds.fail = True
    jobs = Jobs(holds)
    with pytest.raises(StorageError) as failed:
        await jobs.claim_shared("s", "rewind")
    assert "\n" not in failed.value.message and "connection refused" in failed.value.message
    assert jobs.busy_sessions() == {}


async def test_the_hold_is_back_before_the_caller_hears_the_result() -> None:
    holds = Holds()
    jobs = Jobs(holds)

    async def work() -> str:
        holds.log.append("work")
        return "done"

    assert await jobs.exclusive("s", "fork", work) == "done"
    assert holds.log == ["hold s", "work", "release s"] and holds.held == set()
    assert await jobs.exclusive("s", "fork", work) == "done"  # free again at once


async def test_without_shared_holds_nothing_changes() -> None:
    jobs = Jobs()
    assert await jobs.claim_shared("s", "turn") is False
    with pytest.raises(Busy):
        jobs.claim("s", "turn")
