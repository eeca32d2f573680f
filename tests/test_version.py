"""The version is written in one place, pyproject.toml; the code reads the installed metadata."""

from __future__ import annotations

import contextlib
import io
import tomllib
from importlib.metadata import version
from pathlib import Path

import rewindtui
from rewindtui.cli.main import main

ROOT = Path(__file__).resolve().parent.parent


def test_version_comes_from_the_installed_metadata_and_pyproject() -> None:
    written = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]["version"]
    assert rewindtui.__version__ == version("rewindtui") == written
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert main(["--version"]) == 0
    assert out.getvalue() == f"rewindtui {written}\n"


def test_no_module_writes_a_version_of_its_own() -> None:
    written = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]["version"]
    found = [
        str(path.relative_to(ROOT))
        for path in (ROOT / "src").rglob("*.py")
        if f'"{written}"' in path.read_text(encoding="utf-8")
    ]
    assert not found, f"the version is written again in {found}: read rewindtui.__version__"
