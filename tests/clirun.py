"""Running the CLI in-process in tests: its exit status and what it printed."""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path

import pytest


@dataclass
class Result:
    rc: int
    out: str
    err: str

    @property
    def lines(self) -> list[str]:
        return self.out.splitlines()

    def records(self) -> list[dict]:
        return [json.loads(line) for line in self.lines]


def isolate(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """No REWINDTUI_* variable or user config leaks into a CLI run; the config file is an empty
    one (returned) and the data dir (the local sessions store) is the test's own."""
    for name in [n for n in os.environ if n.startswith("REWINDTUI_")]:
        monkeypatch.delenv(name)
    config = tmp_path / "config.toml"
    config.write_text("")
    monkeypatch.setenv("REWINDTUI_CONFIG", str(config))
    monkeypatch.setenv("REWINDTUI_DATA_DIR", str(tmp_path / "client-data"))
    return config


SRC = Path(__file__).resolve().parent.parent / "src"


def child_env(tmp_path: Path, **extra: str) -> dict[str, str]:
    """The environment of a CLI run in a child process: no REWINDTUI_* variable leaks in, this
    tree's sources first, an empty config file and the client's data dir in ``tmp_path``; ``extra``
    on top."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("REWINDTUI_")}
    (tmp_path / "config.toml").write_text("")
    env.update(
        PYTHONPATH=str(SRC),
        REWINDTUI_CONFIG=str(tmp_path / "config.toml"),
        REWINDTUI_DATA_DIR=str(tmp_path / "client-data"),
        **extra,
    )
    return env


def runner(capsys: pytest.CaptureFixture[str], *flags: str):
    """``run(*argv)``: the CLI in-process with ``flags`` appended (e.g. ``--url``), as a Result."""
    from rewindtui.cli import main as cli

    def run(*argv: str) -> Result:
        capsys.readouterr()
        rc = cli.main([*argv, *flags])
        captured = capsys.readouterr()
        return Result(rc, captured.out, captured.err)

    return run
