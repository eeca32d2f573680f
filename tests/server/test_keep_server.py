"""A server kept up after its last app (``--keep-server`` / ``serve --keep-seconds``): the next
launch attaches to it, it stops by itself after its idle window, ``serve --stop`` stops it."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import pytest
from srvkit import gone

from rewindtui.config.connection import spawn_kwargs
from rewindtui.config.settings import load_settings
from rewindtui.server.process.instance import read_state
from rewindtui.server.process.serve import stop_server
from rewindtui.server.process.spawn import AttachedServer, SpawnedServer, spawn_server

pytestmark = pytest.mark.slow  # real server processes


def test_the_next_launch_attaches_and_the_idle_window_ends_it(tmp_path: Path) -> None:
    data = tmp_path / "d"
    first = spawn_server(data, timeout=120, keep=3.0)
    assert isinstance(first, SpawnedServer)
    pid = first.pid
    first.stop()  # the app quits: the server stays for its idle window
    assert not gone(pid, 1.0)
    second = spawn_server(data, timeout=120, keep=3.0)  # the next launch
    assert isinstance(second, AttachedServer) and second.pid == pid
    assert not gone(pid, 4.0)  # an app uses it: no idle window counts down
    second.stop()  # detach: the window starts now
    started = time.monotonic()
    assert gone(pid, 30.0)
    assert time.monotonic() - started >= 2.0  # not at once: after its window
    assert read_state(data) is None


def test_without_keep_it_stops_with_its_last_app(tmp_path: Path) -> None:
    server = spawn_server(tmp_path / "d", timeout=120)
    pid = server.pid
    server.stop()
    assert gone(pid, 0.1)  # stop() waited for it


def test_serve_stop_stops_a_kept_server(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    data = tmp_path / "d"
    server = spawn_server(data, timeout=120, keep=600.0)
    pid = server.pid
    server.stop()
    assert not gone(pid, 0.5)
    assert stop_server(data) == 0
    assert f"stopped the server on {data} (pid {pid})" in capsys.readouterr().out
    assert gone(pid, 10.0) and read_state(data) is None
    assert stop_server(data) == 0  # nothing runs there any more: said, not an error
    assert "no server is running" in capsys.readouterr().out


def test_rewindtui_serve_stop_from_the_command_line(tmp_path: Path) -> None:
    data = tmp_path / "d"
    server = spawn_server(data, timeout=120, keep=600.0)
    pid = server.pid
    server.stop()
    done = subprocess.run(
        [sys.executable, "-m", "rewindtui", "serve", "--stop", "--data-dir", str(data)],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    assert f"(pid {pid})" in done.stdout
    assert gone(pid, 10.0)


def test_the_setting_and_the_flag_reach_the_spawn(tmp_path: Path) -> None:
    config = tmp_path / "config.toml"
    config.write_text("keep_server = 900\n")
    assert spawn_kwargs(load_settings({"config": str(config)}))["keep"] == 900.0
    assert spawn_kwargs(load_settings({"config": str(config), "keep_server": "30"}))["keep"] == 30.0
    (tmp_path / "empty.toml").write_text("")
    assert "keep" not in spawn_kwargs(load_settings({"config": str(tmp_path / "empty.toml")}))
