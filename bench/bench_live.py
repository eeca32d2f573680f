"""What the live view costs: one check (``rewindtui.chat.live.LiveWatch.check``, nothing changed)
on a long session against a short one, and against re-reading the long session (what a check
saves while nothing changes); and how many checks an idle app makes in its first minute and in
each minute after (the back-off's schedule, from the live view's own constants).

The sessions are seeded in-process with ``seed_turns.py`` (the rows and events real turns leave);
the server then runs the way the app runs it (a child process) and the client is the app's
``Chat`` over loopback HTTP.

    python bench/bench_live.py [--turns 1000] [--repeat 21]
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import time

from rewindtui.chat import Chat
from rewindtui.chat.live import LiveWatch
from rewindtui.client.a2a_client import A2AClient, ServerConfig
from rewindtui.server import EmbeddedServer
from rewindtui.server.process.spawn import spawn_server
from rewindtui.tui.live_view import FIRST, LONGEST
from scratch import scratch
from seed_turns import seed_session

#: a check must cost about the same on any session (one task is read, whatever the length)
TARGET_RATIO = 1.5


def schedule(seconds: float) -> int:
    """Checks an idle app makes in ``seconds`` after it became idle (nothing changing)."""
    at, wait, count = FIRST, FIRST, 0
    while at <= seconds:
        count += 1
        wait = min(wait * 2, LONGEST)
        at += wait
    return count


async def measure(server, sids: dict[int, str], repeat: int) -> dict[str, list[float]]:
    out: dict[str, list[float]] = {}
    for n, sid in sids.items():
        token = getattr(server, "token", None)  # the token it was started with, as the app sends it
        credentials = {"Authorization": f"Bearer {token}"} if token else {}
        client = A2AClient(ServerConfig(url=server.agent_url, api=server.api_url, timeout=600, credentials=credentials))
        try:
            await client.connect()
            chat = Chat(client)
            await chat.open(sid)
            watch = LiveWatch(chat)
            assert await watch.check() is None  # the first look
            for _ in range(repeat):
                t0 = time.perf_counter()
                assert await watch.check() is None
                out.setdefault(f"check {n}", []).append((time.perf_counter() - t0) * 1000)
            for _ in range(max(1, repeat // 4)):
                t0 = time.perf_counter()
                await chat.open(sid)
                out.setdefault(f"open {n}", []).append((time.perf_counter() - t0) * 1000)
        finally:
            await client.aclose()
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--turns", type=int, default=1000)
    parser.add_argument("--repeat", type=int, default=21)
    parser.add_argument(
        "--quick", action="store_true", help="a smoke run (the figures mean nothing): 20 turns, 3 checks"
    )
    args = parser.parse_args(argv)
    if args.quick:
        args.turns, args.repeat = 20, 3
    big, small = args.turns, max(1, args.turns // 100)
    with scratch("rewindtui-bench-live-") as data_dir:
        seeder = EmbeddedServer(data_dir).start()
        try:
            parts = seeder.app.state.parts
            for n in (small, big):
                seeder.call(seed_session(parts, f"s{n}", n), timeout=3600)
        finally:
            seeder.stop()
        server = spawn_server(data_dir, share=False)
        try:
            figures = asyncio.run(measure(server, {small: f"s{small}", big: f"s{big}"}, args.repeat))
        finally:
            server.stop()
        med = {key: statistics.median(values) for key, values in figures.items()}
        ratio = med[f"check {big}"] / med[f"check {small}"]
        mark = "met" if ratio <= TARGET_RATIO else "NOT met"
        print(
            f"live check, {big} vs {small} turns: {med[f'check {big}']:.1f} vs {med[f'check {small}']:.1f} ms = "
            f"{ratio:.2f}x (target <= {TARGET_RATIO}x: {mark})"
        )
        saved = med[f"open {big}"] / med[f"check {big}"]
        print(
            f"live check vs re-reading {big} turns: {med[f'check {big}']:.1f} vs {med[f'open {big}']:.1f} ms "
            "= the check "
            f"is {saved:.0f}x cheaper"
        )
        first = schedule(60)
        later = schedule(120) - first
        print(
            f"checks of an idle app: {first} in its first minute, {later} in each minute after "
            f"(back-off {FIRST:g} s to "
            f"{LONGEST:g} s)"
        )
        return 0


if __name__ == "__main__":
    sys.exit(main())
