"""Two apps on one data dir share one server; a second server on it is refused, clearly."""

from __future__ import annotations

import os
import signal
import stat
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest
from srvkit import A2A, Turn, gone, running

from rewindtui.server import EmbeddedServer
from rewindtui.server.process.instance import DataDirBusy, FileLock, ServerState, read_state, write_state
from rewindtui.server.process.spawn import AttachedServer, ServerStartError, SpawnedServer, spawn_server

POSIX = sys.platform != "win32"


@pytest.mark.slow
def test_second_app_attaches_and_both_turn_without_stale_sessions(tmp_path: Path) -> None:
    data = tmp_path / "d"
    first = spawn_server(data, timeout=120)
    second = spawn_server(data, timeout=120)
    try:
        assert isinstance(first, SpawnedServer) and isinstance(second, AttachedServer)
        assert second.base_url == first.base_url and second.token == first.token
        state = read_state(data)
        assert state is not None and state.pid == first.pid
        assert stat.S_IMODE((data / "server.json").stat().st_mode) == 0o600  # it holds the token
        auth = {"Authorization": f"Bearer {first.token}"}
        with httpx.Client(headers=auth, timeout=30) as a, httpx.Client(headers=auth, timeout=30) as b:
            answers = []
            for client, text in ((a, "from app one"), (b, "from app two"), (a, "one again"), (b, "two again")):
                turn = Turn(A2A(client, first.agent_url, "1.0").stream(text, "shared"))
                assert turn.final["status"]["state"] == "completed"
                answers.append(turn.answer)
            assert "history: ['from app one', 'from app two', 'one again', 'two again']" in answers[-1]
        # the app that started it goes; the server stays for the other
        first.process.stdin.close()
        time.sleep(1.5)
        assert first.running
        assert httpx.get(first.api_url + "/server", headers=auth).json()["data"]["clients"] == [os.getpid()]
        second.stop()  # the last app detaches: the server stops by itself
        assert first.process.wait(30) == 0
        assert read_state(data) is None
    finally:
        second.stop()
        first.stop()


@pytest.mark.slow
@pytest.mark.skipif(not POSIX, reason="uses SIGKILL")
def test_server_lives_while_any_app_lives(tmp_path: Path) -> None:
    """Apps that die without a word are noticed too."""
    data = tmp_path / "d"
    code = (
        "import sys, time; from pathlib import Path; from rewindtui.server.process.spawn import spawn_server; "
        f"s = spawn_server(Path({str(data)!r}), timeout=120); print(type(s).__name__, s.pid, flush=True); "
        "time.sleep(600)"
    )
    apps = []
    try:
        for _ in range(2):
            apps.append(subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True))
            kind, pid = apps[-1].stdout.readline().split()
            assert kind == ("SpawnedServer" if len(apps) == 1 else "AttachedServer")
        server_pid = int(pid)
        apps[0].send_signal(signal.SIGKILL)  # the app that started the server dies
        apps[0].wait(30)
        time.sleep(2.5)
        assert running(server_pid)
        apps[1].send_signal(signal.SIGKILL)  # and the last one
        apps[1].wait(30)
        assert gone(server_pid), "the shared server outlived its apps"
    finally:
        for app in apps:
            if app.poll() is None:
                app.kill()
                app.wait()
            app.stdout.close()


def test_a_second_server_on_the_same_dir_is_refused(tmp_path: Path) -> None:
    data = tmp_path / "d"
    with EmbeddedServer(data) as srv:
        with pytest.raises(DataDirBusy, match=f"already served by pid {os.getpid()} at {srv.agent_url}"):
            EmbeddedServer(data).start()
        proc = subprocess.run(
            [sys.executable, "-m", "rewindtui.server.process.serve", "--data-dir", str(data)],
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert proc.returncode == 1 and "Traceback" not in proc.stderr
        assert f"is already served by pid {os.getpid()} at {srv.agent_url}" in proc.stderr
        assert f"rewindtui --url {srv.agent_url}" in proc.stderr
    # once it stops, the directory is free again
    with EmbeddedServer(data):
        pass


def test_a_holder_that_does_not_answer_is_a_clear_error(tmp_path: Path) -> None:
    data = tmp_path / "d"
    lock = FileLock(data / "server.lock")
    assert lock.acquire(wait=False)
    try:
        write_state(data, ServerState(os.getpid(), "http://127.0.0.1:9", "http://127.0.0.1:9/a/", "x", None, "i"))
        with pytest.raises(ServerStartError, match=f"in use by pid {os.getpid()}.*which does not answer"):
            spawn_server(data, timeout=1)
    finally:
        lock.release()


def test_a_stale_state_file_is_ignored(tmp_path: Path) -> None:
    data = tmp_path / "d"
    data.mkdir()
    write_state(data, ServerState(999_999_999, "http://127.0.0.1:9", "http://127.0.0.1:9/a/", "x", "t", "gone"))
    with EmbeddedServer(data) as srv:  # nobody holds the lock: the old file was left by a dead server
        state = read_state(data)
        assert state is not None and state.base_url == srv.base_url
