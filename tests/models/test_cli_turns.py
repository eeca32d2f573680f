"""``send`` and ``stop`` against the embedded server on the test model: the sentence of a failed
turn, ``--retry``, ``stop``, Ctrl+C, the session line at once, streamed output, ``--model``."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from modelkit import KEY, MODEL, model_server
from openai_double import BAD_KEY, Reply, user_texts
from srvkit import A2A

from clirun import child_env, isolate, runner

pytestmark = pytest.mark.slow
SRC = Path(__file__).resolve().parents[2] / "src"


@pytest.fixture(scope="module")
def patient(tmp_path_factory, double, _api_key) -> Iterator:
    """A server that waits a minute for the model: a hang stays a running turn until stopped."""
    with model_server(tmp_path_factory.mktemp("patient"), double, timeout=60.0, stall_timeout=60.0) as srv:
        yield srv


@pytest.fixture
def run(server, tmp_path, monkeypatch, capsys):
    isolate(tmp_path, monkeypatch)
    return runner(capsys, "--url", server.agent_url, "--api", server.api_url)


@pytest.fixture
def run_patient(patient, tmp_path, monkeypatch, capsys):
    isolate(tmp_path, monkeypatch)
    return runner(capsys, "--url", patient.agent_url, "--api", patient.api_url)


def wait_for(condition, timeout: float = 30.0) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, "timed out waiting"
        time.sleep(0.02)


def test_a_failed_turn_says_why_and_retry_sends_it_once(run, double):
    first = run("send", "baseline turn")
    assert first.rc == 0, first.err
    session = first.lines[0].removeprefix("session: ")
    double.queue(BAD_KEY)
    failed = run("send", "--session", session, "message during 401 error")
    assert failed.rc == 1
    assert "the turn failed: The model provider refused the API key for openai/test-model (HTTP 401)" in failed.err
    assert "user: message during 401 error" in failed.lines  # the message is kept
    again = run("send", "--session", session, "--retry")
    assert again.rc == 0, again.err
    assert user_texts(double.requests[-1]) == ["baseline turn", "message during 401 error"]
    history = run("history", "--session", session)
    assert [line for line in history.lines if line.startswith("user: ")] == [
        "user: baseline turn",
        "user: message during 401 error",
    ]
    nothing = run("send", "--session", session, "--retry")
    assert nothing.rc == 1 and "nothing to retry" in nothing.err


def test_stop_cancels_the_running_turn(run_patient, patient, double, http):
    a2a = A2A(http, patient.agent_url, "0.3")
    session = "s-stop-" + os.urandom(4).hex()
    double.queue(Reply.hang())
    hangs = double.hangs
    done: list[list[dict]] = []
    worker = threading.Thread(target=lambda: done.append(a2a.stream("hang on", session)))
    worker.start()
    wait_for(lambda: double.hangs > hangs)
    stopped = run_patient("stop", "--session", session)
    assert stopped.rc == 0, stopped.err
    assert stopped.lines[0].endswith(" canceled")
    worker.join(30)
    assert done and done[0][-1]["status"]["state"] == "canceled"
    assert run_patient("send", "--session", session, "after the stop").rc == 0
    nothing = run_patient("stop", "--session", session)
    assert nothing.rc == 1 and "no turn is running" in nothing.err


def _cli(*argv: str, env: dict[str, str]) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "rewindtui", *argv],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )


def _env(tmp_path: Path) -> dict[str, str]:
    return child_env(tmp_path, OPENAI_API_KEY=KEY)


def test_ctrl_c_in_send_cancels_the_turn_on_the_server(run_patient, patient, double, tmp_path):
    double.queue(Reply.hang())
    hangs = double.hangs
    proc = _cli("send", "--url", patient.agent_url, "--api", patient.api_url, "wait for me", env=_env(tmp_path))
    try:
        assert proc.stdout is not None
        first = proc.stdout.readline()  # printed at once, while the model still hangs
        assert first.startswith("session: ")
        session = first.split()[1]
        wait_for(lambda: double.hangs > hangs)
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 130, err
    assert "canceled on the server" in err or "asked to cancel the turn" in err  # the latter: not confirmed in 3 s
    run_patient("stop", "--session", session)  # waits for a cancel still under way (else: nothing running)
    history = run_patient("history", "--json", "--session", session).records()
    assert [r["role"] for r in history][0] == "user"
    # the server ended the turn: the session takes the next message at once
    again = run_patient("send", "--session", session, "and now?")
    assert again.rc == 0, again.err


def test_send_json_streams_deltas_and_the_records(run):
    result = run("send", "--json", "--partial", "stream these words to me please")
    assert result.rc == 0, result.err
    header, *rest = result.records()
    assert set(header) == {"session"}
    deltas = [r["text"] for r in rest if r.get("kind") == "delta"]
    messages = [r for r in rest if r.get("kind") == "message"]
    assert len(deltas) >= 3
    assert [m["role"] for m in messages] == ["user", "agent"]
    assert "".join(deltas) == messages[-1]["text"]
    # without --partial: the records only, as before
    plain = run("send", "--json", "no deltas").records()
    assert all(r.get("kind") != "delta" for r in plain)


def test_readable_send_prints_each_line_once(run):
    result = run("send", "a few words to stream")
    assert result.rc == 0, result.err
    agent = [line for line in result.lines if line.startswith("demo: ")]
    assert agent == ["demo: Echo: a few words to stream (users=['a few words to stream'])"]


def test_the_embedded_server_with_model_flags(double, tmp_path):
    proc = _cli(
        "send",
        "--data-dir",
        str(tmp_path / "data"),
        "--model",
        MODEL,
        "--model-base-url",
        double.url,
        "--model-timeout",
        "20",
        "hello through litellm",
        env=_env(tmp_path),
    )
    out, err = proc.communicate(timeout=120)
    assert proc.returncode == 0, err
    assert "demo: Echo: hello through litellm (users=['hello through litellm'])" in out.splitlines()
    assert double.requests[-1]["model"] == "test-model"
    state = (
        json.loads((tmp_path / "data" / "server.json").read_text())
        if (tmp_path / "data" / "server.json").exists()
        else None
    )
    assert state is None  # the server stopped with the command
