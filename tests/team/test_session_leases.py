"""storage/session_leases.py on a real PostgreSQL: two replicas' lease pools on one database; the
sweep's look at who holds what (``held_anywhere``, read from ``pg_locks``) takes nothing, so it
never turns a writer away, and sees a hold of the other pool as of its own."""

from __future__ import annotations

import asyncio

from rewindtui.server.storage.session_leases import SessionLeases


def test_held_anywhere_sees_both_replicas_holds_and_takes_none(pg_url: str) -> None:
    async def run() -> None:
        a, b = SessionLeases(pg_url), SessionLeases(pg_url)
        try:
            sessions = [f"s{n}" for n in range(40)]  # keys of either sign, high and low halves
            assert await b.held_anywhere(sessions) == set()
            assert await a.try_hold("s3") and await b.try_hold("s17")
            assert await b.held_anywhere(sessions) == {"s3", "s17"}
            assert await a.held_anywhere(["s3", "nope"]) == {"s3"}
            # the look took nothing: every other session can be held at once, by either replica
            assert all([await b.try_hold(s) for s in sessions if s not in ("s3", "s17")])
            assert not await b.try_hold("s3")
            await a.release("s3")
            assert "s3" not in await b.held_anywhere(sessions)
            assert await b.try_hold("s3")
        finally:
            await a.close()
            await b.close()

    asyncio.run(run())
