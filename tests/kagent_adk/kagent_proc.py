"""rewindtui against the real kagent-adk 0.10.4 runtime, with and without the kagent-rewind add-on.

kagent-adk pins A2A 0.3 (a2a-sdk 0.3.x) while rewindtui uses a2a-sdk 1.x, so the agent runs in
its own venv, ``kagent-rewind/.venv`` (git-ignored), built here on first use: ``uv pip install -c
kagent-rewind/constraints.txt -e 'kagent-rewind[test]'`` (kagent-adk 0.10.4 and its dependencies,
at the versions tested; uv, a test dependency, installs them in a fraction of pip's time and CPU).
The agent is the add-on's test echo agent (``kagent-rewind/tests/echo_agent.py``:
``KAgentApp(...).build(local=True)`` with an offline model), started as a process on a loopback
port by ``serve_echo.py``.
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
import subprocess
import sys
import threading
import time
import venv
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]
ADDON = ROOT / "kagent-rewind"
VENV = ADDON / ".venv"
PYTHON = VENV / "bin" / "python"
STAMP = VENV / "kagent-rewind.stamp"
SERVE = ADDON / "tests" / "serve_echo.py"
REWIND_KEY = "kagent_rewind_before_invocation_id"
BUILD_TIMEOUT = 15 * 60


CONSTRAINTS = ADDON / "constraints.txt"


#: how the venv is built; a change here rebuilds venvs built the old way
BUILD_RECIPE = b"uv pip install, no --compile-bytecode"


def _wanted_stamp() -> str:
    """The build is redone when the add-on's requirements change (its code is installed editable)
    or the way it is built does."""
    digest = hashlib.sha256(BUILD_RECIPE)
    for path in (ADDON / "pyproject.toml", CONSTRAINTS):
        digest.update(path.read_bytes())
    return digest.hexdigest()


def _install(python: Path, where: Path, *args: str) -> None:
    """``uv pip install ARGS`` into the venv of ``python`` (no pip in it); a failure fails the test.

    Nothing is compiled at install: ``--compile-bytecode`` took 16-23 s of CPU for the add-on
    venv's 14,000 modules, of which a kagent-adk agent imports 5,400. Under ``tests/check.py``
    each process keeps the bytecode of what it imports (``keep_bytecode`` there), so the first
    agent compiles google-adk and kagent and the next ones read them."""
    from uv import find_uv_bin

    result = subprocess.run(
        [find_uv_bin(), "pip", "install", "-q", "--python", str(python), *args],
        capture_output=True,
        text=True,
        timeout=BUILD_TIMEOUT,
    )
    if result.returncode != 0:
        pytest.fail(f"building {where} failed:\n{result.stdout[-3000:]}\n{result.stderr[-3000:]}")


def python_says(python: Path, code: str) -> str:
    """What ``python -c CODE`` prints, stripped: a question to another venv's interpreter."""
    out = subprocess.run([str(python), "-c", code], capture_output=True, text=True, check=True, timeout=60)
    return out.stdout.strip()


def _purelib(python: Path) -> Path:
    """The site-packages folder of the venv of ``python``."""
    return Path(python_says(python, "import sysconfig; print(sysconfig.get_paths()['purelib'])"))


def ensure_addon_venv() -> Path:
    """``kagent-rewind/.venv`` with the add-on and kagent-adk installed; built once, then reused."""
    with (ADDON / ".venv-build.lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if PYTHON.exists() and STAMP.exists() and STAMP.read_text() == _wanted_stamp():
            return PYTHON
        started = time.monotonic()
        venv.EnvBuilder(clear=True).create(VENV)
        # the tested versions, pinned: a fast, reproducible build (no resolver backtracking)
        _install(PYTHON, VENV, "-c", str(CONSTRAINTS), "-e", f"{ADDON}[test]")
        STAMP.write_text(_wanted_stamp())
        sys.stderr.write(f"\nbuilt {VENV} in {time.monotonic() - started:.0f} s\n")
        return PYTHON


@dataclass
class KagentAgent:
    """A kagent-adk agent process on loopback; ``record`` holds every JSON-RPC request it got."""

    url: str
    record: Path
    process: subprocess.Popen[str]

    def requests(self) -> list[dict[str, Any]]:
        if not self.record.exists():
            return []
        return [json.loads(line) for line in self.record.read_text().splitlines() if line]

    def control_messages(self) -> list[dict[str, Any]]:
        """The rewind control messages the server received."""
        out = []
        for request in self.requests():
            msg = (request.get("params") or {}).get("message") or {}
            if REWIND_KEY in (msg.get("metadata") or {}):
                out.append(msg)
        return out


@contextmanager
def kagent_agent(python: Path, record: Path, *, rewind: bool = True, stream: bool = False) -> Iterator[KagentAgent]:
    args = [str(python), str(SERVE), "--record", str(record)] + ([] if rewind else ["--no-rewind"])
    args += ["--stream"] if stream else []  # kagent-adk's STREAM=1: model text as deltas
    env = dict(os.environ, PYTHONUNBUFFERED="1")
    process = subprocess.Popen(
        args, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, env=env
    )
    lines: list[str] = []
    reader = threading.Thread(target=lambda: lines.append(process.stdout.readline() if process.stdout else ""))
    reader.start()
    reader.join(120)
    try:
        if not lines or not lines[0].startswith("READY "):
            raise RuntimeError(f"the kagent-adk agent did not start (exit {process.poll()}): {lines}")
        yield KagentAgent(lines[0].split()[1], record, process)
    finally:
        if process.stdin:
            process.stdin.close()  # the server stops when its stdin closes
        try:
            process.wait(20)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def ensure_overlay_venv(version: str) -> Path:
    """A venv with kagent-adk/kagent-core/kagent-skills ``version`` forced (``--no-deps``) over the
    add-on venv's packages (reached through ``site.addsitedir``): the add-on next to an older 0.10
    release, as a user who pinned it has it. Built once per version, then reused."""
    base = ensure_addon_venv()
    where = VENV / f"overlay-kagent-adk-{version}"  # inside the add-on venv: git-ignored, rebuilt with it
    python = where / "bin" / "python"
    stamp = where / "overlay.stamp"
    with (ADDON / ".venv-build.lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if python.exists() and stamp.exists() and stamp.read_text() == _wanted_stamp():
            return python
        venv.EnvBuilder(clear=True).create(where)
        site, mine = _purelib(base), _purelib(python)
        (mine / "zz_addon_venv.pth").write_text(f"import site; site.addsitedir({str(site)!r})\n")
        wanted = [f"{name}=={version}" for name in ("kagent-adk", "kagent-core", "kagent-skills")]
        _install(python, where, "--no-deps", *wanted)
        stamp.write_text(_wanted_stamp())
        return python
