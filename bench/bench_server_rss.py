"""The server's memory during a rewind, a redo and a fork, by session size: one fresh server per size.

``bench_server_big.py`` runs every size in one server, so its memory is that of the biggest session
loaded. Here each seeded session (``s1000``, ``s10000``, ... of a ``bench_server_big.py`` data
directory, or seeded here with ``--turns``) gets a server process of its own: the session is opened
(its newest page of tasks, as the app opens it), the server's RSS is read once it stops growing, then
for each operation the peak RSS (``VmHWM``, reset through ``/proc/PID/clear_refs``) is read around
it -- a rewind before the newest turn, its redo, a fork before it (deleted after). Printed: the
RSS after opening, each operation's peak and its growth over that, per size, and the ratio of
each size's peak to the smallest size's.

    python bench/bench_server_rss.py --data-dir DIR       # a bench_server_big.py data directory
    python bench/bench_server_rss.py --turns 1000 10000   # seeds those sessions first
    python bench/bench_server_rss.py --quick              # a smoke run: one 20-turn session (no
                                                          # server to list it; the RSS's settling
                                                          # waited for briefly)
"""

from __future__ import annotations

import argparse
import re
import sys
import time
from pathlib import Path
from typing import Any

import httpx

from bench_server_big import fork, peak_kib, redo, reset_peak, rewind, rss_kib, spawned, wait_warm
from rewindtui.server import EmbeddedServer
from scratch import scratch
from seed_turns import seed_session


def newest_invocation(http: httpx.Client, server: Any, sid: str) -> str:
    resp = http.get(f"{server.api_url}/sessions/{sid}/tasks", params={"limit": 100})
    resp.raise_for_status()
    for task in reversed(resp.json()["data"]):
        meta = task.get("metadata") or {}
        if not meta.get("rewindtui_effective_history") and meta.get("kagent_invocation_id"):
            return str(meta["kagent_invocation_id"])
    raise RuntimeError(f"no turn in the newest page of {sid}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data-dir", type=Path, default=None)
    parser.add_argument("--turns", type=int, nargs="*", default=[])
    parser.add_argument(
        "--quick", action="store_true", help="a smoke run (the figures mean nothing): one 20-turn session, seeded"
    )
    args = parser.parse_args(argv)
    if args.quick:
        args.turns = [20]
    with scratch("rewindtui-bench-rss-", args.data_dir) as data_dir:
        if args.turns:
            seeder = EmbeddedServer(data_dir).start()
            try:
                for n in args.turns:
                    seeder.call(seed_session(seeder.app.state.parts, f"s{n}", n), timeout=3600)
            finally:
                seeder.stop()
        with httpx.Client(timeout=900) as http:
            if args.quick:  # a smoke run's directory holds the one session it seeded: no server to ask
                sizes = list(args.turns)
            else:
                server = spawned(http, data_dir)
                try:
                    resp = http.get(f"{server.api_url}/sessions")
                    resp.raise_for_status()
                    sizes = sorted(int(s["id"][1:]) for s in resp.json()["data"] if re.fullmatch(r"s\d+", s["id"]))
                finally:
                    server.stop()
                # a bench_server_big.py directory's small sessions left out; sizes seeded here all measured
                sizes = [n for n in sizes if n >= min([*args.turns, 1000])]
            rows: dict[int, dict[str, int]] = {}
            for n in sizes:
                sid = f"s{n}"
                server = spawned(http, data_dir)
                try:
                    inv = newest_invocation(http, server, sid)
                    wait_warm(http, server, server.pid, args.quick)
                    row = {"opened": rss_kib(server.pid)}
                    for label in ("rewind", "redo", "fork"):
                        reset_peak(server.pid)
                        start = time.perf_counter()
                        if label == "rewind":
                            rewind(http, server, sid, inv)
                        elif label == "redo":
                            redo(http, server, sid)
                        else:
                            http.delete(f"{server.api_url}/sessions/{fork(http, server, sid, inv)}").raise_for_status()
                        row[label] = peak_kib(server.pid)
                        row[label + " ms"] = int((time.perf_counter() - start) * 1000)
                    rows[n] = row
                finally:
                    server.stop()
                print(f"measured {n} turns", file=sys.stderr)
        base = rows[sizes[0]]
        print(
            f"server memory by session size, one fresh server per size (MB; peak = VmHWM around the operation; "
            f"ratio to {sizes[0]} turns)"
        )
        for n in sizes:
            row = rows[n]
            cells = [f"opened {row['opened'] / 1024:6.1f}"]
            for label in ("rewind", "redo", "fork"):
                cells.append(
                    f"{label} peak {row[label] / 1024:6.1f} (+{(row[label] - row['opened']) / 1024:5.1f}, "
                    f"{row[label] / base[label]:4.2f}x, {row[label + ' ms']} ms)"
                )
            print(f"  {n:>7} turns: " + "  ".join(cells))
        return 0


if __name__ == "__main__":
    raise SystemExit(main())
