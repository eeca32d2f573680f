"""Undo and redo of a rewind (ctrl+z, ctrl+r) in a long session, ten times longer against shorter,
through the chat core as the app drives it (``Chat.undo``, ``Chat.reapply``), in one run.

Two sessions (1,000 and 10,000 turns by default) are seeded in-process with ``seed_turns.py``; then
the server runs the way the app runs it (a child process, ``spawn_server``) and a ``Chat`` opens
each session over loopback HTTP. Per session, alternately, ``--repeat`` times:

* rewind the last turn, then undo it: the redo's answer is a bounded tail joined to the view, and
  the turn that came back is read back from the session's newest page -- flat in the session's
  length (target: at most 2x at ten times the turns); then redo that undo (``Chat.reapply``: the
  rewind again, its bounded answer joined to the view), flat too (at most 2x);
* rewind all but the first turn, then undo it (the case that re-read the whole session in one
  request and timed out at 25,000 turns): the view is re-read by pages, as an open reads it --
  every turn comes back, so the time grows with them; what must not grow is the largest single
  answer (target: at most 1.5x); then redo that undo: the server marks every turn rewound again and
  the view drops them, so the time grows with them too; its answer must not (at most 1.5x).

Each time is the median of the repeats; the largest answer is the most bytes any one HTTP answer
carried during the step (the wire log's count), largest over the repeats.

    python bench/bench_undo.py [--turns 10000] [--small 1000] [--repeat 3] [--quick]
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import time
from pathlib import Path
from typing import Any

from rewindtui.chat import Chat
from rewindtui.client import wire_log
from rewindtui.client.a2a_client import A2AClient, ServerConfig
from rewindtui.server import EmbeddedServer
from rewindtui.server.process.spawn import spawn_server
from scratch import scratch
from seed_turns import seed_session

STEPS = (
    ("undo of a rewind of the last turn", 2.0, "time"),
    ("redo of that undo", 2.0, "time"),
    ("undo of a rewind of all but one turn", 1.5, "bytes"),
    ("redo of that undo (all but one turn)", 1.5, "bytes"),
)


def largest_answer(log: wire_log.WireLog) -> int:
    sizes = [e.get("bytes", 0) for e in log.entries if e["kind"] == "end"]
    log.entries.clear()
    return max(sizes, default=0)


async def steps(chat: Chat, log: wire_log.WireLog, invocations: list[str]) -> dict[str, tuple[float, int]]:
    """One round on an open session: each step's time (ms) and largest answer (bytes)."""
    out: dict[str, tuple[float, int]] = {}

    async def timed(name: str, step: Any, expect: str) -> None:
        largest_answer(log)
        start = time.perf_counter()
        outcome = await step()
        out[name] = ((time.perf_counter() - start) * 1000, largest_answer(log))
        assert outcome.said.startswith(expect), outcome.said

    await chat.rewind(invocations[-1])
    await timed(STEPS[0][0], chat.undo, "Undid the rewind: 1 turn back")
    await timed(STEPS[1][0], chat.reapply, "Redid the rewind: 1 turn rewound again")
    await chat.undo()
    await chat.rewind(invocations[1])
    await timed(STEPS[2][0], chat.undo, f"Undid the rewind: {len(invocations) - 1} turns back")
    await timed(STEPS[3][0], chat.reapply, "Redid the rewind")
    await chat.undo()  # back to the whole session for the next round
    return out


async def measure(agent_url: str, api_url: str, token: str, sizes: dict[int, list[str]], repeat: int) -> dict:
    log = wire_log.WireLog(max_entries=200_000, max_bytes=1 << 30)
    wire_log.activate(log)
    samples: dict[tuple[str, int], list[tuple[float, int]]] = {}
    chats: dict[int, Chat] = {}
    try:
        for n in sizes:
            auth = {"Authorization": f"Bearer {token}"}
            client = A2AClient(ServerConfig(url=agent_url, api=api_url, credentials=auth))
            chats[n] = Chat(client)
            await chats[n].open(f"s{n}")
        for _ in range(repeat):
            for n, invocations in sizes.items():
                for name, figures in (await steps(chats[n], log, invocations)).items():
                    samples.setdefault((name, n), []).append(figures)
    finally:
        wire_log.activate(None)
        for chat in chats.values():
            await chat.client.aclose()
    return samples


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--turns", type=int, default=10_000)
    parser.add_argument("--small", type=int, default=1_000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--quick", action="store_true", help="a smoke run: 30 and 150 turns, once")
    parser.add_argument("--data", type=Path, default=None, help="scratch directory (kept); default: a temporary one")
    args = parser.parse_args(argv)
    if args.quick:
        args.turns, args.small, args.repeat = 150, 30, 1
    small, big = args.small, args.turns
    with scratch("bench-undo-", args.data) as data:
        t0 = time.perf_counter()
        seeder = EmbeddedServer(data).start()
        try:
            parts = seeder.app.state.parts
            sizes = {n: seeder.call(seed_session(parts, f"s{n}", n), timeout=3600) for n in (small, big)}
        finally:
            seeder.stop()
        print(f"seeded {small:,} and {big:,} turns in {time.perf_counter() - t0:.1f} s", file=sys.stderr)
        server = spawn_server(data, timeout=300, share=False)
        try:
            samples = asyncio.run(measure(server.agent_url, server.api_url, server.token, sizes, args.repeat))
        finally:
            server.stop()
    print(f"undo / redo at {big:,} vs {small:,} turns (median of {args.repeat}; largest answer of any request):")
    for name, target, judged in STEPS:
        ms = {n: statistics.median(t for t, _ in samples[(name, n)]) for n in (small, big)}
        largest = {n: max(b for _, b in samples[(name, n)]) for n in (small, big)}
        ratio_ms, ratio_bytes = ms[big] / ms[small], largest[big] / max(largest[small], 1)
        ratio = ratio_ms if judged == "time" else ratio_bytes
        ok = "ok" if ratio <= target else "short"
        print(
            f"  {name:<38} {ms[big]:8.0f} vs {ms[small]:6.0f} ms = {ratio_ms:5.2f}x   largest answer "
            f"{largest[big] / 1024:7.0f} vs {largest[small] / 1024:5.0f} KiB = {ratio_bytes:4.2f}x   "
            f"target {judged} <= {target}x: {ok}"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
