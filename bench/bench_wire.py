"""Load and merge a large session from bytes, against ``json.loads`` of the same bytes.

10,000 tasks x 10 messages of A2A 0.3 JSON as kagent 0.10.4 stores them (the user message twice
with one messageId, agent messages with the full kagent metadata, an artifact per task, a
function_call / function_response pair every 25 tasks): about 50 MB. The app's path on session
open is "parse the bytes, then load the tasks with the cyclic GC paused" (``Chat`` does the
pause, at the call site; the conversation model itself never touches the GC); it is timed next to
plain ``json.loads`` in the same run, best of N, interleaved, and printed as a ratio with its
target -- with every item's text read, as the transcript reads it on open -- with the same load
without the pause, and without reading the text, beside it.

    python bench/bench_wire.py              # the figures (about a minute)
    python bench/bench_wire.py --tasks 1000 # a tenth of the size (a few seconds)
    python bench/bench_wire.py --profile    # plus where the merge spends its time (cProfile)
    python bench/bench_wire.py --quick      # a smoke run: 100 tasks, once, with the profile
"""

from __future__ import annotations

import argparse
import cProfile
import gc
import io
import json
import pstats
import sys
import time
import uuid
from collections.abc import Callable
from typing import Any

import pydantic_core

from rewindtui.chat import gc_paused
from rewindtui.client.a2a_client import parse_json
from rewindtui.model import ItemKind, extract_messages_from_tasks

TARGET = 1.5
TASKS = 10_000
PER_TASK = 10
TOOL_EVERY = 25
SESSION = "2f1c7a52-6a0e-4c1e-9a51-0d6f3c1e8b7a"


def _uid(n: int) -> str:
    return str(uuid.UUID(int=n))


def _meta(invocation: str, usage: int | None) -> dict[str, Any]:
    """The metadata kagent-adk 0.10.4 puts on an agent message (see tests/fixtures); usage only
    on the turn's final answer, as in 03_turn_with_tool_call.txt."""
    meta: dict[str, Any] = {
        "kagent_adk_partial": False,
        "kagent_app_name": "kagent__NS__k8s_agent",
        "kagent_user_id": "admin@kagent.dev",
        "kagent_session_id": SESSION,
        "kagent_invocation_id": invocation,
        "kagent_author": "k8s_agent",
    }
    if usage is not None:
        meta["kagent_usage_metadata"] = {
            "candidatesTokenCount": 40 + usage % 200,
            "promptTokenCount": 900 + usage,
            "totalTokenCount": 940 + usage % 200 + usage,
        }
    return meta


def make_tasks(count: int = TASKS) -> list[dict[str, Any]]:
    tasks = []
    n = 0
    for t in range(count):
        task_id = _uid(10**9 + t)
        invocation = "e-" + _uid(2 * 10**9 + t)

        def message(
            role: str,
            parts: list[dict[str, Any]],
            *,
            meta: bool = True,
            usage: bool = False,
            task_id: str = task_id,
            invocation: str = invocation,
        ) -> dict[str, Any]:
            nonlocal n
            n += 1
            m: dict[str, Any] = {
                "contextId": SESSION,
                "kind": "message",
                "messageId": _uid(n),
                "parts": parts,
                "role": role,
                "taskId": task_id,
            }
            if meta:
                m["metadata"] = _meta(invocation, n if usage else None)
            return m

        user = message("user", [{"kind": "text", "text": f"Why is pod web-{t} restarting?"}], meta=False)
        history = [user, dict(user)]  # kagent stores the user message twice with one messageId
        tool = t % TOOL_EVERY == 0
        for i in range(PER_TASK - 2):
            if tool and i == 0:
                call = {
                    "id": f"adk-{_uid(3 * 10**9 + t)}",
                    "name": "k8s_get_pod_logs",
                    "args": {"pod": f"web-{t}", "namespace": "default"},
                }
                history.append(
                    message("agent", [{"data": call, "kind": "data", "metadata": {"kagent_type": "function_call"}}])
                )
            elif tool and i == 1:
                response = {
                    "id": call["id"],
                    "name": "k8s_get_pod_logs",
                    "response": {"result": f"OOMKilled: container web-{t} exceeded 512Mi"},
                }
                history.append(
                    message(
                        "agent", [{"data": response, "kind": "data", "metadata": {"kagent_type": "function_response"}}]
                    )
                )
            else:
                text = f"Step {i}: web-{t} was OOMKilled; raise its memory limit."
                history.append(message("agent", [{"kind": "text", "text": text}], usage=i == PER_TASK - 3))
        tasks.append(
            {
                "artifacts": [
                    {
                        "artifactId": _uid(4 * 10**9 + t),
                        "parts": [{"kind": "text", "text": history[-1]["parts"][0]["text"]}],
                    }
                ],
                "contextId": SESSION,
                "history": history,
                "id": task_id,
                "kind": "task",
                "metadata": _meta(invocation, t),
                "status": {"state": "completed", "timestamp": "2026-11-21T02:19:40.303140+00:00"},
            }
        )
    return tasks


