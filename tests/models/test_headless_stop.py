"""Headless stop against the embedded server that ``send`` starts itself (``--data-dir``, no
``--url``), as a user runs it: Ctrl+C in ``send`` cancels the turn on that server and exits 130;
a model that hangs fails the turn after the stall timeout, with its sentence."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from modelkit import KEY, MODEL
from openai_double import Reply

from rewindtui.server.service.turns import STOP_NOTE

pytestmark = pytest.mark.slow
SRC = Path(__file__).resolve().parents[2] / "src"


def _env(tmp_path: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("REWINDTUI_")}
    (tmp_path / "config.toml").write_text("")
    env.update(
        PYTHONPATH=str(SRC),
        REWINDTUI_CONFIG=str(tmp_path / "config.toml"),
        OPENAI_API_KEY=KEY,
    )
    return env


def _cli(tmp_path: Path, double, *argv: str, **popen) -> subprocess.Popen[str]:
    model = ["--data-dir", str(tmp_path / "data"), "--model", MODEL, "--model-base-url", double.url]
    return subprocess.Popen(
        [sys.executable, "-m", "rewindtui", *argv[:1], *model, *argv[1:]],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=_env(tmp_path),
        **popen,
    )


def _done(proc: subprocess.Popen[str], timeout: float = 120) -> tuple[int, str, str]:
    try:
        out, err = proc.communicate(timeout=timeout)
    finally:
        if proc.poll() is None:
            proc.kill()
    return proc.returncode, out, err


def wait_for(condition, timeout: float = 60.0) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, "timed out waiting"
        time.sleep(0.02)


def test_ctrl_c_in_send_cancels_the_turn_on_its_embedded_server(double, tmp_path):
    double.queue(Reply.hang())
    hangs = double.hangs
    proc = _cli(tmp_path, double, "send", "--model-timeout", "60", "wait for me")
    try:
        assert proc.stdout is not None
        session = proc.stdout.readline().split()[1]  # "session: ID", printed at once
        wait_for(lambda: double.hangs > hangs)
        # to send alone (a terminal signals its server too, which then cancels the turn itself
        # as it shuts down): the cancel must come from send, over HTTP
        proc.send_signal(signal.SIGINT)
    finally:
        rc, out, err = _done(proc)
    assert rc == 130, err
    assert "canceled on the server" in err

    # the server ended the turn canceled (not killed mid-turn, which a restart marks failed)
    rc, out, err = _done(_cli(tmp_path, double, "history", "--json", "--session", session))
    assert rc == 0, err
    records = [json.loads(line) for line in out.splitlines()]
    assert [(r["role"], r["text"]) for r in records] == [("user", "wait for me"), ("system", "This turn was canceled.")]
    # the session takes the next message; the model sees the stopped exchange once, marked
    rc, out, err = _done(_cli(tmp_path, double, "send", "--session", session, "and now?"))
    assert rc == 0, err
    roles = [(m["role"], m["content"]) for m in double.requests[-1]["messages"] if m["role"] != "system"]
    assert roles == [("user", "wait for me"), ("assistant", STOP_NOTE), ("user", "and now?")]


def test_a_hang_fails_the_turn_after_the_stall_timeout(double, tmp_path):
    double.queue(Reply.hang())
    started = time.monotonic()
    rc, out, err = _done(
        _cli(tmp_path, double, "send", "--model-timeout", "60", "--stall-timeout", "1", "are you stuck?")
    )
    assert rc == 1, err
    assert (
        "the turn failed: The model sent nothing for 1 s, so the turn was stopped; try again, or raise stall_timeout."
        in err
    )
    assert out.splitlines()[0].startswith("session: ") and "user: are you stuck?" in out.splitlines()
    assert time.monotonic() - started < 60  # not the model timeout
