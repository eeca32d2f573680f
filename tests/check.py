"""Everything CI checks, in one command: ``python tests/check.py [pytest arguments]``.

Lets every process it starts keep the bytecode of what it imports (``keep_bytecode``), compiles
the project's own modules once (``compile_sources``), rewrites the test modules'
asserts once for every worker (``cache_assert_rewrites``, beside the next three), runs ``ruff check src tests
bench``, ``ruff format --check src tests bench`` and ``lint-imports`` (under a second each),
then ``mypy`` and the build of the kagent-rewind add-on's venv beside ``python -m pytest``: the
type check (about half a minute from a clean clone, a second with its
cache) and the build (uv, once per clone) no longer hold up the tests. pytest's output is shown as
it runs; the others' output is printed when they end. Exits non-zero when any part fails (pytest's
exit 5, "no tests collected", is a failure too) and prints each part's time and status.

The README's test command ends with it, so ``.ci/run`` runs exactly this. Arguments go to pytest:
``python tests/check.py -m "not slow" -n 2`` is the fast lane with the same checks.
"""

from __future__ import annotations

import compileall
import concurrent.futures
import os
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import IO

ROOT = Path(__file__).resolve().parent.parent

#: run one after the other before the tests start (they take under a second each)
FIRST: tuple[tuple[str, list[str]], ...] = (
    ("ruff", ["ruff", "check", "src", "tests", "bench"]),
    ("ruff format", ["ruff", "format", "--check", "src", "tests", "bench"]),
    ("lint-imports", ["lint-imports"]),
)
#: the kagent-rewind add-on's venv (tests/kagent_adk): uv installs kagent-adk into it on a clean
#: clone. Built here from the start, beside the first tests, instead of by the first worker that
#: reaches tests/kagent_adk (tests/schedule.py runs those late); the build holds a lock, so a worker
#: that gets there first waits for it, and a build that fails fails those tests too.
BUILD_ADDON_VENV = (
    "import sys; sys.path.insert(0, 'tests'); "
    "from kagent_adk.kagent_proc import ensure_addon_venv; print(ensure_addon_venv())"
)
#: run beside pytest, output kept until it ends
BESIDE: tuple[tuple[str, list[str]], ...] = (("mypy", ["mypy"]),)
#: beside pytest too, but only on a whole run (no pytest arguments: the fast lane does not need it)
BESIDE_WHOLE_RUN: tuple[tuple[str, list[str]], ...] = (("add-on venv", [sys.executable, "-c", BUILD_ADDON_VENV]),)


def _status(code: int) -> str:
    return "ok" if code == 0 else f"FAILED (exit {code})"


def _time_it(name: str, proc: subprocess.Popen[bytes], started: float, ended: dict[str, float]) -> None:
    proc.wait()
    ended[name] = time.perf_counter() - started


def keep_bytecode() -> None:
    """Let this run's processes write the bytecode of what they import, as Python does by default.
    Where ``PYTHONDONTWRITEBYTECODE`` is set (the CI machines here), a module compiled on import
    is never cached: every process the tests start (servers, the app, the commands, kagent-adk
    agents: several hundred) compiled what it imported again. Compiling every installed module
    up front instead (``uv pip install --compile-bytecode``, and the same for the add-on's venv)
    took about 40 s of CPU for 25,000 modules, of which the tests import about a third. Measured
    on clean clones, the commit before and this one right after it: 657 → 609 s of CPU for the
    whole command with process accounting on, 558 → 545 s without (docs/testing.md)."""
    os.environ.pop("PYTHONDONTWRITEBYTECODE", None)


def compile_sources() -> None:
    """Compile the project's own modules once, up front, before the five xdist workers import
    them at the same moment and each compiles them again (0.15 s of CPU a process where nothing
    is cached); the files written here are read by every process the tests start."""
    for folder in ("src", "tests", "bench"):
        compileall.compile_dir(ROOT / folder, quiet=1, workers=0)


def _cache_rewrite(path: Path) -> None:
    from types import SimpleNamespace

    from _pytest.assertion.rewrite import PYC_TAIL, _rewrite_test, _write_pyc, get_cache_dir

    cache = get_cache_dir(path)
    cache.mkdir(exist_ok=True)
    stat, code = _rewrite_test(path, None)  # type: ignore[arg-type]  # no config: pytest's defaults
    _write_pyc(SimpleNamespace(trace=lambda message: None), code, stat, cache / (path.name[:-3] + PYC_TAIL))  # type: ignore[arg-type]


