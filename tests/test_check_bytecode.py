"""``tests/check.py`` lets the processes it starts keep the bytecode of what they import, where
``PYTHONDONTWRITEBYTECODE`` (set on the CI machines here) would have each compile it again."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from check import keep_bytecode


def test_a_process_started_after_keep_bytecode_writes_what_it_compiled(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PYTHONDONTWRITEBYTECODE", "1")
    (tmp_path / "imported.py").write_text("VALUE = 1\n")

    def import_it() -> list[Path]:
        subprocess.run([sys.executable, "-c", "import imported"], cwd=tmp_path, check=True, timeout=60)
        return list(tmp_path.glob("__pycache__/imported.*.pyc"))

    assert import_it() == []  # compiled, and dropped
    keep_bytecode()
    assert len(import_it()) == 1
