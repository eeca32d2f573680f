"""SIGTERM and SIGHUP end the app the way ctrl+q does: the terminal is given back (alternate
screen and mouse reporting off) and the embedded server it started exits. The real command in a
real pseudo-terminal, with the real spawned server."""

from __future__ import annotations

import json
import os
import select
import signal
import struct
import sys
import time
from pathlib import Path

import httpx
import pytest

POSIX = os.name == "posix"
if POSIX:
    import fcntl
    import pty
    import termios

LEAVE_ALTERNATE_SCREEN = b"\x1b[?1049l"
MOUSE_OFF = (b"\x1b[?1000l", b"\x1b[?1003l", b"\x1b[?1006l")


def _read(fd: int, timeout: float) -> bytes:
    ready, _, _ = select.select([fd], [], [], timeout)
    if not ready:
        return b""
    try:
        return os.read(fd, 65536)
    except OSError:  # the child closed the terminal
        return b""


def _read_until(fd: int, needle: bytes, screen: bytes = b"", timeout: float = 30) -> bytes:
    """What the app drew, read until ``needle`` shows in it."""
    deadline = time.monotonic() + timeout
    while needle not in screen:
        assert time.monotonic() < deadline, screen[-500:]
        screen += _read(fd, 0.2)
    return screen


def _kill(pid: int, fd: int) -> None:
    """Whatever happened, leave no app running and no terminal open."""
    try:
        os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)
    except (ProcessLookupError, ChildProcessError):
        pass
    os.close(fd)


def _server_pids(data_dir: Path) -> list[int]:
    """The embedded server processes serving ``data_dir`` (by their command line)."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            cmdline = (entry / "cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        if b"rewindtui.server.process.serve" in cmdline and str(data_dir).encode() in cmdline:
            found.append(int(entry.name))
    return found


def _alive(pid: int) -> bool:
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return False
    return "State:\tZ" not in status


#: what each app started by :func:`_start_app` drew until it showed its composer (by pid)
_DRAWN: dict[int, bytes] = {}


def _start_app(tmp_path: Path, **env_extra: str) -> tuple[int, int, list[int]]:
    """The app, as a user runs it, in a new pty; returns once it shows its composer, with the
    embedded server it started (what it drew so far: ``_DRAWN[pid]``)."""
    config = tmp_path / "config.toml"
    config.write_text("")
    data_dir = tmp_path / "data"
    env = dict(
        os.environ, REWINDTUI_DATA_DIR=str(data_dir), REWINDTUI_CONFIG=str(config), TERM="xterm-256color", **env_extra
    )
    pid, fd = pty.fork()
    if pid == 0:  # the child
        os.execve(sys.executable, [sys.executable, "-m", "rewindtui"], env)
    fcntl.ioctl(fd, termios.TIOCSWINSZ, struct.pack("HHHH", 30, 100, 0, 0))
    try:
        screen = _read_until(fd, b"Message the agent", timeout=60)  # the app is up, its server started
        assert b"\x1b[?1049h" in screen  # it did take the alternate screen
        servers = _server_pids(data_dir)
        assert len(servers) == 1
        _DRAWN[pid] = screen
    except BaseException:
        _kill(pid, fd)
        raise
    return pid, fd, servers


def _wait_gone(pid: int, what: str) -> None:
    deadline = time.monotonic() + 20
    while _alive(pid):
        assert time.monotonic() < deadline, what
        time.sleep(0.05)


NEEDS_PTY = pytest.mark.skipif(not POSIX or not Path("/proc").is_dir(), reason="needs a POSIX pty and /proc")


@NEEDS_PTY
@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGHUP])
def test_a_signal_restores_the_terminal_and_stops_the_embedded_server(tmp_path, signum):
    pid, fd, servers = _start_app(tmp_path)
    try:
        os.kill(pid, signum)
        rest = b""
        deadline = time.monotonic() + 30
        while True:
            chunk = _read(fd, 0.2)
            rest += chunk
            done, status = os.waitpid(pid, os.WNOHANG)
            if done:
                rest += _read(fd, 0.1)
                break
            assert time.monotonic() < deadline, "the app did not exit"
        assert os.waitstatus_to_exitcode(status) == 128 + signum
        assert LEAVE_ALTERNATE_SCREEN in rest and all(off in rest for off in MOUSE_OFF)
        _wait_gone(servers[0], "the embedded server outlived the app")
    finally:
        _kill(pid, fd)


@NEEDS_PTY
def test_a_terminal_that_hangs_up_ends_the_app_and_its_server(tmp_path):
    """The terminal window is closed: nothing is left to restore, and nothing may be left running
    (drawing the exit on a dead terminal would block forever)."""
    pid, fd, servers = _start_app(tmp_path)
    os.close(fd)  # the terminal's side goes away: the kernel hangs up the app's terminal
    try:
        deadline = time.monotonic() + 20
        while True:
            done, status = os.waitpid(pid, os.WNOHANG)
            if done:
                break
            assert time.monotonic() < deadline, "the app outlived its terminal"
            time.sleep(0.05)
        assert os.waitstatus_to_exitcode(status) in (128 + signal.SIGHUP, -signal.SIGHUP)
        _wait_gone(servers[0], "the embedded server outlived the app")
    finally:
        try:
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
        except (ProcessLookupError, ChildProcessError):
            pass


@NEEDS_PTY
def test_a_signal_during_a_reply_stores_the_turn_as_canceled(tmp_path):
    """SIGTERM while a reply streams in: the app gives the terminal back, its server stops, and the
    turn is stored canceled with the user's message kept (what the next start shows)."""
    from rewindtui.server import EmbeddedServer

    pid, fd, servers = _start_app(tmp_path, REWINDTUI_MODEL="demo-slow")
    try:
        # connected: the status line shows the turn state (perhaps drawn with the composer already)
        screen = _read_until(fd, b"idle", _DRAWN.pop(pid, b""))
        os.write(fd, b"a question with an answer long enough to be cut")
        screen = _read_until(fd, b"be cut", screen)  # typed (the app draws it)
        os.write(fd, b"\r")
        screen = _read_until(fd, b"streaming in", screen)  # the turn bar says a reply is coming
        # the server runs the turn once its first words show (before that, the send may still be
        # waiting for the agent runtime to load: server/front.py)
        _read_until(fd, b"You said", screen)
        os.kill(pid, signal.SIGTERM)
        deadline = time.monotonic() + 30
        while not os.waitpid(pid, os.WNOHANG)[0]:
            _read(fd, 0.1)
            assert time.monotonic() < deadline, "the app did not exit"
        _wait_gone(servers[0], "the embedded server outlived the app")
    finally:
        _kill(pid, fd)
    with EmbeddedServer(tmp_path / "data") as again, httpx.Client() as http:
        headers = {"Authorization": f"Bearer {again.token}"} if again.token else {}
        (session,) = http.get(again.api_url + "/sessions", headers=headers).json()["data"]
        (task,) = http.get(again.api_url + f"/sessions/{session['id']}/tasks", headers=headers).json()["data"]
    assert task["status"]["state"] == "canceled"
    assert "a question with an answer long enough to be cut" in json.dumps(task["history"][0])
