"""Rewind latency of the embedded server on a 1,000-turn session (target: <= 100 ms).

The session is seeded in-process with ``seed_turns.py`` (through ADK's session
service and the store: the same rows and events a turn writes) because 1,000
real turns take minutes: ADK rebuilds the model context from every event on
each turn. Then the server runs the way the app runs it -- a child process
started with ``spawn_server`` -- and the last turns are real turns over HTTP.
Each measurement is the real rewind path end to end over loopback HTTP:
request -> Runner.rewind_async -> store -> the full effective-history Task
(about 2,000 messages) received and parsed by this (client) process. After
each rewind a real turn brings the session back to 1,000 turns.

    python bench/bench_server_rewind.py [--turns 1000] [--repeat 7]

Rows: the A2A control message in both dialects and REST rewind (the server has
the session loaded, as it does while you chat); after a restart, a rewind as
the very first request (ADK has to load the session) and one after the client
opened the conversation (which loads it in the background); and the warm
rewind with the ADK session cache switched off (``REWINDTUI_SESSION_CACHE=0``:
what ADK's DatabaseSessionService costs on its own), and that plus the
effective-history Task rendered by a2a-sdk instead of the fast path
(``REWINDTUI_FAST_REWIND=0``) -- the "before" figures.

``--quick``, a smoke run (the figures mean nothing): 20 turns, each case once, in three server
processes rather than five. The two restart cases run first in the process that then runs the warm
ones: the rewind is its very first request, as after a restart; the open-then-rewind goes to a
second seeded session that nothing has loaded, in a process that has loaded the agent already (so
its figure leaves out what a fresh process's agent load adds). The cache-off cases with the same
settings share a process, as before.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
import uuid
from pathlib import Path
from typing import Any

import httpx

from rewindtui.server import EmbeddedServer
from rewindtui.server.process.spawn import spawn_server
from scratch import scratch
from seed_turns import seed_session

TARGET_MS = 100.0
SID = "bench"
#: a smoke run's second session: the open-then-rewind case's, on a server that has not loaded it
OPENED = "bench-opened"
REWIND_KEY = "kagent_rewind_before_invocation_id"


def sse_results(resp: httpx.Response) -> list[dict[str, Any]]:
    out = []
    for line in resp.iter_lines():
        if line.startswith("data:"):
            frame = json.loads(line[5:])
            if "error" in frame:
                raise RuntimeError(frame["error"])
            out.append(frame["result"])
    return out


def real_turn(http: httpx.Client, server: Any, text: str, sid: str = SID) -> str:
    """Run one streamed turn; returns its invocation id."""
    body = {
        "jsonrpc": "2.0",
        "id": "t",
        "method": "message/stream",
        "params": {
            "message": {
                "kind": "message",
                "role": "user",
                "messageId": str(uuid.uuid4()),
                "contextId": sid,
                "parts": [{"kind": "text", "text": text}],
            }
        },
    }
    with http.stream("POST", server.agent_url, json=body) as resp:
        results = sse_results(resp)
    assert results[-1]["status"]["state"] == "completed", results[-1]
    return results[0]["metadata"]["kagent_invocation_id"]  # the stream opens with the turn's Task


def rewind_once(http: httpx.Client, server: Any, how: str, inv: str, sid: str = SID) -> tuple[float, int]:
    """One rewind over HTTP; (milliseconds, messages in the effective history received)."""
    message_03 = {
        "kind": "message",
        "role": "user",
        "messageId": str(uuid.uuid4()),
        "contextId": sid,
        "parts": [{"kind": "text", "text": ""}],
        "metadata": {REWIND_KEY: inv},
    }
    start = time.perf_counter()
    if how == "rest":
        resp = http.post(f"{server.api_url}/sessions/{sid}/rewind", json={"rewind_before_invocation_id": inv})
        resp.raise_for_status()
        task = resp.json()["data"]
    elif how == "0.3":
        body = {"jsonrpc": "2.0", "id": "r", "method": "message/stream", "params": {"message": message_03}}
        with http.stream("POST", server.agent_url, json=body) as resp:
            (task,) = sse_results(resp)
    else:
        message_10 = {
            "role": "ROLE_USER",
            "messageId": message_03["messageId"],
            "contextId": sid,
            "parts": [{"text": ""}],
            "metadata": {REWIND_KEY: inv},
        }
        body = {"jsonrpc": "2.0", "id": "r", "method": "SendStreamingMessage", "params": {"message": message_10}}
        with http.stream("POST", server.agent_url, json=body, headers={"A2A-Version": "1.0"}) as resp:
            (result,) = sse_results(resp)
            task = result["task"]
    elapsed = (time.perf_counter() - start) * 1000
    return elapsed, len(task.get("history", []))


def row(label: str, samples: list[float], messages: int) -> str:
    median = statistics.median(samples)
    verdict = "ok" if median <= TARGET_MS else "short"
    spread = f"min {min(samples):6.1f}  max {max(samples):6.1f}" if len(samples) > 1 else " " * 26
    return (
        f"  {label:<44} median {median:6.1f} ms  {spread}  n={len(samples):<2}"
        f"  ({messages} msgs)  target <= {TARGET_MS:.0f} ms  {verdict}"
    )


def measure(server: Any, http: httpx.Client, how: str, repeat: int, last: str) -> tuple[list[float], int, str]:
    samples, messages = [], 0
    for _ in range(repeat):
        ms, messages = rewind_once(http, server, how, last)
        samples.append(ms)
        last = real_turn(http, server, "back to a full session")
    return samples, messages, last


def spawned(http: httpx.Client, data_dir: Path, env: dict[str, str] | None = None) -> Any:
    """The server as the app starts it; ``http`` sends its token from now on."""
    server = spawn_server(data_dir, timeout=120, env=env)
    http.headers["Authorization"] = f"Bearer {server.token}"
    return server


def rewind_first_thing(http: httpx.Client, server: Any, last: str) -> tuple[str, str]:
    """A rewind as a server's first request (ADK has to load the session); (its line, the
    invocation id of the turn that brings the session back)."""
    ms, messages = rewind_once(http, server, "0.3", last)
    line = row("A2A 0.3, restart, rewind first thing", [ms], messages)
    return line, real_turn(http, server, "back to a full session")


def open_then_rewind(http: httpx.Client, server: Any, last: str, sid: str = SID, pause: float = 1.0) -> tuple[str, str]:
    """What the app does: open the conversation (GET tasks warms the ADK session in the
    background), the user reads it for a moment (``pause``), then rewinds; (its line, the
    invocation id of the turn that brings the session back)."""
    http.get(f"{server.api_url}/sessions/{sid}/tasks").raise_for_status()
    time.sleep(pause)
    ms, messages = rewind_once(http, server, "0.3", last, sid)
    line = row("A2A 0.3, restart, open conversation, rewind", [ms], messages)
    return line, real_turn(http, server, "back to a full session", sid)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--turns", type=int, default=1000)
    parser.add_argument("--repeat", type=int, default=11)
    parser.add_argument("--data-dir", type=Path, default=None, help="default: a temporary directory")
    parser.add_argument(
        "--quick",
        action="store_true",
        help="a smoke run: every case once at a small size (the figures mean nothing): 20 turns, once; three "
        "server processes, not five (the restart cases first in the one that then runs the warm cases, the "
        "open-then-rewind on a second session it has not loaded; the cache-off cases with the same settings in one)",
    )
    args = parser.parse_args(argv)
    if args.quick:
        args.turns, args.repeat = 20, 1
    with scratch("rewindtui-bench-", args.data_dir) as data_dir:
        t0 = time.perf_counter()
        seeder = EmbeddedServer(data_dir).start()
        try:
            seeded = seeder.call(seed_session(seeder.app.state.parts, SID, args.turns - 1), timeout=3600)
            if args.quick:  # the open-then-rewind case's session in a smoke run (below)
                opened = seeder.call(seed_session(seeder.app.state.parts, OPENED, args.turns - 1), timeout=3600)
        finally:
            seeder.stop()

        lines: list[str] = []
        restarted: list[str] = []
        with httpx.Client(timeout=120) as http:
            server = spawned(http, data_dir)
            try:
                if args.quick:
                    # a smoke run (the figures mean nothing) takes the two restart cases in this fresh
                    # process, before the warm ones: the rewind is its very first request, and the
                    # open-then-rewind goes to a second session that nothing has loaded yet
                    line, last = rewind_first_thing(http, server, seeded[-1])
                    restarted.append(line)
                    restarted.append(open_then_rewind(http, server, opened[-1], OPENED, pause=0.1)[0])
                else:
                    last = real_turn(http, server, "the last real turn")
                print(f"seeded {args.turns} turns in {time.perf_counter() - t0:.1f} s ({data_dir})", file=sys.stderr)
                for label, how in (
                    ("A2A 0.3 message/stream (control msg)", "0.3"),
                    ("A2A 1.0 SendStreamingMessage", "1.0"),
                    ("REST POST /api/sessions/{id}/rewind", "rest"),
                ):
                    samples, messages, last = measure(server, http, how, args.repeat, last)
                    lines.append(row(label, samples, messages))
            finally:
                server.stop()

            if not args.quick:
                server = spawned(http, data_dir)  # a fresh process: the ADK session is not loaded
                try:
                    line, last = rewind_first_thing(http, server, last)
                    restarted.append(line)
                finally:
                    server.stop()

                server = spawned(http, data_dir)
                try:
                    line, last = open_then_rewind(http, server, last)
                    restarted.append(line)
                finally:
                    server.stop()
            lines += restarted

            cases = (
                ("A2A 0.3, ADK session cache off", {"REWINDTUI_SESSION_CACHE": "0"}),
                (
                    "A2A 0.3, cache off + no fast path (before)",
                    {"REWINDTUI_SESSION_CACHE": "0", "REWINDTUI_FAST_REWIND": "0"},
                ),
                (
                    "A2A 1.0, cache off + no fast path (before)",
                    {"REWINDTUI_SESSION_CACHE": "0", "REWINDTUI_FAST_REWIND": "0"},
                ),
            )
            # a smoke run (the figures mean nothing) measures each case once, and the cases with the
            # same settings on one server process; a measuring run gives each case a fresh process
            repeat = args.repeat if args.quick else max(3, args.repeat // 2)
            server, settings = None, None
            try:
                for label, overrides in cases:
                    if server is None or overrides != settings or not args.quick:
                        if server is not None:
                            server.stop()
                        server, settings = spawned(http, data_dir, env=dict(os.environ, **overrides)), overrides
                    how = "1.0" if label.startswith("A2A 1.0") else "0.3"
                    samples, messages, last = measure(server, http, how, repeat, last)
                    lines.append(row(label, samples, messages))
            finally:
                if server is not None:
                    server.stop()

        print(
            f"rewind latency on a {args.turns}-turn session (rewind before the last turn, loopback HTTP, "
            "server in a child "
            "process)"
        )
        print("\n".join(lines))
        return 0


if __name__ == "__main__":
    raise SystemExit(main())
