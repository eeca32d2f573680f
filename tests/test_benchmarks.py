"""Benchmarks that cannot rot: every ``bench/bench_*.py`` runs here in its ``--quick`` mode.

A smoke run: the script starts, runs every case at a small size and prints its lines. Nothing is
timed or asserted on the figures (that is what the benchmarks themselves are for, run by hand);
what fails here is a benchmark that no longer runs -- a renamed entry point, a changed signature --
which is how the 50,000-message figures once stopped being measured without anyone noticing.

The benchmarks use the code's public entry points only: ``test_benchmarks_use_no_private_names``
reads them and fails on a private name (``obj._x``, ``from m import _x``).
"""

from __future__ import annotations

import ast
import os
import re
import shutil
import subprocess
import tempfile
from pathlib import Path
from subprocess import PIPE, STDOUT

import pytest

from kit import zygote

ROOT = Path(__file__).resolve().parent.parent
BENCH = ROOT / "bench"
SCRIPTS = sorted(path.name for path in BENCH.glob("bench_*.py"))

#: what each benchmark's smoke run must print: a fragment of each case's line, so that a case
#: that silently stops running is noticed too (a new benchmark gets its entry here)
CASES: dict[str, tuple[str, ...]] = {
    "bench_app.py": (
        "open 300 messages vs 50",
        "show a loaded session in a running app",
        "per-delta UI cost at 300 vs 50",
        "sustained deltas/s at 300 messages",
        "backlog: 2nd half vs 1st half",
        "rewind paint 300 vs 50",
        "scroll to top of 300 shows the first message",
        "scroll 300 top to bottom by page",
        "RSS with 300 messages vs empty app",
        "cold start to first paint, server already running",
        "cold start to first paint, embedded server",
    ),
    "bench_fork_steps.py": (
        "sqlite: a fork before the last turn",
        "HTTP request, end to end",
        "ADK fork (all below)",
        "  ADK's side alone",
    ),
    "bench_large_message.py": ("turn 1: 1 MB in", "server memory idle", "data directory after 1 turn(s)"),
    "bench_launch.py": (
        "warm composer",
        "warm connected",
        "fresh first_token",
        "warm+busy connected",
        "fresh+busy first_token",
    ),
    "bench_live.py": ("live check, ", "live check vs re-reading", "checks of an idle app"),
    "bench_search.py": (
        "app: a key in the box, hit found, shown",
        "app: that key's own work: search, jump, frame",
        "app: Enter, the hit before, shown",
        "app: a one-letter query (every e counted)",
        "app: ctrl+f, the session indexed (first search)",
        "app: a frame with hits vs without",
        "model: index the session",
        "model: count and find a query's hits",
        "model: follow a streamed delta",
    ),
    "bench_server_big.py": (
        "open over REST, every task",
        "open over REST, newest page",
        "open over A2A ListTasks, first page",
        "open over A2A ListTasks, every page",
        "rewind before the last turn",
        "rewind, whole effective history answered",
        "fork before the last turn",
        "server RSS after opening the session",
    ),
    "bench_server_rewind.py": (
        "A2A 0.3 message/stream (control msg)",
        "A2A 1.0 SendStreamingMessage",
        "REST POST /api/sessions/{id}/rewind",
        "A2A 0.3, restart, rewind first thing",
        "A2A 0.3, restart, open conversation, rewind",
        "A2A 0.3, ADK session cache off",
        "A2A 1.0, cache off + no fast path (before)",
    ),
    "bench_server_rss.py": ("server memory by session size", "turns: opened", "rewind peak", "redo peak", "fork peak"),
    "bench_team.py": (
        "(pgserver)",
        "turns/s, 2 users: 1 replica",
        "rewind at 20 turns (median of 1): SQLite",
        "a turn with the per-session lock",
        "hold + release alone",
        "a turn of many deltas publishing its events",
    ),
    "bench_turn.py": (
        "sqlite: a turn (A2A 1.0 stream, read to the end)",
        "  src      a turn ",
        "  the request's copies alone",
    ),
    "bench_throughput.py": (
        "embedded ",
        "a2a-sdk echo ",
        "throughput: embedded / echo",
        "p99 latency",
        "google-adk's Runner alone",
        "for 0.9x the echo's turns/s",
    ),
    "bench_undo.py": (
        "undo of a rewind of the last turn",
        "redo of that undo",
        "undo of a rewind of all but one turn",
        "redo of that undo (all but one turn)",
    ),
    "bench_wire.py": ("json.loads(bytes)", "app path: parse_json", "merge alone", "cyclic GC runs during the merge"),
    "bench_wire_log.py": (
        "SSE frames, best of 3",
        "  bare ",
        "  inactive ",
        "  active ",
        "targets: recording attached",
    ),
}

