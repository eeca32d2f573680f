"""A team server on PostgreSQL: replicas, rewind at 1,000 and 10,000 turns, the per-session lock.

A real PostgreSQL from the ``pgserver`` wheel (the test extra), started in a temporary directory,
and real ``rewindtui serve`` processes; everything measured in one run, reported as ratios:

1. **Turns per second with 1 and 2 replicas** on one database: ``--turns`` streaming turns by
   ``--concurrency`` users (each in a session of its own), spread over the replicas round robin;
   turns/s with two replicas over turns/s with one.
2. **Rewind latency at 1,000 and 10,000 turns, PostgreSQL against SQLite**: a session seeded as
   real turns leave it (``seed_turns.py``), then ``--repeat`` rewinds (REST ``POST .../rewind``
   before the last turn, then a real turn to make the session full again); the median, per engine
   and size, and PostgreSQL over SQLite.
3. **The per-session lock when nobody collides**: sequential turns on one PostgreSQL server with
   the lock (``pg_try_advisory_lock`` on a connection of its own) and with it switched off, in
   alternating rounds; the ratio of the medians, and the hold + release round trip alone.
4. **A turn's events for other replicas** (a2a-sdk's ``task_events``): sequential turns of many
   deltas with their events published and with publishing switched off, in alternating rounds;
   the ratio of the medians; and how far behind the sender a follower on another replica gets each
   frame (the median, over the frames sent after it began following).

    python bench/bench_team.py [--turns 120] [--concurrency 20] [--repeat 7] [--sizes 1000,10000]
    python bench/bench_team.py --quick   # a smoke run: every part once, a few turns (the figures mean nothing)
"""

from __future__ import annotations

import argparse
import asyncio
import atexit
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
import warnings
from pathlib import Path
from typing import Any

import httpx

from rewindtui.server import EmbeddedServer
from rewindtui.server.http.options import ServerOptions
from scratch import scratch
from seed_turns import seed_session


def postgres(root: Path) -> tuple[Any, str]:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        import pgserver

        # a short path: a unix socket's path is limited to ~107 bytes (a test's tmp dir is longer)
        short = Path(tempfile.mkdtemp(prefix="rtpg-"))
        atexit.register(shutil.rmtree, short, True)  # after pgserver's own cleanup (exit handlers run last first)
        server = pgserver.get_server(short / "pg", cleanup_mode="delete")
    socket_dir = server.get_uri().split("host=", 1)[1].split("&", 1)[0]
    return server, socket_dir


def new_db(server: Any, socket_dir: str) -> str:
    name = f"b_{uuid.uuid4().hex[:12]}"
    server.psql(f'CREATE DATABASE "{name}";')
    return f"postgresql+asyncpg://postgres@/{name}?host={socket_dir}"


class Replica:
    def __init__(self, data_dir: Path, url: str) -> None:
        env = {k: v for k, v in os.environ.items() if not k.startswith("REWINDTUI_")}
        env["REWINDTUI_DATABASE_URL"] = url
        self.process = subprocess.Popen(
            [sys.executable, "-m", "rewindtui", "serve", "--port", "0", "--data-dir", str(data_dir)],
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
            env=env,
        )
        first = self.process.stdout.readline() if self.process.stdout else ""
        if not first.startswith("serving on "):
            self.process.kill()
            raise RuntimeError(f"replica did not start: {first!r}")
        self.base = first.split("serving on ", 1)[1].strip()
        self.agent_url = self.base + "/api/a2a/local/demo/"

    def stop(self) -> None:
        self.process.terminate()
        self.process.wait(60)


