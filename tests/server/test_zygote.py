"""The test zygote (``kit.zygote``) forks servers that behave as ``rewindtui serve`` processes: they
answer, say ``serving on`` first, see the environment asked for (not the zygote's), end with the
status a process of their own would (kill -9, SIGTERM, a refused start, stdin's end); a zygote
that dies is an error at once, its servers gone with it, and one with a thread or an event loop
does not fork."""

from __future__ import annotations

import os
import signal
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from srvkit import A2A, Turn, gone, running

from kit import zygote
from rewindtui.server.shared.paths import AGENT_PATH, API_PATH, SERVER_PATH

pytestmark = [
    pytest.mark.slow,
    pytest.mark.timeout(180),
    pytest.mark.skipif(not zygote.enabled() or sys.platform == "win32", reason="fork and SCM_RIGHTS"),
]

TOKEN = "t" * 40
ZYGOTE_TOKEN = "z" * 40


def _env(**extra: str) -> dict[str, str]:
    return {**{k: v for k, v in os.environ.items() if not k.startswith("REWINDTUI_")}, **extra}


@pytest.fixture(scope="module")
def zyg() -> Iterator[zygote.Zygote]:
    """A zygote of the module's own, started with a token in its environment: a child that saw
    the zygote's environment instead of the one asked for would ask for that token."""
    old = os.environ.get("REWINDTUI_SERVER_TOKEN")
    os.environ["REWINDTUI_SERVER_TOKEN"] = ZYGOTE_TOKEN
    z = zygote.Zygote()
    try:
        first = z.spawn(["--port", "70000"], env=_env(), stdout=zygote.PIPE, stderr=zygote.PIPE, text=True)
    finally:
        if old is None:
            del os.environ["REWINDTUI_SERVER_TOKEN"]
        else:
            os.environ["REWINDTUI_SERVER_TOKEN"] = old
    assert first.wait(60) == 2 and "--port must be between" in first.stderr.read()  # the zygote is up
    first.stdout.close()
    first.stderr.close()
    yield z
    z.stop()


def _serve(z: zygote.Zygote, data: Path, env: dict[str, str], *extra: str, **stdio: int) -> tuple[zygote.Forked, str]:
    child = z.spawn(
        ["--port", "0", "--data-dir", str(data), *extra],
        env=env,
        stdout=zygote.PIPE,
        stderr=zygote.PIPE,
        text=True,
        **stdio,
    )
    assert isinstance(child, zygote.Forked)
    first = child.stdout.readline() if child.stdout else ""
    assert first.startswith("serving on http://127.0.0.1:"), first + (child.stderr.read() if child.stderr else "")
    return child, first.split("serving on ", 1)[1].strip()


def _close(child: zygote.Forked) -> None:
    if child.poll() is None:
        child.kill()
        child.wait(30)
    for pipe in (child.stdin, child.stdout, child.stderr):
        if pipe is not None:
            pipe.close()


def test_a_forked_server_answers_and_kill_9_ends_it(zyg: zygote.Zygote, tmp_path: Path) -> None:
    child, base = _serve(zyg, tmp_path / "d", _env())
    try:
        assert child.pid != os.getpid() and running(child.pid) and child.poll() is None
        with httpx.Client(timeout=60) as http:
            turn = Turn(A2A(http, base + AGENT_PATH, "1.0").stream("hello from a fork", "forked"))
            assert turn.final["status"]["state"] == "completed" and "hello from a fork" in turn.answer
            assert http.get(base + API_PATH + "/sessions").status_code == 200  # no token asked: none in its env
        child.send_signal(signal.SIGKILL)
        assert child.wait(30) == -signal.SIGKILL
        assert gone(child.pid, 5)
        child.kill()  # after its end: nothing (as Popen)
        assert child.returncode == -signal.SIGKILL
    finally:
        _close(child)


def test_the_child_sees_the_environment_asked_for(zyg: zygote.Zygote, tmp_path: Path) -> None:
    child, base = _serve(zyg, tmp_path / "d", _env(REWINDTUI_SERVER_TOKEN=TOKEN))
    try:
        sessions = base + API_PATH + "/sessions"
        assert httpx.get(sessions).status_code == 401
        assert httpx.get(sessions, headers={"Authorization": f"Bearer {ZYGOTE_TOKEN}"}).status_code == 401
        assert httpx.get(sessions, headers={"Authorization": f"Bearer {TOKEN}"}).status_code == 200
    finally:
        _close(child)


