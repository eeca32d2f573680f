"""How the app holds up with large sessions (issue: large conversations stay instant).

Every figure is measured in this run and printed next to its target with ok/short; ratios
compare a large and a small session measured the same way, interleaved (small, large, small,
large, ...), best of the rounds, so that a shared, noisy machine affects both alike.

    python bench/bench_app.py            # 5,000 vs 50 messages (well under a minute)
    python bench/bench_app.py --big      # 50,000 vs 50 messages, plus scrolling the whole
                                         # session by page (a few minutes)
    python bench/bench_app.py --quick    # a smoke run: every case once at a small size (300 vs
                                         # 50 messages, 20 deltas, both RSS figures from one
                                         # process); the figures mean nothing

A session is loaded the way the app loads one -- a page of its newest tasks, then the older pages
in front of it, each page parsed from its JSON on its own (``Chat.load_older``) -- then shown.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import gc
import json
import os
import shlex
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from textual.geometry import Region  # noqa: E402

from rewindtui.a2a.classify import classify  # noqa: E402
from rewindtui.a2a.dialect import Dialect  # noqa: E402
from rewindtui.chat import OPEN_PAGE_TASKS, Chat, gc_paused  # noqa: E402
from rewindtui.client.a2a_client import A2AClient, Capabilities, ServerConfig, TaskPage  # noqa: E402
from rewindtui.tui.app import RewindApp  # noqa: E402
from synthetic import task_pages  # noqa: E402
from terminal_watch import Watch  # noqa: E402

#: a tmux server of the bench's own, without the user's configuration: a server already running
#: (the user's, another program's) would give the sessions its environment and its options,
#: and was seen giving them 80 columns instead of the 120 asked for (the status line then drops
#: its labels, and the wait for "agent demo" ran out)
TMUX = ("tmux", "-L", f"rewindtui-bench-{os.getpid()}", "-f", os.devnull)

SIZE = (120, 40)
rows: list[tuple[str, str, str, bool]] = []


def report(name: str, value: str, target: str, ok: bool) -> None:
    rows.append((name, value, target, ok))
    print(f"{'ok   ' if ok else 'short'}  {name:<58} {value:<28} target {target}", flush=True)


async def offline_chat(messages: int) -> Chat:
    """A chat whose conversation is loaded from synthetic tasks (no server involved) as the app
    loads a session: its newest page (as ``Chat.open`` does), then ``Chat.load_older`` with the
    older pages, newest first, each made as the server's JSON and parsed on its own."""
    client = A2AClient(ServerConfig(url="http://127.0.0.1:9/"))
    client.capabilities = Capabilities(name="bench", dialect=Dialect.V03, rewind_modes=("a2a",), fork=True, api=None)
    pages = task_pages(messages, OPEN_PAGE_TASKS)
    turns = -(-messages // 2)  # two messages a turn (make_tasks' default)
    left = -(-turns // OPEN_PAGE_TASKS)  # pages still to give

    async def page(session_id: str, limit: int, before: str | None = None) -> TaskPage:
        nonlocal left
        data = json.dumps(next(pages, []), separators=(",", ":")).encode()  # the server's answer
        left -= 1
        return TaskPage(json.loads(data), str(left) if left > 0 else None)

    client.session_tasks_page = page  # type: ignore[method-assign]
    chat = Chat(client)
    chat.conversation.session_id = "bench-session"
    newest = await page("bench-session", OPEN_PAGE_TASKS)
    with gc_paused():  # as Chat.open loads a session's newest page
        chat.conversation.load_tasks(newest.tasks, newest.next_page_token)
    del newest
    await chat.load_older()
    return chat


async def open_time(messages: int) -> float:
    """App start with a session of ``messages`` to the first idle frame."""
    chat = await offline_chat(messages)
    gc.collect()
    start = time.perf_counter()
    app = RewindApp(chat=chat)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        elapsed = time.perf_counter() - start
    return elapsed


async def switch_time(messages: int) -> float:
    """In a running app: show a loaded session of ``messages`` and paint it."""
    app = RewindApp(chat=await offline_chat(1))
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        chat = await offline_chat(messages)
        start = time.perf_counter()
        await show(app, pilot, chat)
        return time.perf_counter() - start


async def show(app: RewindApp, pilot: Any, chat: Chat) -> None:
    """Show ``chat``'s conversation in the running app, as its session screen does on open."""
    screen = app.chat_screen
    screen.attach(chat)
    screen.show_conversation()
    await pilot.pause()


def follow(chat: Chat, change: Any) -> None:
    """Hand a change of ``chat``'s conversation to the app, as the chat does (its listener)."""
    assert chat.listener is not None, "the app listens to the chat it shows"
    chat.listener(change)


@contextlib.asynccontextmanager
async def running(messages: int) -> AsyncIterator[tuple[RewindApp, Any, Chat]]:
    """The app, started, then a session of ``messages`` loaded and shown in it -- the order the
    app opens a session in (so what the load leaves behind is the same)."""
    app = RewindApp(chat=await offline_chat(1))
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        chat = await offline_chat(messages)
        await show(app, pilot, chat)
        yield app, pilot, chat


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


async def streaming(messages: int, deltas: int, chunks: int = 4) -> tuple[float, float, float, float]:
    """(per-delta CPU seconds painting after each delta, the same in wall seconds, deltas/s when
    they arrive in a burst, ratio of the burst's second-half to first-half per-delta time).

    The per-delta cost is the best of ``chunks`` runs of ``deltas`` deltas, each into a reply of
    its own (so every chunk draws a reply of the same length); CPU time is this thread's, what
    the app itself spends (another process on a shared machine does not add to it). The burst
    is ``5 * deltas`` deltas a half, so that the closing pause is a small part of it."""
    async with running(messages) as (app, pilot, chat):
        screen = app.chat_screen
        conv = chat.conversation
        # the per-delta UI cost: apply the event, update the transcript, and draw every line in
        # view (what a frame costs), synchronously so that nothing else is timed
        transcript = screen.transcript
        lines = transcript.scrollable_content_region.height
        region = Region(0, 0, transcript.size.width, lines)
        per_delta = per_delta_wall = float("inf")
        for chunk in range(chunks):
            events = [delta_event(f"live-task-{chunk}", n) for n in range(deltas)]
            cpu, start = time.thread_time(), time.perf_counter()
            for event in events:
                follow(chat, conv.apply(event))
                transcript.render_lines(region)  # what a frame of the transcript costs
            per_delta = min(per_delta, (time.thread_time() - cpu) / deltas)
            per_delta_wall = min(per_delta_wall, (time.perf_counter() - start) / deltas)
            await pilot.pause()
        # a burst, painted as the app paints (frames coalesce): the sustained rate and whether a backlog grows
        halves = []
        burst = 5 * deltas
        for half in range(2):
            start = time.perf_counter()
            for n in range(burst):
                follow(chat, conv.apply(delta_event("live-burst", burst * half + n)))
                if n % 10 == 0:
                    await asyncio.sleep(0)
            await pilot.pause()
            halves.append(time.perf_counter() - start)
        rate = (2 * burst) / sum(halves)
        return per_delta, per_delta_wall, rate, halves[1] / halves[0]


async def rewind_paint(messages: int, repeat: int) -> float:
    """Optimistic rewind of the last turn: truncate and paint (median of ``repeat``)."""
    times = []
    async with running(messages) as (app, pilot, chat):
        conv = chat.conversation
        for _ in range(repeat):
            target = conv.last_turn_invocation()
            assert target is not None
            start = time.perf_counter()
            token, change = conv.truncate_before(target)
            follow(chat, change)
            await pilot.pause()
            times.append(time.perf_counter() - start)
            follow(chat, conv.rollback(token))
            await pilot.pause()
    return statistics.median(times)


async def scroll_top_check(messages: int) -> bool:
    chat = await offline_chat(messages)
    app = RewindApp(chat=chat)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        transcript = app.chat_screen.transcript
        transcript.scroll_home(animate=False, immediate=True)
        await pilot.pause()
        first = chat.conversation.items[0]
        top = transcript.render_lines(Region(0, 0, transcript.size.width, transcript.scrollable_content_region.height))
        shown = "\n".join(strip.text for strip in top)
        return transcript.scroll_y == 0 and first.text.startswith("message number 1:") and "message number 1:" in shown


async def page_frames(messages: int) -> tuple[list[float], list[float]]:
    """Scroll from the top to the bottom a page at a time, drawing the view after each page, as
    a frame does: (CPU seconds of each frame, wall seconds of each frame). CPU time is this
    thread's (what the app does; another process on the machine does not add to it); a pause of
    the cyclic garbage collector is counted in the frame it falls in."""
    cpu, wall = [], []
    async with running(messages) as (app, pilot, _chat):
        transcript = app.chat_screen.transcript
        transcript.scroll_home(animate=False, immediate=True)
        await pilot.pause()
        region = Region(0, 0, transcript.size.width, transcript.scrollable_content_region.height)
        transcript.render_lines(region)
        while transcript.scroll_y < transcript.max_scroll_y:
            c0, w0 = time.thread_time(), time.perf_counter()
            transcript.action_page(1)
            transcript.render_lines(region)
            cpu.append(time.thread_time() - c0)
            wall.append(time.perf_counter() - w0)
            if len(cpu) % 50 == 0:
                await asyncio.sleep(0)  # let the app breathe, as between frames
        assert transcript.scroll_y == transcript.max_scroll_y
    return cpu, wall


def rss_of(*sizes: int) -> list[int]:
    """The RSS (KiB) of a fresh process running the app with a session of each of ``sizes``
    messages in turn (a measuring run asks for one size a process)."""
    code = (
        f"import asyncio,sys;sys.path.insert(0,{str(HERE)!r});import bench_app as b\n"
        "async def m(messages):\n"
        "    app=b.RewindApp(chat=await b.offline_chat(messages))\n"
        "    async with app.run_test(size=b.SIZE) as p:\n"
        "        await p.pause(); app.chat_screen.transcript.scroll_home(animate=False, immediate=True); "
        "await p.pause()\n"
        "        print(next(l.split()[1] for l in open('/proc/self/status') if l.startswith('VmRSS')))\n"
        f"for n in {list(sizes)!r}: asyncio.run(m(n))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return [int(line) for line in out.stdout.strip().splitlines()[-len(sizes) :]]


def first_paint(argv: list[str], marker: str = "Message the agent", timeout: float = 30.0) -> float:
    """Seconds from starting ``rewindtui ARGV`` in a real terminal (tmux) until its screen shows
    the composer. A terminal emulator matters: in a bare pty nobody answers Textual's terminal
    queries and start-up waits for them to time out."""
    name = f"rewindtui-bench-{os.getpid()}-{time.monotonic_ns()}"
    command = " ".join(shlex.quote(a) for a in [sys.executable, "-m", "rewindtui", *argv])
    start = time.perf_counter()
    subprocess.run([*TMUX, "new-session", "-d", "-s", name, "-x", "120", "-y", "40", command], check=True)
    watch = Watch(TMUX, name)  # the screen read when the app writes to it, no polling process
    try:
        return watch.wait(marker, start, timeout)
    finally:
        watch.close()
        subprocess.run([*TMUX, "send-keys", "-t", name, "C-q"], capture_output=True)
        deadline = time.time() + 10
        while time.time() < deadline:
            alive = subprocess.run([*TMUX, "has-session", "-t", name], capture_output=True).returncode == 0
            if not alive:
                break
            time.sleep(0.05)
        subprocess.run([*TMUX, "kill-session", "-t", name], capture_output=True)


def ratio_row(name: str, big: float, small: float, target: float, unit: str = "ms", scale: float = 1000) -> None:
    ratio = big / small
    report(
        name,
        f"{big * scale:.2f} {unit} vs {small * scale:.2f} {unit} = {ratio:.2f}x",
        f"<= {target:g}x",
        ratio <= target,
    )


async def interleaved(fn: Any, small: int, big: int, rounds: int, *args: Any) -> tuple[list, list]:
    """``fn(size, *args)`` for the small and the large session in turn, ``rounds`` times."""
    a, b = [], []
    for _ in range(rounds):
        a.append(await fn(small, *args))
        b.append(await fn(big, *args))
    return a, b


async def main(quick: bool, big_run: bool) -> int:
    big, small = (50000, 50) if big_run else (300, 50) if quick else (5000, 50)
    rss_size = 50000 if big_run else 300 if quick else 10000
    reps = 1 if quick else 3
    print(f"bench_app: {big:,} vs {small} messages, {reps} interleaved round(s) each, best of them", flush=True)

    o_small, o_big = await interleaved(open_time, small, big, reps)
    ratio_row(f"open {big} messages vs {small} (app start to first frame)", min(o_big), min(o_small), 2)
    s_small, s_big = await interleaved(switch_time, small, big, reps)
    report(
        f"show a loaded session in a running app, {big} vs {small}",
        f"{min(s_big) * 1000:.0f} ms vs {min(s_small) * 1000:.0f} ms",
        "(for reference)",
        True,
    )

    # a smoke run's figures mean nothing: each case once (one run of 20 deltas, a burst of 100 a
    # half, one rewind painted)
    deltas, chunks = (20, 1) if quick else (100, 4)
    st_small, st_big = await interleaved(streaming, small, big, 1 if quick else 2, deltas, chunks)
    pd_small, pd_big = min(r[0] for r in st_small), min(r[0] for r in st_big)
    rate_big, backlog = max(r[2] for r in st_big), min(r[3] for r in st_big)
    ratio_row(f"per-delta UI cost at {big} vs {small} (apply + draw view, CPU)", pd_big, pd_small, 1.2)
    wall_small, wall_big = min(r[1] for r in st_small), min(r[1] for r in st_big)
    report(
        "  the same in wall time",
        f"{wall_big * 1000:.2f} ms vs {wall_small * 1000:.2f} ms = {wall_big / wall_small:.2f}x",
        "(for reference)",
        True,
    )
    report(f"sustained deltas/s at {big} messages (burst)", f"{rate_big:.0f}/s", ">= 1000/s", rate_big >= 1000)
    report("backlog: 2nd half vs 1st half of the burst", f"{backlog:.2f}x", "no growth (<= 1.5x)", backlog <= 1.5)

    r_small, r_big = await interleaved(rewind_paint, small, big, 1, 1 if quick else 15)
    report(f"rewind -> truncated view painted at {big}", f"{r_big[0] * 1000:.1f} ms", "<= 50 ms", r_big[0] <= 0.05)
    ratio_row(f"rewind paint {big} vs {small}", r_big[0], r_small[0], 2)

    top = await scroll_top_check(big)
    report(f"scroll to top of {big} shows the first message", str(top), "True", top)

    if big_run or quick:
        cpu_small, wall_small = await page_frames(small)
        cpu_big, wall_big = await page_frames(big)
        frame = statistics.median(cpu_small)
        worst = max(cpu_big)
        report(
            f"scroll {big} top to bottom by page: slowest of {len(cpu_big)} frames (CPU)",
            f"{worst * 1000:.1f} ms vs {frame * 1000:.1f} ms = {worst / frame:.2f}x",
            "< 2x the 50-msg frame",
            worst < 2 * frame,
        )
        over = sum(1 for t in cpu_big if t >= 2 * frame)
        q = statistics.quantiles(cpu_big, n=100)
        report(
            "  its frames: median / p99 (CPU); frames at 2x or over",
            f"{statistics.median(cpu_big) * 1000:.1f} / {q[98] * 1000:.1f} ms; {over}",
            "(for reference)",
            True,
        )
        report(
            "  the 50-message session's own slowest frame (CPU), for scale",
            f"{max(cpu_small) * 1000:.1f} ms = {max(cpu_small) / frame:.2f}x its median",
            "(for reference)",
            True,
        )
        wq = statistics.quantiles(wall_big, n=100)
        report(
            "  the same in wall time: median / p99 / max (50-msg median)",
            f"{statistics.median(wall_big) * 1000:.1f} / {wq[98] * 1000:.1f} / {max(wall_big) * 1000:.1f} ms "
            f"({statistics.median(wall_small) * 1000:.1f})",
            "(for reference)",
            True,
        )

    # a smoke run (the figures mean nothing) starts one process for both sizes, the empty app first
    empty, full = rss_of(0, rss_size) if quick else (rss_of(0)[0], rss_of(rss_size)[0])
    report(
        f"RSS with {rss_size:,} messages vs empty app",
        f"{full / 1024:.0f} MB vs {empty / 1024:.0f} MB = {full / empty:.2f}x",
        "<= 2x",
        full / empty <= 2,
    )

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
            report(
                "cold start to first paint, server already running",
                f"{running * 1000:.0f} ms",
                "<= 500 ms",
                running <= 0.5,
            )
            embedded = min(first_paint(["--data-dir", str(Path(tmp) / f"embedded{i}")]) for i in range(reps))
            report(
                "cold start to first paint, embedded server", f"{embedded * 1000:.0f} ms", "<= 1500 ms", embedded <= 1.5
            )
    short = [r for r in rows if not r[3]]
    print(f"\n{len(rows) - len(short)} ok, {len(short)} short")
    return 0


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="a smoke run: every case once at a small size")
    parser.add_argument("--big", action="store_true", help="50,000 messages, and scrolling it all by page")
    args = parser.parse_args()
    raise SystemExit(asyncio.run(main(args.quick, args.big)))