def app_load(data: bytes) -> Any:
    """What ``Chat.open`` does with the bytes of a session's tasks."""
    tasks = parse_json(data)
    with gc_paused():
        return extract_messages_from_tasks(tasks)


def best_of(fns: dict[str, Callable[[], Any]], rounds: int) -> dict[str, float]:
    """Each function ``rounds`` times, interleaved (A B C A B C ...), best time of each."""
    best = {name: float("inf") for name in fns}
    for _ in range(rounds):
        for name, fn in fns.items():
            gc.collect()
            t0 = time.perf_counter()
            fn()
            best[name] = min(best[name], time.perf_counter() - t0)
    return best


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--tasks", type=int, default=TASKS, help=f"tasks in the session (default {TASKS:,})")
    parser.add_argument("--profile", action="store_true", help="profile the merge and print the top functions")
    parser.add_argument(
        "--quick", action="store_true", help="a smoke run: every case once at a small size (the figures mean nothing)"
    )
    args = parser.parse_args()
    if args.quick:
        args.tasks, args.rounds, args.profile = 100, 1, True

    tasks = args.tasks
    data = json.dumps(make_tasks(tasks), separators=(",", ":")).encode()

    # the paths must produce what the app shows before they are worth timing
    items = extract_messages_from_tasks(json.loads(data))
    pairs = -(-tasks // TOOL_EVERY)
    expected = tasks * (PER_TASK - 1) - pairs  # user once per task; each response folded into its call
    assert len(items) == expected, (len(items), expected)
    assert sum(1 for i in items if i.kind is ItemKind.MESSAGE and i.tools and i.tools[0].has_result) == pairs
    assert view(extract_messages_from_tasks(pydantic_core.from_json(data))) == view(items)

    fns: dict[str, Callable[[], Any]] = {
        "json.loads": lambda: json.loads(data),
        "json.loads + extract": lambda: extract_messages_from_tasks(json.loads(data)),
        "app parse + extract": lambda: app_load(data),
        "parse + extract, GC on": lambda: extract_messages_from_tasks(parse_json(data)),
        "app parse + extract + text": lambda: [i.text for i in app_load(data)],
    }
    t = best_of(fns, args.rounds)
    base = t["json.loads"]

    def line(label: str, key: str, target: bool) -> None:
        ratio = t[key] / base
        verdict = f"target <= {TARGET}x  {'ok' if ratio <= TARGET else 'short'}" if target else "(comparison)"
        print(f"  {label:<58} {t[key] * 1e3:7.1f} ms  {ratio:5.2f}x  {verdict}")

    print(
        f"bench_wire: {tasks:,} tasks x {PER_TASK} messages, {len(data) / 1e6:.1f} MB of A2A 0.3 JSON, "
        f"{pairs} tool call/response pairs -> {len(items)} items; best of {args.rounds}, interleaved"
    )
    print(f"  {'json.loads(bytes)  [the baseline]':<58} {base * 1e3:7.1f} ms  1.00x")
    line(
        "app path: parse_json (pydantic-core) + extract, GC paused, every text read", "app parse + extract + text", True
    )
    line("  the same without reading the texts", "app parse + extract", False)
    line("  the same with the cyclic GC left on", "parse + extract, GC on", False)
    line("  the same with json.loads as the parser (GC on)", "json.loads + extract", False)
    print(
        f"  merge alone (extract on parsed JSON): {(t['json.loads + extract'] - base) * 1e3:.1f} ms "
        f"= {(t['json.loads + extract'] - base) / len(items) * 1e6:.2f} µs per item"
    )

    if args.profile:
        parsed = json.loads(data)
        gc.collect()
        before = [g["collections"] for g in gc.get_stats()]
        extract_messages_from_tasks(parsed)
        during = [g["collections"] - b for g, b in zip(gc.get_stats(), before, strict=True)]

        def paused() -> Any:
            gc.disable()
            try:
                return extract_messages_from_tasks(json.loads(data))
            finally:
                gc.enable()

        nogc = best_of({"paused": paused}, args.rounds)["paused"]
        print(
            f"  cyclic GC runs during the merge (gen0, gen1, gen2): {tuple(during)}; app path with the GC "
            f"paused: {nogc * 1e3:.1f} ms = {nogc / base:.2f}x  (profile tottime below includes GC pauses "
            f"in whichever function triggered them)"
        )
        profiler = cProfile.Profile()
        profiler.enable()
        extract_messages_from_tasks(parsed)
        profiler.disable()
        out = io.StringIO()
        pstats.Stats(profiler, stream=out).sort_stats("tottime").print_stats(15)
        print(out.getvalue())
    return 0


def view(items: list[Any]) -> list[tuple]:
    return [(i.kind, i.role, i.text, i.invocation_id, tuple((c.name, c.has_result) for c in i.tools)) for i in items]


if __name__ == "__main__":
    sys.exit(main())
