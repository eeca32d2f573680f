"""The app's launch: what its start imports, how it parses its command line, and the cyclic
collector around its imports (issue 32: connected under a second with a core busy; the app's CPU
before connected is the floor there). Timing nothing: each test fails when what was cut comes back.
The figures are bench/bench_launch.py's."""

from __future__ import annotations

import argparse
import subprocess
import sys

import pytest

from rewindtui.cli.parser import build_parser, parse_app_args

#: what the app's start (its first frame and its connect) must not import: the headless commands
#: and their parsers' modules, the kagent 1.0 records with protobuf, package metadata, the server
#: (google-adk, a2a-sdk, SQLAlchemy, uvicorn), markdown (the first agent message drawn imports it)
NOT_AT_START = (
    "google.adk",
    "google.protobuf",
    "a2a",
    "sqlalchemy",
    "uvicorn",
    "starlette",
    "rewindtui.server.http.app",
    "rewindtui.server.http.front",
    "rewindtui.server.service",
    "rewindtui.server.storage",
    "rewindtui.kagent1.client",
    "rewindtui.kagent1.records",
    "rewindtui.cli.commands",
    "rewindtui.cli.kagent_cmd",
    "rewindtui.cli.power_commands",
    "rewindtui.cli.schema_cmd",
    "rewindtui.cli.mcp_server",
    "rewindtui.cli.web",
    "importlib.metadata",
    "rich.markdown",
    "markdown_it",
    "pygments",
)

#: the app's start as ``rewindtui --url URL --data-dir DIR`` runs it: its command line, settings,
#: modules and app built, up to ``App.run`` (not run: by then the modules the first frame and the
#: connect use are all imported, ``tui.app`` and its screens included)
START = """
import gc, sys
import textual.app
textual.app.App.run = lambda self, *args, **kwargs: 0
import rewindtui.server.process.spawn  # the embedded server's spawn (not started here: --url)
from rewindtui.cli.main import main
assert main(["--url", "http://127.0.0.1:9/", "--data-dir", sys.argv[1]]) == 0
print(sorted(sys.modules))
print(gc.isenabled(), gc.get_freeze_count())
"""


def test_the_app_start_imports_nothing_the_first_frame_and_connect_do_not_need(tmp_path) -> None:
    out = subprocess.run(
        [sys.executable, "-c", START, str(tmp_path)], capture_output=True, text=True, check=True
    ).stdout.splitlines()
    modules = eval(out[0])  # a list of names printed by repr
    found = [m for m in modules if any(m == n or m.startswith(n + ".") for n in NOT_AT_START)]
    assert found == []
    assert "textual.app" in modules and "rewindtui.tui.screens.chat" in modules  # it did load the app
    enabled, frozen = out[1].split()
    # the collector is on again after the app's imports, and what they made is frozen out of its way
    assert enabled == "True" and int(frozen) > 10_000


@pytest.mark.parametrize(
    "argv",
    [
        [],
        ["--data-dir", "D"],
        ["--data", "D"],  # an abbreviation, as argparse allows
        ["--url", "http://h:1/", "--session", "s1", "--theme", "nord"],
        ["--header", "A: b", "--header", "C: d", "--user-id", "u"],
        ["--keep-server", "5", "--model", "demo", "--wire-log", "w.jsonl"],
        ["--kagent", "http://k", "--agent", "ns/name", "--share", "tok", "--share-writable"],
        ["--bearer-env", "TOKEN", "--config", "c.toml", "--dialect", "1.0"],
        ["--data-dir=D", "--theme=nord"],
    ],
)
def test_the_app_command_line_parses_as_the_whole_parser_does(argv: list[str]) -> None:
    args = parse_app_args(argv)
    assert args is not None  # the app's own options: no command's parser built
    whole, extra = build_parser().parse_known_args(argv)
    assert extra == [] and vars(args) == vars(whole)


@pytest.mark.parametrize(
    "argv",
    [
        ["sessions"],
        ["--url", "http://h:1/", "send", "hi"],
        ["bogus"],
        ["--bogus"],
        ["--data-dir"],  # a missing value: the whole parser says so
        ["--data-dir", "D", "extra"],
        ["-h"],
        ["--help"],
        ["--", "x"],
        ["serve", "--help"],
    ],
)
def test_anything_else_goes_to_the_whole_parser(argv: list[str]) -> None:
    assert parse_app_args(argv) is None


def test_version_is_answered_either_way(capsys) -> None:
    with pytest.raises(SystemExit) as exc:
        parse_app_args(["--version"])
    assert exc.value.code == 0 and capsys.readouterr().out.startswith("rewindtui ")
    assert isinstance(build_parser(), argparse.ArgumentParser)
