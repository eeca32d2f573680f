"""Launch -> connected: how long the app takes to be usable on its embedded server.

Each run starts ``rewindtui --data-dir DIR`` in a real terminal (tmux, 120x40) and reads the
screen until its status line says ``agent demo`` (the card was read: connected), then types a
message and waits for the first words of the reply (``You said: <the message>``, the demo
model's first streamed piece): time to the first token. Then it quits with ctrl+q and waits until the server is
gone (its lock free) before the next run.

* warm: the same data directory every run (a session in it, files in the OS cache);
* fresh: a new, empty data directory every run;
* each of them also with a core busy (``+busy``): a process spinning a busy loop (one core's
  worth of work, as another program would) from just before the launch until the run ends. The
  quiet and busy runs alternate run by run, so both see the same sitting (``--no-busy``: quiet
  runs only).

    python bench/bench_launch.py                  # this tree, 7 runs of each
    python bench/bench_launch.py --src OTHER/src  # another tree (e.g. a worktree of main)
    python bench/bench_launch.py --runs 5 --json
    python bench/bench_launch.py --baseline OTHER/src   # both trees, runs alternating A B A B ...

Bytecode: the app runs with its modules' bytecode cached, as an installed copy has it (pip compiles
what it installs): the runs write it to a cache directory of their own (``PYTHONPYCACHEPREFIX``,
``PYTHONDONTWRITEBYTECODE`` unset), on the warm-up run before the measured ones, so a machine that
sets ``PYTHONDONTWRITEBYTECODE`` does not time the compiling of every module. ``--quick`` has no
warm-up and no cache of its own: its runs read the bytecode the installation and the checkout
already have (an install compiles site-packages; the README's test command compiles ``src``), as
every other process the tests start does, rather than compiling every module again into a new
cache on its first run.

Medians are printed with every run's figure. This is a benchmark, not a test: a shared machine
moves the figures; compare trees in the same sitting -- ``--baseline`` alternates the two trees
run by run, so a change of load over the sitting weighs on both alike. The load average is
printed before and after.
"""

from __future__ import annotations

import argparse
import fcntl
import json
import os
import shlex
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from terminal_watch import Watch

#: a tmux server of the bench's own, without the user's configuration: a server already running
#: (the user's, another program's) would give the sessions its environment and its options,
#: and was seen giving them 80 columns instead of the 120 asked for (the status line then drops
#: its labels, and the wait for "agent demo" ran out)
TMUX = ("tmux", "-L", f"rewindtui-bench-{os.getpid()}", "-f", os.devnull)

#: the status line once the card was read: "agent demo" where it has room for its labels, " · demo · "
#: where it has not (tui/widgets/status_line.py: a narrower terminal, a long session name)
CONNECTED = ("agent demo", " · demo · ")
COMPOSER = "Message the agent"
REPLY = "You said:"
#: the question ctrl+q asks while a reply is still coming in (tui/leaving.py)
QUIT_ASKED = "Quit anyway?"
SIZE = ("120", "40")