def cache_assert_rewrites(folder: Path = ROOT / "tests") -> None:
    """Rewrite the asserts of the test modules and conftests once, into pytest's own cache
    (``__pycache__/<name>.cpython-3XX-pytest-<version>.pyc``), before the workers start. pytest
    rewrites a test module when it imports it, and the workers collect the suite at the same
    moment: each rewrote the whole of it (about 4 s of CPU each, a third of collecting it; where
    ``PYTHONDONTWRITEBYTECODE`` is set, as for a run not started here, none of it was kept
    either). pytest reads the cache whatever the setting, and checks it against the source's
    size and time. Done with pytest's own functions, which are private: should they change,
    nothing is cached and the run is as it was."""
    files = sorted(p for p in folder.rglob("*.py") if p.name.startswith("test_") or p.name == "conftest.py")
    try:
        with concurrent.futures.ProcessPoolExecutor(os.cpu_count() or 1) as pool:
            list(pool.map(_cache_rewrite, files, chunksize=16))
    except Exception as exc:  # an optimisation only: the tests rewrite what is not cached
        print(f"check: the test modules' rewritten asserts were not cached ({exc!r})", flush=True)


def main(pytest_args: list[str]) -> int:
    started = time.perf_counter()
    results: list[tuple[str, int, float]] = []
    keep_bytecode()
    compile_sources()
    rewrites = threading.Thread(target=cache_assert_rewrites)  # beside the first checks
    rewrites.start()
    for name, argv in FIRST:
        t0 = time.perf_counter()
        print(f"+ {' '.join(argv)}", flush=True)
        code = subprocess.run(argv, cwd=ROOT).returncode
        results.append((name, code, time.perf_counter() - t0))

    rewrites.join()
    beside: list[tuple[str, subprocess.Popen[bytes], IO[bytes], threading.Thread]] = []
    ended: dict[str, float] = {}
    for name, argv in BESIDE + (() if pytest_args else BESIDE_WHOLE_RUN):
        out = tempfile.TemporaryFile()
        print(f"+ {name}: {' '.join(argv)} (beside pytest, its output below when it ends)", flush=True)
        proc = subprocess.Popen(argv, cwd=ROOT, stdout=out, stderr=subprocess.STDOUT)
        waiter = threading.Thread(target=_time_it, args=(name, proc, time.perf_counter(), ended), daemon=True)
        waiter.start()
        beside.append((name, proc, out, waiter))

    # a whole run names its 25 slowest tests: where the next minute of the suite goes
    argv = [sys.executable, "-m", "pytest", *(pytest_args or ["--durations=25"])]
    print(f"+ python -m pytest {' '.join(argv[3:])}".rstrip(), flush=True)
    t0 = time.perf_counter()
    try:
        code = subprocess.run(argv, cwd=ROOT).returncode
        results.append(("pytest", code, time.perf_counter() - t0))
        for name, proc, kept, waiter in beside:
            waiter.join()
            results.append((name, proc.returncode, ended[name]))
            kept.seek(0)
            print(f"--- {name} ---", flush=True)
            sys.stdout.buffer.write(kept.read())
            sys.stdout.flush()
    finally:
        for _, proc, _, _ in beside:
            if proc.poll() is None:
                proc.terminate()
                proc.wait()

    print("--- summary ---")
    for name, code, seconds in results:
        print(f"{name:>13}  {seconds:7.1f} s  {_status(code)}")
    print(f"{'wall':>13}  {time.perf_counter() - started:7.1f} s")
    failed = [name for name, code, _ in results if code != 0]
    if failed:
        print(f"check: FAILED: {', '.join(failed)}")
        return 1
    print("check: everything passed")
    return 0


if __name__ == "__main__":
    os.environ.setdefault("PYTHONUNBUFFERED", "1")
    try:
        sys.exit(main(sys.argv[1:]))
    except KeyboardInterrupt:  # the parts were stopped (the finally above)
        sys.exit(130)
