"""``rewindtui send``'s Ctrl+C in the window before the message leaves (the send's freshness check,
``client/freshness.py``): the command exits 130 with its note, and the server never gets the message.

The embedded server runs in this process (uvicorn on a thread), behind a small ASGI wrapper that holds
the freshness request (``GET .../tasks?limit=1``) once armed; ``send`` runs as a user runs it, in a
process of its own, and gets a real SIGINT while that request is held."""

from __future__ import annotations

import asyncio
import signal
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import httpx
import pytest

from asgi_thread import ServeInThread
from clirun import child_env
from rewindtui.server.http.app import create_app

pytestmark = pytest.mark.slow


class HoldFreshness:
    """ASGI wrapper: once :attr:`armed`, a GET whose query is ``limit=1`` waits until :attr:`release`
    (set by the test) and :attr:`held` says it arrived."""

    def __init__(self, app: Any) -> None:
        self.app = app
        self.armed = threading.Event()
        self.held = threading.Event()
        self.release = threading.Event()

    async def __call__(self, scope: dict, receive: Any, send: Any) -> None:
        if scope["type"] == "http" and self.armed.is_set() and b"limit=1" in scope.get("query_string", b""):
            self.held.set()
            while not self.release.is_set():
                await asyncio.sleep(0.01)
        await self.app(scope, receive, send)


def _send(url: str, tmp_path: Path, *argv: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "rewindtui", "send", "--url", url, *argv],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=child_env(tmp_path),
    )


def _tasks(base: str, session: str) -> list[dict]:
    answer = httpx.get(f"{base}/api/sessions/{session}/tasks", timeout=30)
    answer.raise_for_status()
    return answer.json()["data"]


def test_ctrl_c_while_the_freshness_check_is_held_exits_130_and_sends_nothing(tmp_path):
    holder: list[HoldFreshness] = []

    def factory(url: str) -> HoldFreshness:
        holder.append(HoldFreshness(create_app(tmp_path / "server", url)))
        return holder[0]

    with ServeInThread(factory=factory) as served:
        gate = holder[0]
        first = _send(served.url, tmp_path, "the first message")
        out, err = first.communicate(timeout=120)
        assert first.returncode == 0, err
        session = out.split()[1]  # "session: ID"
        before = _tasks(served.url, session)
        assert len(before) == 1

        gate.armed.set()
        proc = _send(served.url, tmp_path, "--session", session, "never sent")
        try:
            assert gate.held.wait(60), "send never made its freshness check"
            proc.send_signal(signal.SIGINT)
            rc = proc.wait(15)  # while the check is still held (send's HTTP timeout is 30 s)
        finally:
            gate.release.set()
            if proc.poll() is None:
                proc.kill()
        out, err = proc.communicate(timeout=30)

        assert rc == 130, err
        assert "stopped: Stopped before it was sent" in err
        assert "the server never got it" in err
        assert "never sent" not in out
        # the server's truth: the same one task, no second turn began
        assert [t["id"] for t in _tasks(served.url, session)] == [t["id"] for t in before]
