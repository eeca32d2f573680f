"""``tests/check.py`` rewrites the test modules' asserts once, into pytest's own cache, and pytest
then reads them from there where bytecode is not written (``PYTHONDONTWRITEBYTECODE``), instead of
each xdist worker rewriting the whole suite again."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from check import cache_assert_rewrites

FAILING = "def test_lists():\n    assert [1, 2] == [1, 3]\n"


def _pytest(folder: Path) -> tuple[str, str]:
    env = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1"}
    log = folder / "debug.log"
    argv = [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-p", "no:xdist", f"--debug={log}"]
    run = subprocess.run(
        [*argv, "-q", str(folder / "test_lists.py")], cwd=folder, env=env, capture_output=True, text=True
    )
    return run.stdout, log.read_text()


def test_pytest_reads_the_cached_rewrite_and_still_explains_the_failure(tmp_path: Path) -> None:
    (tmp_path / "test_lists.py").write_text(FAILING)
    module = tmp_path / "test_lists.py"
    cached = f"found cached rewritten pyc for {module}"
    out, debug = _pytest(tmp_path)
    assert f"rewriting {module!r}" in debug and cached not in debug  # nothing cached: rewritten
    assert not list(tmp_path.glob("__pycache__/*pytest*.pyc"))  # and not written (no bytecode here)

    cache_assert_rewrites(tmp_path)
    assert len(list(tmp_path.glob("__pycache__/test_lists.*pytest*.pyc"))) == 1
    out, debug = _pytest(tmp_path)
    assert cached in debug and f"rewriting {module!r}" not in debug
    assert "At index 1 diff: 2 != 3" in out  # the cached module is the rewritten one


def test_a_changed_module_is_rewritten_again_not_read_stale(tmp_path: Path) -> None:
    (tmp_path / "test_lists.py").write_text(FAILING)
    cache_assert_rewrites(tmp_path)
    (tmp_path / "test_lists.py").write_text(FAILING.replace("[1, 3]", "[1, 2, 4]") + "# longer\n")
    out, debug = _pytest(tmp_path)
    assert f"rewriting {tmp_path / 'test_lists.py'!r}" in debug
    assert "Right contains one more item: 4" in out