async def one_turn(http: httpx.AsyncClient, url: str, session: str, text: str) -> float:
    body = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "message/stream",
        "params": {
            "message": {
                "kind": "message",
                "role": "user",
                "messageId": str(uuid.uuid4()),
                "contextId": session,
                "parts": [{"kind": "text", "text": text}],
            }
        },
    }
    start = time.perf_counter()
    async with http.stream("POST", url, json=body) as resp:
        last = None
        async for line in resp.aiter_lines():
            if line.startswith("data:"):
                last = json.loads(line[5:])
    assert last is not None and last["result"]["status"]["state"] == "completed", last
    return time.perf_counter() - start


async def throughput(replicas: list[Replica], turns: int, concurrency: int, warm: bool = True) -> float:
    per_user = max(1, turns // concurrency)

    async def user(http: httpx.AsyncClient, n: int) -> None:
        session = f"u{n}-{uuid.uuid4().hex[:6]}"
        for i in range(per_user):
            await one_turn(http, replicas[(n + i) % len(replicas)].agent_url, session, f"turn {i}")

    async with httpx.AsyncClient(timeout=300) as http:
        for r in replicas if warm else ():  # warm: the agent loaded on each
            await one_turn(http, r.agent_url, f"warm-{uuid.uuid4().hex[:6]}", "warm")
        start = time.perf_counter()
        await asyncio.gather(*(user(http, n) for n in range(concurrency)))
        return per_user * concurrency / (time.perf_counter() - start)


def rewind_latency(data_dir: Path, url: str | None, turns: int, repeat: int) -> float:
    """Median ms of a REST rewind before the last turn of a ``turns``-turn session."""
    options = ServerOptions(database_url=url)
    session = "big"
    with EmbeddedServer(data_dir, options=options) as srv, httpx.Client(timeout=300) as http:
        srv.call(seed_session(srv.app.state.parts, session, turns - 1), timeout=3600)
        samples = []
        for _ in range(repeat):
            last = asyncio.run(_last_turn(srv.agent_url, session))
            start = time.perf_counter()
            resp = http.post(f"{srv.api_url}/sessions/{session}/rewind", json={"rewind_before_invocation_id": last})
            samples.append((time.perf_counter() - start) * 1000)
            resp.raise_for_status()
        return statistics.median(samples)


async def _last_turn(agent_url: str, session: str) -> str:
    body = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "message/stream",
        "params": {
            "message": {
                "kind": "message",
                "role": "user",
                "messageId": str(uuid.uuid4()),
                "contextId": session,
                "parts": [{"kind": "text", "text": "one more"}],
            }
        },
    }
    frames = []
    async with httpx.AsyncClient(timeout=300) as http, http.stream("POST", agent_url, json=body) as resp:
        async for line in resp.aiter_lines():  # to the end: the turn has finished
            if line.startswith("data:"):
                frames.append(json.loads(line[5:])["result"])
    assert frames[-1]["status"]["state"] == "completed", frames[-1]
    return str(frames[0]["metadata"]["kagent_invocation_id"])  # the stream opens with the turn's Task


def lock_cost(
    data_dir: Path, url: str, rounds: int, per_round: int, warm: int = 3, holds_n: int = 200
) -> tuple[float, float, float]:
    """(median turn ms with the lock, without it, median hold+release ms): ``warm`` turns first,
    ``holds_n`` holds and releases."""
    with EmbeddedServer(data_dir, options=ServerOptions(database_url=url)) as srv:
        jobs = srv.app.state.parts.service.jobs
        leases = jobs.leases
        with_lock: list[float] = []
        without: list[float] = []

        async def turns(n: int) -> list[float]:
            async with httpx.AsyncClient(timeout=300) as http:
                session = f"lock-{uuid.uuid4().hex[:6]}"
                return [await one_turn(http, srv.agent_url, session, f"t{i}") * 1000 for i in range(n)]

        if warm:
            asyncio.run(turns(warm))
        for _ in range(rounds):
            jobs.leases = leases
            with_lock += asyncio.run(turns(per_round))
            jobs.leases = None
            without += asyncio.run(turns(per_round))
        jobs.leases = leases

        async def holds() -> list[float]:
            out = []
            for i in range(holds_n):
                start = time.perf_counter()
                assert await leases.try_hold(f"probe-{i}")
                await leases.release(f"probe-{i}")
                out.append((time.perf_counter() - start) * 1000)
            return out

        hold = srv.call(holds(), timeout=300)
        return statistics.median(with_lock), statistics.median(without), statistics.median(hold)