SCRIPT = """
import os, sys, tempfile
print(sys.argv[1:], os.getcwd(), sys.path[0], tempfile.gettempdir(), os.environ.get("ASKED"), __name__)
sys.stdout.flush()
sys.exit(int(sys.argv[1]))
"""


def test_a_script_runs_as_python_script_would(zyg: zygote.Zygote, tmp_path: Path) -> None:
    """A benchmark's run (``zygote.run_script``): its argv, its working directory, its folder first
    on ``sys.path``, the temporary directory and environment asked for, run as ``__main__``,
    ending with its own exit status."""
    folder, work, scratch = tmp_path / "bench", tmp_path / "work", tmp_path / "scratch"
    for path in (folder, work, scratch):
        path.mkdir()
    (folder / "script.py").write_text(SCRIPT)
    env = _env(TMPDIR=str(scratch), ASKED="yes")
    child = zyg.spawn(["3", "--quick"], script=folder / "script.py", cwd=work, env=env, stdout=zygote.PIPE, text=True)
    with child:
        out = child.stdout.read()
    assert child.returncode == 3
    assert out.split() == ["['3',", "'--quick']", str(work), str(folder), str(scratch), "yes", "__main__"]


def test_sigterm_stops_it_cleanly_and_its_lines_come_in_order(zyg: zygote.Zygote, tmp_path: Path) -> None:
    child, base = _serve(zyg, tmp_path / "d", _env())
    try:
        assert child.stdout is not None
        assert child.stdout.readline().startswith(f"agent URL: {base}{AGENT_PATH}")
        child.terminate()
        assert child.wait(30) == 0
        rest = child.stdout.read()  # returns: its stdout ended with it (nobody else holds the pipe)
        assert all(line.startswith("gRPC: ") for line in rest.splitlines()), rest  # said once the agent is up
    finally:
        _close(child)


def test_exit_on_stdin_eof_ends_it_when_stdin_closes(zyg: zygote.Zygote, tmp_path: Path) -> None:
    child, base = _serve(zyg, tmp_path / "d", _env(), "--exit-on-stdin-eof", stdin=zygote.PIPE)
    try:
        assert child.stdin is not None and zyg.process is not None
        server = httpx.get(base + SERVER_PATH, timeout=30).json()["data"]
        assert server["pid"] == child.pid and server["clients"] == [zyg.process.pid]  # its parent: the zygote
        assert child.poll() is None
        child.stdin.close()
        assert child.wait(30) == 0
    finally:
        _close(child)


def test_a_dead_zygote_is_an_error_not_a_wait(tmp_path: Path) -> None:
    z = zygote.Zygote(warm=())
    child, _base = _serve(z, tmp_path / "d", _env())
    try:
        assert z.process is not None
        z.process.send_signal(signal.SIGKILL)
        started = time.monotonic()
        with pytest.raises(zygote.ZygoteDied, match="ended before pid"):
            child.wait(60)
        assert time.monotonic() - started < 10
        if sys.platform.startswith("linux"):
            assert gone(child.pid, 10), "a forked server outlived its zygote"
        with pytest.raises(zygote.ZygoteDied, match="exit status: -9"):
            z.spawn(["--port", "0"], env=_env(), stdout=zygote.DEVNULL, stderr=zygote.DEVNULL)
    finally:
        for pipe in (child.stdout, child.stderr):
            if pipe is not None:
                pipe.close()
        z.stop()


@pytest.mark.parametrize(
    ("preload", "refusal"),
    [
        (
            "import threading\n\nthreading.Thread(target=threading.Event().wait, daemon=True).start()\n",
            "runs 2 threads",
        ),
        ("import asyncio\n\nasyncio.set_event_loop(asyncio.new_event_loop())\n", "has an asyncio event loop"),
    ],
    ids=["thread", "event-loop"],
)
def test_a_zygote_with_a_thread_or_an_event_loop_does_not_fork(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, preload: str, refusal: str
) -> None:
    (tmp_path / "unsafe_preload.py").write_text(preload)
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join([str(tmp_path), os.environ.get("PYTHONPATH", "")]))
    z = zygote.Zygote(preload=[*zygote.PRELOAD[:1], "unsafe_preload"], warm=())
    try:
        with pytest.raises(zygote.ZygoteDied, match=refusal):
            z.spawn(["--port", "0"], env=_env(), stdout=zygote.DEVNULL, stderr=zygote.DEVNULL)
    finally:
        z.stop()
