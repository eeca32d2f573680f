"""A turn at the end of a long session: 10,000 turns against 1,000, and one tree against another.

Sessions of 1,000 and 10,000 turns are seeded (``seed_turns.py``: the ADK events and store rows
real turns leave) for each tree, in a data directory (SQLite) or a fresh database (PostgreSQL,
``pgserver``) of its own. Each tree's server runs as the app runs it (a child process, that tree's
``src`` first on its ``PYTHONPATH``), all of them alive at once; each session is warmed with two
turns, then ``--rounds`` rounds each time one streaming A2A 1.0 turn on each session on each
server, read to its end, the trees' order alternating from round to round -- so the trees share
the machine's load. Prints each tree's median per size, the ratio 10,000 / 1,000 with its target
(1.2x), and the load average.

    python bench/bench_turn.py [--src TREE/src] [--baseline OTHER/src] [--rounds 7] [--engine both]
"""

from __future__ import annotations

import argparse
import os
import statistics
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

import httpx
from google.genai import types

from bench_server_big import turn
from bench_team import new_db, postgres
from rewindtui.server import EmbeddedServer
from rewindtui.server.agent.content_copy import copier
from rewindtui.server.http.options import DATABASE_URL_ENV, ServerOptions
from rewindtui.server.process.spawn import spawn_server
from scratch import scratch
from seed_turns import seed_session

ENGINES = ("sqlite", "postgresql")
TARGET = 1.2
HERE = Path(__file__).resolve().parent


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--src", default=str(HERE.parent / "src"), metavar="SRC", help="the tree measured")
    parser.add_argument("--baseline", default=None, metavar="SRC", help="another tree, measured alternately")
    parser.add_argument("--turns", type=int, default=10_000)
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--engine", choices=(*ENGINES, "both"), default="both")
    parser.add_argument("--quick", action="store_true", help="a smoke run: 100 vs 10 turns, one round, SQLite")
    args = parser.parse_args(argv)
    if args.quick:
        args.turns, args.rounds, args.engine = 100, 1, "sqlite"
    trees = {"baseline": args.baseline, "src": args.src} if args.baseline else {"src": args.src}
    with scratch("rewindtui-bench-turn-") as root:
        pg: Any = None
        for engine in ENGINES if args.engine == "both" else (args.engine,):
            if engine == "postgresql" and pg is None:
                pg = postgres(root)
            # a smoke run (the figures mean nothing) warms nothing up: each case once
            warm = 0 if args.quick else 2
            measure(root / engine, engine, pg if engine == "postgresql" else None, trees, args.turns, args.rounds, warm)
        return 0


def measure(root: Path, engine: str, pg: Any, trees: dict[str, str], big: int, rounds: int, warm: int = 2) -> None:
    sizes = (big // 10, big)
    urls: dict[str, str | None] = {}
    for name in trees:  # the seeding runs this process's tree: the same rows for each
        urls[name] = new_db(*pg) if pg is not None else None
        options = ServerOptions.from_env()
        if urls[name] is not None:
            options = replace(options, database_url=urls[name])
        seeder = EmbeddedServer(root / name, options=options).start()
        try:
            for n in sizes:
                seeder.call(seed_session(seeder.app.state.parts, f"s{n}", n), timeout=3600)
        finally:
            seeder.stop()
    servers: dict[str, Any] = {}
    clients: dict[str, httpx.Client] = {}
    try:
        for name, src in trees.items():
            env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [src, os.environ.get("PYTHONPATH")]))}
            if urls[name] is not None:
                env[DATABASE_URL_ENV] = str(urls[name])
            servers[name] = spawn_server(root / name, timeout=300, env=env)
            clients[name] = httpx.Client(timeout=600, headers={"Authorization": f"Bearer {servers[name].token}"})
            for n in sizes:  # warm: the session loaded, as while chatting
                for _ in range(warm):
                    turn(clients[name], servers[name], f"s{n}")
        times: dict[tuple[str, int], list[float]] = {(name, n): [] for name in trees for n in sizes}
        for r in range(rounds):
            for name in list(trees) if r % 2 == 0 else list(reversed(trees)):
                for n in sizes:
                    start = time.perf_counter()
                    turn(clients[name], servers[name], f"s{n}")
                    times[(name, n)].append((time.perf_counter() - start) * 1000)
    finally:
        for client in clients.values():
            client.close()
        for server in servers.values():
            server.stop()
    load = os.getloadavg()
    print(
        f"{engine}: a turn (A2A 1.0 stream, read to the end), {big} turns vs {sizes[0]}, median of {rounds}, "
        f"trees alternating, load {load[0]:.1f} / {load[1]:.1f} / {load[2]:.1f}"
    )
    for name, src in trees.items():
        a, b = statistics.median(times[(name, sizes[0])]), statistics.median(times[(name, big)])
        ratio = b / a
        print(
            f"  {name:<8} a turn {sizes[0]:>6}: {a:8.1f} ms  {big:>6}: {b:8.1f} ms  {ratio:5.2f}x  "
            f"target <= {TARGET:g}x  {'ok' if ratio <= TARGET else 'short'}  ({src})"
        )
    small_copies, big_copies = (copies_ms(n) for n in sizes)
    floor = TARGET * statistics.median(times[(next(iter(trees)), sizes[0])])
    print(
        f"  the request's copies alone (google-adk hands the model a copy of every content; the server's own "
        f"copier, best of 5): {sizes[0]}: {small_copies:.1f} ms  {big}: {big_copies:.1f} ms = "
        f"{big_copies / floor:.1f}x the {floor:.1f} ms a whole turn at {big} may take within {TARGET:g}x"
    )


def copies_ms(turns: int) -> float:
    """The copies of a ``turns``-turn request's contents (a user's line and the demo model's answer
    per turn, as ``seed_turns.py`` writes them), made as the server makes them for a request."""

    def not_plain(*args: Any, **kwargs: Any) -> types.Content:
        raise AssertionError("plain text contents only")

    copy = copier(not_plain)
    contents = []
    for i in range(turns):
        text = f"message number {i}: some words to make it look like a chat line"
        contents.append(types.Content(role="user", parts=[types.Part(text=text)]))
        answer = f"You said: {text} (turn {i + 1}; history: ['...']; weather_calls=0)"
        contents.append(types.Content(role="model", parts=[types.Part(text=answer)]))
    best = float("inf")
    for _ in range(5):
        start = time.perf_counter()
        for content in contents:
            copy(content)
        best = min(best, time.perf_counter() - start)
    return best * 1000


if __name__ == "__main__":
    raise SystemExit(main())