def _server_gone(data_dir: Path, timeout: float = 20.0) -> None:
    """Wait until no server holds ``data_dir`` (its ``server.lock``)."""
    lock = data_dir / "server.lock"
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if not lock.exists():
            return
        with open(lock, "a+") as fh:
            try:
                fcntl.flock(fh, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except OSError:
                time.sleep(0.05)
                continue
            fcntl.flock(fh, fcntl.LOCK_UN)
            return
    raise SystemExit(f"the server on {data_dir} did not stop")


def cpu_seconds(pid: int) -> float:
    """CPU time (user + system) a process has used so far (Linux ``/proc``; nan elsewhere)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    except (OSError, ValueError, IndexError):
        return float("nan")


def _cpu_so_far(name: str, data_dir: Path) -> tuple[float, float]:
    """CPU seconds the app (the pane's process) and its server (``server.json``'s pid) used so far."""
    pane = subprocess.run([*TMUX, "display", "-p", "-t", name, "#{pane_pid}"], capture_output=True, text=True)
    try:
        app = cpu_seconds(int(pane.stdout.strip()))
    except ValueError:
        app = float("nan")
    try:
        server = cpu_seconds(int(json.loads((data_dir / "server.json").read_text())["pid"]))
    except (OSError, ValueError, KeyError):
        server = float("nan")
    return app, server


Run = tuple[float, float, float, float, float]

#: where the runs keep their bytecode (set by :func:`main`; None: as the environment says)
PYCACHE: Path | None = None


def one_run(src: str, data_dir: Path, config: Path, timeout: float = 60.0) -> Run:
    """(composer shown, connected, first token) in seconds from the start, and the CPU seconds the
    app and its server had each used when it was connected (what the load does not change much)."""
    name = f"rewindtui-launch-{os.getpid()}-{time.monotonic_ns()}"
    env = {
        "PYTHONPATH": src,
        "REWINDTUI_CONFIG": str(config),
        "REWINDTUI_DATA_DIR": str(data_dir),
    }
    unset = ""
    if PYCACHE is not None:  # bytecode cached, as an installed copy has it (the module's docstring)
        env["PYTHONPYCACHEPREFIX"] = str(PYCACHE)
        unset = "-u PYTHONDONTWRITEBYTECODE "
    exports = " ".join(f"{k}={shlex.quote(v)}" for k, v in env.items())
    command = f"env {unset}{exports} {shlex.quote(sys.executable)} -m rewindtui --data-dir {shlex.quote(str(data_dir))}"
    start = time.perf_counter()
    subprocess.run([*TMUX, "new-session", "-d", "-s", name, "-x", SIZE[0], "-y", SIZE[1], command], check=True)
    watch = Watch(TMUX, name)
    try:
        composer = watch.wait(COMPOSER, start, timeout)
        connected = watch.wait(CONNECTED, start, timeout)
        app_cpu, server_cpu = _cpu_so_far(name, data_dir)
        word = f"hello{time.monotonic_ns() % 1_000_000}"  # not on the screen yet, even in a warm session
        subprocess.run([*TMUX, "send-keys", "-t", name, "-l", word], check=True)
        subprocess.run([*TMUX, "send-keys", "-t", name, "Enter"], check=True)
        first_token = watch.wait(f"{REPLY} {word}", start, timeout)
        return composer, connected, first_token, app_cpu, server_cpu
    finally:
        subprocess.run([*TMUX, "send-keys", "-t", name, "C-q"], capture_output=True)
        # while the reply still streams, ctrl+q asks first (tui/leaving.py) and ctrl+q again quits:
        # unanswered, the wait below ran its 10 s out and the session was killed
        if watch.shows(QUIT_ASKED, 2.0):
            subprocess.run([*TMUX, "send-keys", "-t", name, "C-q"], capture_output=True)
        watch.close()
        deadline = time.time() + 10
        while time.time() < deadline:
            if subprocess.run([*TMUX, "has-session", "-t", name], capture_output=True).returncode != 0:
                break
            time.sleep(0.05)
        subprocess.run([*TMUX, "kill-session", "-t", name], capture_output=True)
        _server_gone(data_dir)


BUSY_LOOP = "while True: pass"
#: ``--quick``'s busy process: the same start and stop, but it spins a fiftieth of the time (a smoke
#: run inside the test suite must not take a core from the tests running beside it)
LIGHT_BUSY_LOOP = (
    "import time\nwhile True:\n    end = time.monotonic() + 0.002\n"
    "    while time.monotonic() < end: pass\n    time.sleep(0.098)"
)


class BusyCore:
    """A process spinning a busy loop: one core's worth of other work while a run launches
    (``light``: a fiftieth of a core, for ``--quick``)."""

    light = False

    def __enter__(self) -> BusyCore:
        self.process = subprocess.Popen([sys.executable, "-c", LIGHT_BUSY_LOOP if self.light else BUSY_LOOP])
        time.sleep(0.2)  # spinning before the launch starts
        return self

    def __exit__(self, *exc: object) -> None:
        self.process.kill()
        self.process.wait()


def series(
    srcs: list[str],
    runs: int,
    fresh: bool,
    work: Path,
    busy: tuple[bool, ...] = (False, True),
    warmed: dict[str, Path] | None = None,
) -> dict[tuple[str, bool], list[Run]]:
    """``runs`` runs of each tree, quiet and with a core busy, alternating run by run between the
    trees and between quiet and busy. Warm runs start with a run of their own that warms the
    directory, or use ``warmed`` (a directory per tree that a fresh run left: ``--quick``)."""
    config = work / "config.toml"
    config.write_text("")
    warm = warmed or {src: work / f"warm-{n}" for n, src in enumerate(srcs)}
    if not fresh and not warmed:
        for src in srcs:
            one_run(src, warm[src], config)  # the directory exists, holds a session, files are cached
    out: dict[tuple[str, bool], list[Run]] = {(src, b): [] for src in srcs for b in busy}
    for i in range(runs):
        for b in busy:
            for n, src in enumerate(srcs):
                data_dir = work / f"fresh-{n}-{i}-{int(b)}" if fresh else warm[src]
                if b:
                    with BusyCore():
                        out[src, b].append(one_run(src, data_dir, config))
                else:
                    out[src, b].append(one_run(src, data_dir, config))
    return out


def _load() -> str:
    return " ".join(f"{v:.1f}" for v in os.getloadavg())


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--src", default=str(Path(__file__).resolve().parent.parent / "src"))
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--baseline", default=None, metavar="SRC", help="another tree, run alternately with --src")
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--no-busy", action="store_true", help="quiet runs only (no busy core beside them)")
    parser.add_argument(
        "--quick",
        action="store_true",
        help="a smoke run: every case once (the figures mean nothing): one run each, the warm ones on the first "
        "fresh run's directory, the busy core a fiftieth busy, the bytecode already there",
    )
    args = parser.parse_args()
    if args.quick:
        args.runs = 1
        BusyCore.light = True
    srcs = [args.baseline, args.src] if args.baseline else [args.src]
    busy = (False,) if args.no_busy else (False, True)
    results: dict[str, dict[str, dict[str, object]]] = {src: {} for src in srcs}
    load_before = _load()
    global PYCACHE
    with tempfile.TemporaryDirectory(prefix="rewindtui-launch-") as tmp:
        # a smoke run reads the bytecode already there (the module's docstring)
        PYCACHE = None if args.quick else Path(tmp) / "pycache"
        # --quick: the fresh runs first, and the warm ones on the directory the first fresh run left
        # (no warm-up run of their own)
        order = (("fresh", True), ("warm", False)) if args.quick else (("warm", False), ("fresh", True))
        warmed: dict[str, Path] | None = None
        for label, fresh in order:
            work = Path(tmp) / label
            work.mkdir()
            by_src = series(srcs, args.runs, fresh, work, busy, warmed)
            if args.quick and fresh:
                warmed = {src: work / f"fresh-{n}-0-0" for n, src in enumerate(srcs)}
            names = ("composer", "connected", "first_token", "app_cpu_connected", "server_cpu_connected")
            for (src, b), runs in by_src.items():
                results[src][label + ("+busy" if b else "")] = {
                    name: {
                        "median": statistics.median(r[i] for r in runs),
                        "runs": [round(r[i], 3) for r in runs],
                    }
                    for i, name in enumerate(names)
                }
    load_after = _load()
    if args.json:
        print(json.dumps({"results": results, "load": [load_before, load_after]}, indent=2))
        return 0
    print(f"load average before: {load_before}; after: {load_after}")
    for src in srcs:
        print(f"launch of {src} ({args.runs} runs each; seconds from start)")
        for label, figures in results[src].items():
            for name, fig in figures.items():
                assert isinstance(fig, dict)
                runs_text = " ".join(f"{v:.2f}" for v in fig["runs"])
                print(f"  {label + ' ' + name:<26} median {fig['median']:.2f}   runs {runs_text}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
