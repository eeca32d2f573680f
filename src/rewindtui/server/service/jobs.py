"""Work on a session is exclusive, and outlives the request that started it.

:class:`Jobs` claims a session for one job (a turn, a rewind, a fork, a delete) and refuses
a second one while it runs (:class:`~rewindtui.server.shared.errors.Busy`). Each job runs as its own
asyncio task, so a client that disconnects mid-stream does not interrupt a turn or leave a
rewind half done. On shutdown, turns (and forks) are cancelled and rewinds and
deletes run to completion.

On a team server (replicas on one PostgreSQL database) the claim also holds the session in the
database (``leases``: :class:`~rewindtui.server.storage.session_leases.SessionLeases`, an advisory
lock), so a job on the same session from another replica is refused too, with
:data:`OTHER_REPLICA_BUSY`; the hold is given back inside the job, before its caller hears the
result, so the next request of the same client finds the session free.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Coroutine
from typing import Any, Protocol

from rewindtui.server.shared.errors import Busy, ShuttingDown, StorageError

#: jobs that shutdown lets finish (two writes that must not be cut between)
RUN_TO_COMPLETION = frozenset({"rewind", "delete"})
#: the refusal when another replica of a team server has the session
OTHER_REPLICA_BUSY = "another turn on this session is running; try again when it ends"


class SharedHolds(Protocol):
    """Holds on sessions that every replica of a team server sees (storage/session_leases.py)."""

    async def try_hold(self, session_id: str) -> bool: ...

    async def release(self, session_id: str) -> None: ...


class Jobs:
    def __init__(self, leases: SharedHolds | None = None) -> None:
        self._busy: dict[str, str] = {}
        self._jobs: dict[asyncio.Task[Any], str] = {}
        self.closing = False
        #: the database's holds (a team server), or None (one process: the claims here are enough)
        self.leases = leases

    def busy_sessions(self) -> dict[str, str]:
        return dict(self._busy)

    def check_open(self) -> None:
        if self.closing:
            raise ShuttingDown("the server is shutting down")

    def claim(self, session_id: str, what: str) -> None:
        """Hold ``session_id`` for a job of kind ``what`` (release with :meth:`release` or a job)."""
        self.check_open()
        running = self._busy.get(session_id)
        if running is not None:
            raise Busy(f"a {running} is running on session {session_id!r}; try again when it has finished")
        self._busy[session_id] = what

    async def claim_shared(self, session_id: str, what: str) -> bool:
        """:meth:`claim`, then (a team server) the session's hold in the database; refused with
        :class:`Busy` when another replica has it. True when the database hold was taken (the
        caller then knows no other replica is running anything on the session)."""
        self.claim(session_id, what)
        if self.leases is None:
            return False
        try:
            held = await self.leases.try_hold(session_id)
        except Exception as exc:  # the database is away: one sentence, nothing started
            self.release(session_id)
            raise StorageError(
                f"could not hold the session in the team database ({type(exc).__name__}: {_line(exc)}); "
                "try again when it is back"
            ) from exc
        except BaseException:
            self.release(session_id)
            raise
        if not held:
            self.release(session_id)
            raise Busy(OTHER_REPLICA_BUSY)
        return True

    async def release_shared(self, session_id: str) -> None:
        """Give the database's hold on ``session_id`` back (nothing when none is held)."""
        if self.leases is not None:
            await self.leases.release(session_id)

    def release(self, session_id: str) -> None:
        self._busy.pop(session_id, None)

    def track(self, coro: Coroutine[Any, Any, Any], kind: str) -> asyncio.Task[Any]:
        """Run ``coro`` as a job of ``kind`` (see :meth:`shutdown`)."""
        job = asyncio.get_running_loop().create_task(coro)
        self._jobs[job] = kind
        job.add_done_callback(lambda task: self._jobs.pop(task, None))
        return job

    def spawn(self, session_id: str, coro: Coroutine[Any, Any, Any], kind: str) -> asyncio.Task[Any]:
        """Run ``coro`` as a job holding ``session_id`` (claimed just before) until it ends."""
        if self.leases is not None:
            coro = self._then_release(session_id, coro)
        try:
            job = self.track(coro, kind)
        except BaseException:
            self.release(session_id)
            raise
        job.add_done_callback(lambda _task: self.release(session_id))
        return job

    async def _then_release(self, session_id: str, coro: Coroutine[Any, Any, Any]) -> Any:
        try:
            return await coro
        finally:
            await asyncio.shield(self.release_shared(session_id))

    async def exclusive(self, session_id: str, what: str, factory: Callable[[], Awaitable[Any]]) -> Any:
        """Claim ``session_id``, run ``factory()`` as its job, and wait for it (a cancelled caller
        stops waiting; the job goes on)."""
        await self.claim_shared(session_id, what)
        job = self.spawn(session_id, _await(factory), what)
        return await asyncio.shield(job)

    async def shutdown(self) -> None:
        """Refuse new work, cancel turns (and forks), let rewinds and deletes finish."""
        self.closing = True
        jobs = dict(self._jobs)
        for job, kind in jobs.items():
            if kind not in RUN_TO_COMPLETION:
                job.cancel()
        if jobs:
            await asyncio.gather(*jobs, return_exceptions=True)


async def _await(factory: Callable[[], Awaitable[Any]]) -> Any:
    return await factory()


def _line(exc: BaseException) -> str:
    """The first line of an error's text (a driver's may run to several)."""
    text = str(exc).strip()
    return text.splitlines()[0] if text else "no detail"
