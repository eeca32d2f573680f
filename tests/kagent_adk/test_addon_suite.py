"""The kagent-rewind add-on's own checks, run in its own venv (kagent-adk 0.10.4, A2A 0.3)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from kagent_adk.kagent_proc import ADDON


def run(args: list[str], timeout: float = 600) -> subprocess.CompletedProcess[str]:
    return subprocess.run(args, cwd=ADDON, capture_output=True, text=True, timeout=timeout)


def test_addon_tests_pass_in_their_venv(addon_python: Path) -> None:
    result = run([str(addon_python), "-m", "pytest", "-p", "no:cacheprovider"])
    assert result.returncode == 0, result.stdout[-6000:] + result.stderr[-3000:]
    summary = result.stdout.strip().splitlines()[-1]
    assert " passed" in summary and "failed" not in summary and "error" not in summary, summary


def test_addon_lints_clean() -> None:
    result = run([sys.executable, "-m", "ruff", "check", "."])
    assert result.returncode == 0, result.stdout + result.stderr


def test_addon_type_checks_against_kagent_adk(addon_python: Path) -> None:
    # mypy from this venv, resolving imports (kagent, a2a 0.3, google-adk) in the add-on's venv
    result = run([sys.executable, "-m", "mypy", "--python-executable", str(addon_python)])
    assert result.returncode == 0, result.stdout + result.stderr
