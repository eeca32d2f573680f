"""The store's hop to its connection's thread (``server/storage/store_conn.py`` ``_Worker``) does
what ``loop.run_in_executor`` on a one-thread ``ThreadPoolExecutor`` did, for any sequence of calls.

Each scenario runs against both: calls that return or raise, callers cancelled before their call
began (it is not run) or while it runs (it runs to its end, the caller gets ``CancelledError``), in
order on one thread; then the shutdown, which runs what was queued, and a call after it.
"""

from __future__ import annotations

import asyncio
import gc
import sqlite3
import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rewindtui.server.storage.store_conn import StoreBase, _Connection, _Worker


class Executor:
    """What the store did before: ``run_in_executor`` on ``ThreadPoolExecutor(1)``."""

    def __init__(self, name: str) -> None:
        self._executor = ThreadPoolExecutor(1, thread_name_prefix=name)

    def call(self, fn: Callable[..., Any], *args: Any) -> Any:
        return asyncio.get_running_loop().run_in_executor(self._executor, fn, *args)

    def shutdown(self) -> None:
        self._executor.shutdown(True)


class Boom(Exception):
    pass


#: a call: ("value", n) returns n, ("raise", n) raises Boom(n), ("cancel queued", n) is cancelled
#: by its caller while a call before it holds the thread, ("cancel running", n) while it runs
CALLS = st.lists(
    st.tuples(st.sampled_from(["value", "raise", "cancel queued", "cancel running"]), st.integers(0, 99)),
    max_size=8,
)


async def _scenario(make: Callable[[str], Any], calls: list[tuple[str, int]]) -> list[Any]:
    worker = make("hop")
    log: list[Any] = []
    threads: set[str] = set()

    def job(kind: str, n: int, gate: threading.Event | None = None, started: threading.Event | None = None) -> int:
        threads.add(threading.current_thread().name)
        if started is not None:
            started.set()
        if gate is not None:
            gate.wait(10)
        log.append(("ran", kind, n))
        if kind == "raise":
            raise Boom(n)
        return n

    async def outcome(future: Any) -> Any:
        try:
            return ("result", await future)
        except Boom as exc:
            return ("raised", exc.args)
        except asyncio.CancelledError:
            return ("cancelled",)

    for kind, n in calls:
        if kind == "cancel queued":
            gate = threading.Event()
            blocker = worker.call(job, "block", n, gate)
            task = asyncio.ensure_future(outcome(worker.call(job, kind, n)))
            await asyncio.sleep(0)  # the task awaits its call
            task.cancel()
            for _ in range(3):  # the executor's future learns of it a loop turn later (a callback)
                await asyncio.sleep(0)
            gate.set()
            log.append(("blocker", await outcome(blocker)))
            log.append(("caller", await task))
        elif kind == "cancel running":
            gate, started = threading.Event(), threading.Event()
            task = asyncio.ensure_future(outcome(worker.call(job, kind, n, gate, started)))
            await asyncio.to_thread(started.wait, 10)
            task.cancel()
            log.append(("caller", await task))
            gate.set()
        else:
            log.append(("caller", await outcome(worker.call(job, kind, n))))
    # shutdown runs what was queued: a last call queued, then the shutdown
    last = worker.call(job, "value", -1)
    await asyncio.to_thread(worker.shutdown)
    log.append(("last", await outcome(last)))
    with pytest.raises(RuntimeError, match="after shutdown"):
        worker.call(job, "value", -2)
    log.append(("threads", sorted(threads)))
    return log


@settings(max_examples=60, deadline=None)
@given(CALLS)
def test_any_calls_go_as_with_run_in_executor(calls: list[tuple[str, int]]) -> None:
    theirs = asyncio.run(_scenario(Executor, calls))
    ours = asyncio.run(_scenario(lambda name: _Worker(name + "_0"), calls))
    assert ours == theirs
    assert ("threads", ["hop_0"]) in ours  # one thread, named as the executor's


def test_a_store_reads_and_writes_through_its_threads(tmp_path: Path) -> None:
    """A real connection: its calls run on its own thread, named as before; closed, it takes none."""

    async def run() -> None:
        conn = _Connection(tmp_path / "t.db", 2000, "w")
        await conn.open()
        names = await conn.run(lambda c: [threading.current_thread().name, c.execute("PRAGMA busy_timeout").fetchone()])
        assert names == ["rewindtui-store-w_0", (2000,)]
        await conn.run(lambda c: c.execute("CREATE TABLE t (x)"))
        with pytest.raises(sqlite3.OperationalError):
            await conn.run(lambda c: c.execute("SELECT nope FROM t"))
        await conn.close()
        with pytest.raises(RuntimeError, match="not open"):
            await conn.run(lambda c: c.execute("SELECT 1"))
        store = StoreBase(tmp_path / "s.db")
        await store._writer.open()
        await store._write([("CREATE TABLE s (x)", ()), ("INSERT INTO s VALUES (?)", (1,))])
        assert await store._writer.run(lambda c: c.execute("SELECT x FROM s").fetchall()) == [(1,)]
        await store._writer.close()
        await store._reader.close()

    asyncio.run(run())
    assert not [t for t in threading.enumerate() if t.name.startswith("rewindtui-store-")]


def test_a_worker_dropped_without_a_shutdown_lets_its_thread_end() -> None:
    """As a ``ThreadPoolExecutor`` collected without ``shutdown``: its thread runs what was queued
    and ends (a store never closed leaves no thread behind)."""
    ran: list[int] = []

    async def run() -> threading.Thread:
        worker = _Worker("dropped_0")
        assert await worker.call(ran.append, 1) is None
        thread = worker._thread
        assert thread is not None and thread.is_alive()
        del worker
        gc.collect()
        return thread

    thread = asyncio.run(run())
    thread.join(10)
    assert not thread.is_alive() and ran == [1]
