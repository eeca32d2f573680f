"""Work on a session is exclusive, and outlives the request that started it.

:class:`Jobs` claims a session for one job (a turn, a rewind, a fork, a delete) and refuses
a second one while it runs (:class:`~rewindtui.server.service.errors.Busy`). Each job runs as its own
asyncio task, so a client that disconnects mid-stream does not interrupt a turn or leave a
rewind half done. On shutdown, turns (and forks, warm-ups) are cancelled and rewinds and
deletes run to completion.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Coroutine
from typing import Any

from rewindtui.server.service.errors import Busy, ShuttingDown

#: jobs that shutdown lets finish (two writes that must not be cut between)
RUN_TO_COMPLETION = frozenset({"rewind", "delete"})


class Jobs:
    def __init__(self) -> None:
        self._busy: dict[str, str] = {}
        self._jobs: dict[asyncio.Task[Any], str] = {}
        self.closing = False

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
        try:
            job = self.track(coro, kind)
        except BaseException:
            self.release(session_id)
            raise
        job.add_done_callback(lambda _task: self.release(session_id))
        return job

    async def exclusive(self, session_id: str, what: str, factory: Callable[[], Awaitable[Any]]) -> Any:
        """Claim ``session_id``, run ``factory()`` as its job, and wait for it (a cancelled caller
        stops waiting; the job goes on)."""
        self.claim(session_id, what)
        job = self.spawn(session_id, _await(factory), what)
        return await asyncio.shield(job)

    async def shutdown(self) -> None:
        """Refuse new work, cancel turns (and forks, warm-ups), let rewinds and deletes finish."""
        self.closing = True
        jobs = dict(self._jobs)
        for job, kind in jobs.items():
            if kind not in RUN_TO_COMPLETION:
                job.cancel()
        if jobs:
            await asyncio.gather(*jobs, return_exceptions=True)


async def _await(factory: Callable[[], Awaitable[Any]]) -> Any:
    return await factory()
