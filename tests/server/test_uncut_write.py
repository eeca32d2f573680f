"""A stop during a turn's store write waits for the write to end (turns._uncut): a PostgreSQL
transaction cut halfway leaves its connection unusable (the conformance test that cancels a
streaming turn on a team server found it once the turn's first frame came sooner)."""

from __future__ import annotations

import asyncio

import pytest

from rewindtui.server.service.turns import _uncut


def test_a_cancelled_caller_gets_its_cancel_after_the_write_ended():
    steps: list[str] = []

    async def write() -> None:
        steps.append("begin")
        await asyncio.sleep(0.05)
        steps.append("commit")

    async def turn() -> None:
        await _uncut(write())
        steps.append("after")  # never: the turn was cancelled

    async def main() -> None:
        task = asyncio.ensure_future(turn())
        while not steps:
            await asyncio.sleep(0)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        steps.append("cancelled")

    asyncio.run(main())
    assert steps == ["begin", "commit", "cancelled"]


def test_a_write_that_fails_still_fails():
    async def write() -> None:
        raise OSError("disk full")

    with pytest.raises(OSError, match="disk full"):
        asyncio.run(_uncut(write()))
