"""How the app holds up with large sessions (issue: large conversations stay instant).

Every figure is measured in this run and printed next to its target with ok/short; ratios
compare a large and a small session measured the same way, one after the other, so that a
shared, noisy machine affects both alike.

    python bench/bench_app.py            # all figures (well under a minute)
    python bench/bench_app.py --quick    # fewer repetitions
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import os
import shlex
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from textual.geometry import Region  # noqa: E402

from rewindtui.a2a.classify import classify  # noqa: E402
from rewindtui.a2a.dialect import Dialect  # noqa: E402
from rewindtui.chat import Chat  # noqa: E402
from rewindtui.client import A2AClient, Capabilities, ServerConfig  # noqa: E402
from rewindtui.tui.app import RewindApp  # noqa: E402
from synthetic import make_tasks  # noqa: E402

SIZE = (120, 40)
rows: list[tuple[str, str, str, bool]] = []


def report(name: str, value: str, target: str, ok: bool) -> None:
    rows.append((name, value, target, ok))
    print(f"{'ok   ' if ok else 'short'}  {name:<58} {value:<28} target {target}", flush=True)


def offline_chat(messages: int) -> Chat:
    """A chat whose conversation is loaded from synthetic tasks (no server involved)."""
    client = A2AClient(ServerConfig(url="http://127.0.0.1:9/"))
    client.capabilities = Capabilities(name="bench", dialect=Dialect.V03, rewind_modes=("a2a",), fork=True, api=None)
    chat = Chat(client)
    chat.conversation.session_id = "bench-session"
    chat.conversation.load_tasks(make_tasks(messages))
    return chat


async def open_time(messages: int) -> float:
    """App start with a session of ``messages`` to the first idle frame."""
    chat = offline_chat(messages)
    gc.collect()
    start = time.perf_counter()
    app = RewindApp(chat=chat)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        elapsed = time.perf_counter() - start
    return elapsed


async def switch_time(messages: int) -> float:
    """In a running app: show a loaded session of ``messages`` and paint it."""
    app = RewindApp(chat=offline_chat(1))
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        chat = offline_chat(messages)
        screen = app.chat_screen
        start = time.perf_counter()
        screen.chat = chat
        chat.listener = screen._on_change
        screen._show_conversation()
        await pilot.pause()
        return time.perf_counter() - start


def delta_event(task: str, n: int) -> object:
    return classify(
        {
            "kind": "status-update",
            "taskId": task,
            "contextId": "bench-session",
            "final": False,
            "status": {
                "state": "working",
                "message": {
                    "kind": "message",
                    "messageId": f"delta-{n}",
                    "role": "agent",
                    "taskId": task,
                    "metadata": {"kagent_adk_partial": True, "kagent_invocation_id": "e-live", "kagent_author": "demo"},
                    "parts": [{"kind": "text", "text": f"word{n} "}],
                },
            },
        }
    )


async def streaming(messages: int, deltas: int) -> tuple[float, float, float]:
    """(per-delta seconds painting after each delta, deltas/s when they arrive in a burst,
    ratio of the burst's second-half to first-half per-delta time)."""
    chat = offline_chat(messages)
    app = RewindApp(chat=chat)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        screen = app.chat_screen
        conv = chat.conversation
        # the per-delta UI cost: apply the event, update the transcript, and draw every line in
        # view (what a frame costs), synchronously so that nothing else is timed
        transcript = screen.transcript
        lines = transcript.scrollable_content_region.height
        events = [delta_event("live-task", n) for n in range(deltas)]
        start = time.perf_counter()
        region = Region(0, 0, transcript.size.width, lines)
        for event in events:
            screen._on_change(conv.apply(event))
            transcript.render_lines(region)  # what a frame of the transcript costs
        per_delta = (time.perf_counter() - start) / deltas
        await pilot.pause()
        # a burst, painted as the app paints (frames coalesce): the sustained rate and whether a backlog grows
        halves = []
        for half in range(2):
            start = time.perf_counter()
            for n in range(deltas):
                screen._on_change(conv.apply(delta_event("live-task", deltas * (half + 1) + n)))
                if n % 10 == 0:
                    await asyncio.sleep(0)
            await pilot.pause()
            halves.append(time.perf_counter() - start)
        rate = (2 * deltas) / sum(halves)
        return per_delta, rate, halves[1] / halves[0]


async def rewind_paint(messages: int, repeat: int) -> float:
    """Optimistic rewind of the last turn: truncate and paint (median of ``repeat``)."""
    chat = offline_chat(messages)
    app = RewindApp(chat=chat)
    times = []
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        screen = app.chat_screen
        conv = chat.conversation
        for _ in range(repeat):
            target = conv.last_turn_invocation()
            assert target is not None
            start = time.perf_counter()
            token, change = conv.truncate_before(target)
            screen._on_change(change)
            await pilot.pause()
            times.append(time.perf_counter() - start)
            screen._on_change(conv.rollback(token))
            await pilot.pause()
    return statistics.median(times)


async def scroll_top_check(messages: int) -> bool:
    chat = offline_chat(messages)
    app = RewindApp(chat=chat)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        transcript = app.chat_screen.transcript
        transcript.scroll_home(animate=False, immediate=True)
        await pilot.pause()
        first = chat.conversation.items[0]
        return transcript.scroll_y == 0 and transcript._item_at(0) == (0, 0) and first.text.startswith("message number 1:")


def rss_of(messages: int) -> int:
    code = (
        f"import asyncio,sys;sys.path.insert(0,{str(HERE)!r});import bench_app as b\n"
        "async def m():\n"
        f"    app=b.RewindApp(chat=b.offline_chat({messages}))\n"
        "    async with app.run_test(size=b.SIZE) as p:\n"
        "        await p.pause(); app.chat_screen.transcript.scroll_home(animate=False, immediate=True); await p.pause()\n"
        "        print(next(l.split()[1] for l in open('/proc/self/status') if l.startswith('VmRSS')))\n"
        "asyncio.run(m())\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return int(out.stdout.strip().splitlines()[-1])


def first_paint(argv: list[str], marker: str = "Message the agent", timeout: float = 30.0) -> float:
    """Seconds from starting ``rewindtui ARGV`` in a real terminal (tmux) until its screen shows
    the composer. A terminal emulator matters: in a bare pty nobody answers Textual's terminal
    queries and start-up waits for them to time out."""
    name = f"rewindtui-bench-{os.getpid()}-{time.monotonic_ns()}"
    command = " ".join(shlex.quote(a) for a in [sys.executable, "-m", "rewindtui", *argv])
    start = time.perf_counter()
    subprocess.run(["tmux", "new-session", "-d", "-s", name, "-x", "120", "-y", "40", command], check=True)
    try:
        while time.perf_counter() - start < timeout:
            screen = subprocess.run(["tmux", "capture-pane", "-p", "-t", name], capture_output=True, text=True).stdout
            if marker in screen:
                return time.perf_counter() - start
            time.sleep(0.005)
        return float("nan")
    finally:
        subprocess.run(["tmux", "send-keys", "-t", name, "C-q"], capture_output=True)
        deadline = time.time() + 10
        while time.time() < deadline:
            alive = subprocess.run(["tmux", "has-session", "-t", name], capture_output=True).returncode == 0
            if not alive:
                break
            time.sleep(0.05)
        subprocess.run(["tmux", "kill-session", "-t", name], capture_output=True)


async def main(quick: bool) -> int:
    big, small = 5000, 50
    reps = 1 if quick else 3

    t_small = min([await open_time(small) for _ in range(reps)])
    t_big = min([await open_time(big) for _ in range(reps)])
    report(f"open {big} messages vs {small} (app start to first frame)", f"{t_big*1000:.0f} ms vs {t_small*1000:.0f} ms = {t_big/t_small:.2f}x", "<= 2x", t_big / t_small <= 2)
    s_small = min([await switch_time(small) for _ in range(reps)])
    s_big = min([await switch_time(big) for _ in range(reps)])
    report(f"show a loaded session in a running app, {big} vs {small}", f"{s_big*1000:.0f} ms vs {s_small*1000:.0f} ms", "(for reference)", True)

    deltas = 100 if quick else 200
    pd_small, rate_small, _ = await streaming(small, deltas)
    pd_big, rate_big, backlog = await streaming(big, deltas)
    report(f"per-delta UI cost at {big} vs {small} (apply + draw view)", f"{pd_big*1000:.2f} ms vs {pd_small*1000:.2f} ms = {pd_big/pd_small:.2f}x", "<= 1.2x", pd_big / pd_small <= 1.2)
    report(f"sustained deltas/s at {big} messages (burst)", f"{rate_big:.0f}/s", ">= 200/s", rate_big >= 200)
    report("backlog: 2nd half vs 1st half of the burst", f"{backlog:.2f}x", "no growth (<= 1.5x)", backlog <= 1.5)

    r_small = await rewind_paint(small, 5 if quick else 15)
    r_big = await rewind_paint(big, 5 if quick else 15)
    report(f"rewind -> truncated view painted at {big}", f"{r_big*1000:.1f} ms", "<= 50 ms", r_big <= 0.05)
    report(f"rewind paint {big} vs {small}", f"{r_big*1000:.1f} ms vs {r_small*1000:.1f} ms = {r_big/r_small:.2f}x", "<= 2x", r_big / r_small <= 2)

    report(f"scroll to top of {big} shows the first message", str(await scroll_top_check(big)), "True", await scroll_top_check(big))

    empty, full = rss_of(0), rss_of(10000)
    report("RSS with 10,000 messages vs empty app", f"{full/1024:.0f} MB vs {empty/1024:.0f} MB = {full/empty:.2f}x", "<= 2x", full / empty <= 2)

    try:
        from rewindtui.server import EmbeddedServer
    except ImportError:
        EmbeddedServer = None  # type: ignore[assignment]
    if shutil.which("tmux") is None:
        print("cold start figures skipped: they need tmux (a real terminal emulator)")
    elif EmbeddedServer is not None:
        with tempfile.TemporaryDirectory() as tmp:
            with EmbeddedServer(Path(tmp) / "running") as server:
                running = min(first_paint(["--url", server.agent_url, "--api", server.api_url]) for _ in range(reps))
            report("cold start to first paint, server already running", f"{running*1000:.0f} ms", "<= 500 ms", running <= 0.5)
            embedded = min(first_paint(["--data-dir", str(Path(tmp) / f"embedded{i}")]) for i in range(reps))
            report("cold start to first paint, embedded server", f"{embedded*1000:.0f} ms", "<= 1500 ms", embedded <= 1.5)
    short = [r for r in rows if not r[3]]
    print(f"\n{len(rows) - len(short)} ok, {len(short)} short")
    return 0


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true")
    raise SystemExit(asyncio.run(main(parser.parse_args().quick)))