#: scripts allowed private names, and why
PRIVATE_ALLOWED = {
    # writes a long session's store rows in bulk with the store's own statements (seconds where real
    # turns take an hour); tests/server/test_big_session.py uses it too, so a rename fails there
    "seed_turns.py",
    # times each step of a fork by wrapping the server's own functions for the run, private ones
    # included (named as strings: a step renamed is no longer found, and its line is not printed)
    "bench_fork_steps.py",
}


def test_every_benchmark_has_its_smoke_cases() -> None:
    assert SCRIPTS, "no bench/bench_*.py found"
    assert sorted(CASES) == SCRIPTS, "each bench/bench_*.py needs its entry in CASES (and only those)"


@pytest.mark.slow
@pytest.mark.timeout(600)
@pytest.mark.parametrize("script", SCRIPTS)
def test_benchmark_runs_every_case_in_its_quick_mode(script: str, tmp_path: Path) -> None:
    if "tmux" in (BENCH / script).read_text():
        # the launch figures are read off a real terminal; a machine without tmux fails here, it
        # does not skip (Debian: apt-get install tmux)
        assert subprocess.run(["tmux", "-V"], capture_output=True).returncode == 0, f"{script} needs tmux"
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, [str(ROOT / "src"), os.environ.get("PYTHONPATH")])))
    # the benchmarks' data directories go here, and must be gone at the end. Not under tmp_path:
    # as root, pgserver runs PostgreSQL as another user, who must traverse the path to its data,
    # and a pytest started meanwhile (the add-on's suite, tests/test_check_rewrites.py) sets
    # pytest's own temporary root back to 0700 (one run's bench_team.py: initdb "Permission
    # denied"). Short, too: PostgreSQL's unix socket path is limited to ~107 bytes.
    scratch = Path(tempfile.mkdtemp(prefix="bench-"))
    env["TMPDIR"] = str(scratch)
    env["XDG_RUNTIME_DIR"] = str(tmp_path)  # pgserver's lock lives in the user's runtime dir (not scratch)
    try:
        # forked from the tests' zygote (kit/zygote.py), which imported the server once: the script
        # still runs from its first line, and its own servers and apps are processes of their own
        quick = ["--quick"]
        done = zygote.run_script(BENCH / script, quick, cwd=tmp_path, env=env, stdout=PIPE, stderr=STDOUT, text=True)
        with done:
            out = done.stdout.read()  # to its end: the script's (the test's timeout bounds a hang)
        left = sorted(path.name for path in scratch.iterdir())
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    assert done.returncode == 0, out[-4000:]
    missing = [case for case in CASES[script] if case not in out]
    assert not missing, f"{script} --quick did not print {missing}:\n{out[-4000:]}"
    # a figure printed as nan is a case that did not run to its end (e.g. a launch that never
    # connected): the line is there, the case is not
    assert not re.search(r"\bnan\b", out), f"{script} --quick printed a figure as nan:\n{out[-4000:]}"
    # a 10,000-turn run's databases are gigabytes: a benchmark removes the scratch it made
    assert not left, f"{script} --quick left {left} in its temporary directory"


def _private_names(source: str) -> list[str]:
    found: list[tuple[int, str]] = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Attribute):
            names = [node.attr]
        elif isinstance(node, ast.ImportFrom):
            names = [alias.name for alias in node.names] + (node.module or "").split(".")
        else:
            continue
        found += [(node.lineno, name) for name in names if name.startswith("_") and not name.endswith("__")]
    return [f"line {line}: {name}" for line, name in sorted(found)]


def test_benchmarks_use_no_private_names() -> None:
    used = {
        path.name: names
        for path in sorted(BENCH.glob("*.py"))
        if path.name not in PRIVATE_ALLOWED and (names := _private_names(path.read_text()))
    }
    assert not used, f"benchmarks reach into private names (use public entry points): {used}"


def test_the_private_name_check_can_fail() -> None:
    assert _private_names("screen._show_conversation()\nfrom m import _x\n") == [
        "line 1: _show_conversation",
        "line 2: _x",
    ]