#: a reply of many deltas (the demo model echoes it a few words at a time)
LONG_TEXT = " ".join(f"word{i}" for i in range(60))
#: ``--quick``'s reply: a few deltas
QUICK_TEXT = " ".join(f"word{i}" for i in range(12))


async def _stream_times(http: httpx.AsyncClient, url: str, body: dict[str, Any], out: list[tuple[float, str]]) -> None:
    """Each frame of a stream, with the time it arrived."""
    async with http.stream("POST", url, json=body) as resp:
        async for line in resp.aiter_lines():
            if line.startswith("data:"):
                out.append((time.perf_counter(), line[5:]))


def events_cost(
    root: Path, url: str, rounds: int, per_round: int, warm: int = 3, text: str = LONG_TEXT
) -> tuple[float, float, float, int]:
    """(median turn ms publishing its events for other replicas, without, median follower lag ms,
    deltas the lag is measured on): turns answering ``text``, ``warm`` of them first on each server."""
    with EmbeddedServer(root / "ev", options=ServerOptions(database_url=url)) as srv:
        turns = srv.app.state.parts.service.turns
        hook = turns.on_live
        published: list[float] = []
        unpublished: list[float] = []

        async def run(n: int) -> list[float]:
            async with httpx.AsyncClient(timeout=300) as http:
                session = f"ev-{uuid.uuid4().hex[:6]}"
                return [await one_turn(http, srv.agent_url, session, text) * 1000 for _ in range(n)]

        if warm:
            asyncio.run(run(warm))
        for _ in range(rounds):
            turns.on_live = hook
            published += asyncio.run(run(per_round))
            turns.on_live = None
            unpublished += asyncio.run(run(per_round))
        turns.on_live = hook

    # the lag: a turn on A followed from B (another replica, the same database), each frame's
    # arrival on B against the same frame's on A (B replays A's events in A's order)
    options = ServerOptions(database_url=url)
    with (
        EmbeddedServer(root / "lag-a", demo_delay=0.1, options=options) as a,
        EmbeddedServer(root / "lag-b", demo_delay=0.1, options=options) as b,
    ):

        async def lag() -> tuple[list[float], int]:
            async with httpx.AsyncClient(timeout=300) as http:
                if warm:
                    await one_turn(http, b.agent_url, f"warm-{uuid.uuid4().hex[:6]}", "warm")
                message = {
                    "kind": "message",
                    "role": "user",
                    "messageId": str(uuid.uuid4()),
                    "contextId": f"lag-{uuid.uuid4().hex[:6]}",
                    "parts": [{"kind": "text", "text": text}],
                }
                on_a: list[tuple[float, str]] = []
                on_b: list[tuple[float, str]] = []
                body = {"jsonrpc": "2.0", "id": 1, "method": "message/stream", "params": {"message": message}}
                sender = asyncio.create_task(_stream_times(http, a.agent_url, body, on_a))
                while not on_a:
                    await asyncio.sleep(0.01)
                task_id = json.loads(on_a[0][1])["result"]["id"]
                follow = {"jsonrpc": "2.0", "id": 2, "method": "tasks/resubscribe", "params": {"id": task_id}}
                since = time.perf_counter()
                await _stream_times(http, b.agent_url, follow, on_b)
                await sender
                # frames A got after B began following (earlier ones B replays at once)
                pairs = [(ta, tb) for (ta, fa), (tb, fb) in zip(on_a[1:], on_b[1:], strict=False) if ta > since]
                for (_, fa), (_, fb) in zip(on_a, on_b, strict=True):
                    if json.loads(fa)["result"] != json.loads(fb)["result"]:
                        raise AssertionError(f"B's frame differs from A's: {fb[:300]} vs {fa[:300]}")
                return [(tb - ta) * 1000 for ta, tb in pairs], len(pairs)

        lags, count = asyncio.run(lag())
    return statistics.median(published), statistics.median(unpublished), statistics.median(lags or [0.0]), count


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--turns", type=int, default=120)
    parser.add_argument("--concurrency", type=int, default=20)
    parser.add_argument("--repeat", type=int, default=7)
    parser.add_argument("--sizes", default="1000,10000")
    parser.add_argument("--skip", default="", help="comma-separated parts to leave out: replicas,rewind,lock,events")
    parser.add_argument(
        "--quick",
        action="store_true",
        help="a smoke run (the figures mean nothing): every part once, 4 turns by 2 users, rewind at 20 turns, "
        "no warm-up turns, 20 holds of the lock, a shorter reply to publish and follow",
    )
    args = parser.parse_args(argv)
    if args.quick:
        args.turns, args.concurrency, args.repeat, args.sizes = 4, 2, 1, "20"
    lock_rounds, lock_turns = (1, 2) if args.quick else (3, 10)
    # a smoke run (the figures mean nothing) warms nothing up, times 20 holds, and streams a
    # shorter reply of a few deltas
    warm, holds_n, text = (0, 20, QUICK_TEXT) if args.quick else (3, 200, LONG_TEXT)
    skip = set(filter(None, args.skip.split(",")))
    with scratch("rwt-bench-") as root:
        server, socket_dir = postgres(root)
        print(f"PostgreSQL {server.psql('SHOW server_version;').split()[2]} (pgserver), cpus {os.cpu_count()}")

        if "replicas" not in skip:
            url = new_db(server, socket_dir)
            one = [Replica(root / "r1", url)]
            try:
                single = asyncio.run(throughput(one, args.turns, args.concurrency, bool(warm)))
                two = [*one, Replica(root / "r2", url)]
                try:
                    double = asyncio.run(throughput(two, args.turns, args.concurrency, bool(warm)))
                finally:
                    two[1].stop()
            finally:
                one[0].stop()
            print(
                f"turns/s, {args.concurrency} users: 1 replica {single:.1f}, 2 replicas {double:.1f} -> "
                f"{double / single:.2f}x"
            )

        if "rewind" not in skip:
            for size in (int(s) for s in args.sizes.split(",")):
                sqlite_ms = rewind_latency(root / f"sqlite-{size}", None, size, args.repeat)
                pg_ms = rewind_latency(root / f"pg-{size}", new_db(server, socket_dir), size, args.repeat)
                print(
                    f"rewind at {size} turns (median of {args.repeat}): SQLite {sqlite_ms:.0f} ms, "
                    f"PostgreSQL {pg_ms:.0f} ms -> {pg_ms / sqlite_ms:.2f}x"
                )

        if "lock" not in skip:
            locked, unlocked, hold = lock_cost(
                root / "lock", new_db(server, socket_dir), lock_rounds, lock_turns, warm, holds_n
            )
            print(
                f"a turn with the per-session lock {locked:.0f} ms, without {unlocked:.0f} ms -> "
                f"{locked / unlocked:.2f}x; "
                f"hold + release alone {hold:.2f} ms"
            )
        if "events" not in skip:
            pub, unpub, lag, count = events_cost(
                root / "events", new_db(server, socket_dir), lock_rounds, lock_turns, warm, text
            )
            print(
                f"a turn of many deltas publishing its events {pub:.0f} ms, without {unpub:.0f} ms -> "
                f"{pub / unpub:.2f}x; "
                f"a follower on another replica {lag:.0f} ms behind (median of {count} frames)"
            )
        server.cleanup()
        return 0


if __name__ == "__main__":
    raise SystemExit(main())
