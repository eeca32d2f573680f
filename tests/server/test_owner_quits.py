"""The app that started the shared server quits while another app still uses it: the server goes
on for that app (it stops by itself after the last one), and the quitting app does not wait for
it -- before, its stop waited 10 s for the server to exit, then terminated it under the other
app's turn."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import pytest
from srvkit import gone, running

from rewindtui.server.process.spawn import SpawnedServer, spawn_server

pytestmark = pytest.mark.slow  # starts a server and a second app process: seconds


def test_the_first_apps_stop_leaves_the_server_to_the_app_still_on_it(tmp_path: Path) -> None:
    data = tmp_path / "d"
    first = spawn_server(data, timeout=120)  # this process: the app that started it
    assert isinstance(first, SpawnedServer)
    code = (
        "import sys, time; from pathlib import Path; from rewindtui.server.process.spawn import spawn_server; "
        f"s = spawn_server(Path({str(data)!r}), timeout=120); print(type(s).__name__, s.pid, flush=True); "
        "time.sleep(600)"
    )
    other = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True)
    try:
        assert other.stdout is not None
        kind, pid = other.stdout.readline().split()
        assert kind == "AttachedServer" and int(pid) == first.pid
        started = time.monotonic()
        first.stop()  # the first app quits
        assert time.monotonic() - started < 5  # it does not wait for a server another app uses
        time.sleep(1.5)
        assert running(first.pid)  # still serving the other app
        other.kill()  # the last app goes: the server stops by itself
        other.wait(30)
        assert gone(first.pid), "the shared server outlived its apps"
    finally:
        if other.poll() is None:
            other.kill()
            other.wait()
        if other.stdout is not None:
            other.stdout.close()
        if first.running:
            first.process.kill()
            first.process.wait()
