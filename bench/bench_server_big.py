"""Ten times bigger on the server: a 10,000-turn session against a 1,000-turn one, in one run.

Sessions of 100, 1,000 and 10,000 turns are seeded in-process with ``seed_turns.py`` (the ADK
events and store rows real turns leave, written in bulk). Then the server runs the way the app runs
it -- a child process started with ``spawn_server`` -- and each operation is measured over loopback
HTTP, end to end, the answer read and parsed by this (client) process:

* rewind: ``POST /api/sessions/{id}/rewind`` before the last turn, its answer bounded as the app
  asks (the newest ``chat.ANSWER_TAIL`` messages of the effective history), and again with the
  whole effective history answered (what a client that does not bound it gets);
* redo: ``POST /api/sessions/{id}/redo`` of that rewind (the turn comes back);
* fork: ``POST /api/sessions/{id}/fork`` before the last turn (the fork is deleted, not timed);
* a turn: one streaming A2A 1.0 ``SendStreamingMessage`` on the session, read to its end;
* peak memory: the server's peak RSS (``VmHWM``, reset through ``/proc/PID/clear_refs`` before each
  operation) during the rewinds, redos, forks and turns, against the same peak at 1,000 turns;
* open over REST: ``GET /api/sessions/{id}/tasks``, every task of the session;
* open over A2A: the first ``ListTasks`` page (A2A 1.0, ``pageSize`` 100) of the session -- what a
  client shows first -- and every page until ``nextPageToken`` is empty;
* memory: the server's RSS after opening the session (REST tasks, every ListTasks page; no ADK
  session is loaded for a read), each in a fresh server process, 10,000 turns against 100.

Each time is the median of ``--repeat`` runs, the sizes measured alternately; each line prints
the ratio 10,000 / 1,000 turns with its target and ok / short. ``--huge 100000`` adds a
100,000-turn session (seeded in batches) to the rewind, redo, fork and turn lines, as a third
column with its ratio to 1,000 turns, to show the curve.

Each engine in turn (``--engine``, default both): SQLite, as the app runs it, and PostgreSQL (a
team server's database: ``pgserver``'s PostgreSQL, a fresh database, the same server process with
``REWINDTUI_DATABASE_URL``), each with its own sessions and its own lines.

    python bench/bench_server_big.py [--turns 10000] [--repeat 5] [--huge 100000] [--engine both]
    python bench/bench_server_big.py --quick   # a smoke run (the figures mean nothing)

``--quick``: 100 turns against 10, once; per engine one server process for every case (the memory
after opening 100 turns is then read in the process that opened 1 turn first), and the waits for
the RSS to settle shortened.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
import uuid
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

import httpx

from bench_team import new_db, postgres
from rewindtui.a2a import contract
from rewindtui.chat import ANSWER_TAIL
from rewindtui.server import EmbeddedServer
from rewindtui.server.http.options import DATABASE_URL_ENV, ServerOptions
from rewindtui.server.process.spawn import spawn_server
from scratch import scratch
from seed_turns import seed_session

ENGINES = ("sqlite", "postgresql")

TARGET = 2.0
#: targets other than TARGET (issue: a turn within 1.2x, the server's memory within 1.5x)
TARGETS = {"a turn (A2A 1.0 stream, read to the end)": 1.2}
RSS_TARGET = 1.5
REDO = "redo of that rewind"


def rss_kib(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    raise RuntimeError("no VmRSS")


def rewind(http: httpx.Client, server: Any, sid: str, inv: str, tail: int | None = ANSWER_TAIL) -> int:
    body: dict[str, Any] = {contract.REST_BEFORE_FIELD: inv}
    if tail is not None:
        body[contract.REST_HISTORY_LENGTH_FIELD] = tail
    resp = http.post(f"{server.api_url}/sessions/{sid}/rewind", json=body)
    resp.raise_for_status()
    return len(resp.json()["data"]["history"])


def redo(http: httpx.Client, server: Any, sid: str) -> None:
    http.post(
        f"{server.api_url}/sessions/{sid}/redo", json={contract.REST_HISTORY_LENGTH_FIELD: ANSWER_TAIL}
    ).raise_for_status()


def turn(http: httpx.Client, server: Any, sid: str) -> int:
    body = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "SendStreamingMessage",
        "params": {
            "message": {
                "role": "ROLE_USER",
                "messageId": uuid.uuid4().hex,
                "contextId": sid,
                "parts": [{"text": "one more line"}],
            }
        },
    }
    headers = {"A2A-Version": "1.0", "Accept": "text/event-stream"}
    frames = 0
    with http.stream("POST", server.agent_url, json=body, headers=headers) as resp:
        resp.raise_for_status()
        for line in resp.iter_lines():
            if line.startswith("data:"):
                frames += 1
                last = json.loads(line[5:])
    state = (last.get("result", {}).get("statusUpdate") or {}).get("status", {}).get("state")
    if state != "TASK_STATE_COMPLETED":
        raise RuntimeError(f"a turn ended with {last!r}")
    return frames


def reset_peak(pid: int) -> None:
    Path(f"/proc/{pid}/clear_refs").write_text("5")


def peak_kib(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1])
    raise RuntimeError("no VmHWM")


def fork(http: httpx.Client, server: Any, sid: str, inv: str) -> str:
    resp = http.post(f"{server.api_url}/sessions/{sid}/fork", json={"rewind_before_invocation_id": inv})
    resp.raise_for_status()
    return str(resp.json()["data"]["id"])


def open_rest(http: httpx.Client, server: Any, sid: str) -> int:
    resp = http.get(f"{server.api_url}/sessions/{sid}/tasks")
    resp.raise_for_status()
    return len(resp.json()["data"])


def open_rest_page(http: httpx.Client, server: Any, sid: str) -> int:
    resp = http.get(f"{server.api_url}/sessions/{sid}/tasks", params={"limit": 100})
    resp.raise_for_status()
    return len(resp.json()["data"])


def list_page(http: httpx.Client, server: Any, sid: str, token: str = "") -> dict[str, Any]:
    params: dict[str, Any] = {"contextId": sid, "pageSize": 100}
    if token:
        params["pageToken"] = token
    body = {"jsonrpc": "2.0", "id": 1, "method": "ListTasks", "params": params}
    resp = http.post(server.agent_url, json=body, headers={"A2A-Version": "1.0"})
    resp.raise_for_status()
    answer = resp.json()
    if "error" in answer:
        raise RuntimeError(answer["error"])
    result: dict[str, Any] = answer["result"]
    return result


def open_a2a_first(http: httpx.Client, server: Any, sid: str) -> int:
    return len(list_page(http, server, sid)["tasks"])


def open_a2a_all(http: httpx.Client, server: Any, sid: str) -> int:
    seen, token = 0, ""
    while True:
        page = list_page(http, server, sid, token)
        seen += len(page["tasks"])
        token = page.get("nextPageToken") or ""
        if not token:
            return seen


def timed(fn: Callable[[str], Any], sid: str) -> tuple[float, Any]:
    start = time.perf_counter()
    out = fn(sid)
    return (time.perf_counter() - start) * 1000, out


def spawned(http: httpx.Client, data_dir: Path, url: str | None = None) -> Any:
    env = None if url is None else {**os.environ, DATABASE_URL_ENV: url}
    server = spawn_server(data_dir, timeout=300, env=env)
    http.headers["Authorization"] = f"Bearer {server.token}"
    return server


def wait_warm(http: httpx.Client, server: Any, pid: int, quick: bool = False) -> None:
    """Wait until the server's RSS stops growing (whatever the reads left running settled): the
    same for 5 reads 0.2 s apart (``quick``, a smoke run: 2 reads 0.05 s apart)."""
    interval, reads = (0.05, 2) if quick else (0.2, 5)
    last, still = rss_kib(pid), 0
    while still < reads:
        time.sleep(interval)
        now = rss_kib(pid)
        still = still + 1 if abs(now - last) < 256 else 0
        last = now


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--turns", type=int, default=10_000)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument(
        "--huge", type=int, default=0, help="also a session this long (e.g. 100000): rewind, redo, fork, turn"
    )
    parser.add_argument("--data-dir", type=Path, default=None, help="default: a temporary directory")
    parser.add_argument(
        "--engine",
        choices=(*ENGINES, "both"),
        default="both",
        help="the server's database: SQLite, PostgreSQL (pgserver, a team server's), or each in turn",
    )
    parser.add_argument(
        "--quick",
        action="store_true",
        help="a smoke run: every case once at a small size (the figures mean nothing): 100 turns, once",
    )
    args = parser.parse_args(argv)
    if args.quick:
        args.turns, args.repeat = 100, 1
    big, mid, small = args.turns, args.turns // 10, args.turns // 100
    sizes_changed = (mid, big, args.huge) if args.huge else (mid, big)
    with scratch("rewindtui-bench-big-", args.data_dir) as root:
        pg: Any = None
        for engine in ENGINES if args.engine == "both" else (args.engine,):
            url = None
            if engine == "postgresql":
                if pg is None:
                    pg = postgres(root)
                url = new_db(*pg)
            measure(args, root / engine, url, engine, big, mid, small, sizes_changed)
        return 0


def measure(
    args: argparse.Namespace,
    data_dir: Path,
    url: str | None,
    engine: str,
    big: int,
    mid: int,
    small: int,
    sizes_changed: tuple[int, ...],
) -> None:
    t0 = time.perf_counter()
    last: dict[int, str] = {}
    options = ServerOptions.from_env() if url is None else replace(ServerOptions.from_env(), database_url=url)
    seeder = EmbeddedServer(data_dir, options=options).start()
    try:
        parts = seeder.app.state.parts
        for n in (small, mid, big, *([args.huge] if args.huge else [])):
            last[n] = seeder.call(seed_session(parts, f"s{n}", n), timeout=3600)[-1]
    finally:
        seeder.stop()
    print(
        f"{engine}: seeded {small}, {mid}, {big} turns{f' and {args.huge}' if args.huge else ''} in "
        f"{time.perf_counter() - t0:.1f} s ({data_dir})",
        file=sys.stderr,
    )

    samples: dict[tuple[str, int], list[float]] = {}
    peaks: dict[tuple[str, int], list[int]] = {}
    sizes: dict[tuple[str, int], Any] = {}
    rss: dict[int, int] = {}
    with httpx.Client(timeout=600) as http:
        server: Any = None
        for n in (small, big):
            # a measuring run opens each size in a fresh process; a smoke run (the figures mean
            # nothing) opens both in one, and goes on in it below
            if server is None or not args.quick:
                server = spawned(http, data_dir, url)
            try:
                open_rest(http, server, f"s{n}")
                open_a2a_all(http, server, f"s{n}")
                wait_warm(http, server, server.pid, args.quick)
                rss[n] = rss_kib(server.pid)
            except BaseException:
                server.stop()
                raise
            if not args.quick:
                server.stop()

        # a measuring run starts a process that has opened nothing yet
        if not args.quick:
            server = spawned(http, data_dir, url)
        try:
            for n in sizes_changed:  # warm: the server has the session loaded, as while chatting
                open_rest_page(http, server, f"s{n}")
                turn(http, server, f"s{n}")
            wait_warm(http, server, server.pid, args.quick)
            # the opens first, on the sessions as the turns left them (a rewind's task carries
            # the whole effective history, so rewinds measured first would weigh on the opens)
            opens: list[tuple[str, Callable[[str], Any]]] = [
                ("open over REST, every task", lambda sid: open_rest(http, server, sid)),
                ("open over REST, newest page (limit=100)", lambda sid: open_rest_page(http, server, sid)),
                ("open over A2A ListTasks, first page", lambda sid: open_a2a_first(http, server, sid)),
                ("open over A2A ListTasks, every page", lambda sid: open_a2a_all(http, server, sid)),
            ]
            changes: list[tuple[str, Callable[[str], Any]]] = [
                (
                    "rewind before the last turn (REST, newest 200)",
                    lambda sid: rewind(http, server, sid, last[int(sid[1:])]),
                ),
                (
                    "rewind, whole effective history answered",
                    lambda sid: rewind(http, server, sid, last[int(sid[1:])], None),
                ),
                ("fork before the last turn (REST)", lambda sid: fork(http, server, sid, last[int(sid[1:])])),
                ("a turn (A2A 1.0 stream, read to the end)", lambda sid: turn(http, server, sid)),
            ]
            plan = [(label, op, (mid, big)) for label, op in opens]
            plan += [(label, op, sizes_changed) for label, op in changes]
            for label, op, ns in plan:
                for _ in range(args.repeat):
                    for n in ns:
                        sid = f"s{n}"
                        reset_peak(server.pid)
                        ms, out = timed(op, sid)
                        peaks.setdefault((label, n), []).append(peak_kib(server.pid))
                        samples.setdefault((label, n), []).append(ms)
                        sizes[(label, n)] = out
                        if label.startswith("rewind before"):  # the redo brings the turn back: timed too
                            reset_peak(server.pid)
                            ms, out = timed(lambda sid: redo(http, server, sid), sid)
                            peaks.setdefault((REDO, n), []).append(peak_kib(server.pid))
                            samples.setdefault((REDO, n), []).append(ms)
                        elif label.startswith("rewind, whole"):
                            redo(http, server, sid)
                        elif label.startswith("fork"):
                            http.delete(f"{server.api_url}/sessions/{out}").raise_for_status()
        finally:
            server.stop()

    print(
        f"{engine}: server, {big}-turn session vs {mid}-turn (memory after opening: vs {small}-turn); loopback HTTP, "
        f"server in a child process, median of {args.repeat}"
    )
    labels = list(dict.fromkeys(label for label, _ in samples))
    for label in labels:
        a, b = statistics.median(samples[(label, mid)]), statistics.median(samples[(label, big)])
        ratio = b / a
        target = TARGETS.get(label, TARGET)
        what = sizes.get((label, big))
        detail = f"{what} items" if isinstance(what, int) and not label.startswith("a turn") else ""
        huge = ""
        if args.huge and (label, args.huge) in samples:
            h = statistics.median(samples[(label, args.huge)])
            huge = f"  {args.huge:>6}: {h:8.1f} ms ({h / a:5.2f}x)"
        print(
            f"  {label:<46} {mid:>6}: {a:8.1f} ms  {big:>6}: {b:8.1f} ms  ({detail:>12})  "
            f"{ratio:5.2f}x  target <= {target:g}x  {'ok' if ratio <= target else 'short'}{huge}"
        )
    ratio = rss[big] / rss[small]
    print(
        f"  {'server RSS after opening the session':<46} {small:>6}: {rss[small] / 1024:7.1f} MB  {big:>6}: "
        f"{rss[big] / 1024:7.1f} MB  {'':>14}  {ratio:5.2f}x  target <= {RSS_TARGET:g}x  "
        f"{'ok' if ratio <= RSS_TARGET else 'short'}"
    )
    change_labels = [label for label, _ in changes] + [REDO]
    peak_mid = max(max(peaks[(label, mid)]) for label in change_labels)
    peak_big = max(max(peaks[(label, big)]) for label in change_labels)
    ratio = peak_big / peak_mid
    huge = ""
    if args.huge:
        peak_huge = max(max(peaks[(label, args.huge)]) for label in change_labels)
        huge = f"  {args.huge:>6}: {peak_huge / 1024:7.1f} MB ({peak_huge / peak_mid:5.2f}x)"
    print(
        f"  {'server peak RSS during rewind/redo/fork/turn':<46} {mid:>6}: {peak_mid / 1024:7.1f} MB  {big:>6}: "
        f"{peak_big / 1024:7.1f} MB  {'':>14}  {ratio:5.2f}x  target <= {RSS_TARGET:g}x  "
        f"{'ok' if ratio <= RSS_TARGET else 'short'}{huge}"
    )
    for label in change_labels:
        line = "  ".join(f"{n}: {max(peaks[(label, n)]) / 1024:.0f} MB" for n in sizes_changed if (label, n) in peaks)
        print(f"    peak RSS, {label:<44} {line}")


if __name__ == "__main__":
    raise SystemExit(main())
