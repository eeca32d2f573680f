"""``rewindtui serve`` says where its gRPC binding listens, and the CLI talks to it there."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

pytestmark = pytest.mark.timeout(120)


def test_serve_prints_its_grpc_address_and_send_uses_it(tmp_path):
    env = {k: v for k, v in os.environ.items() if not k.startswith("REWINDTUI_")}
    from kit import zygote  # a serve process forked from the tests' zygote (google-adk imported once)

    proc = zygote.spawn(
        ["--data-dir", str(tmp_path / "d")],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )
    try:
        lines = [proc.stdout.readline() for _ in range(3)]
        assert lines[0].startswith("serving on http://127.0.0.1:")
        agent_url = lines[1].split("agent URL: ", 1)[1].split()[0]
        assert lines[2].startswith("gRPC: 127.0.0.1:") and "--binding grpc" in lines[2]
        grpc_address = lines[2].split()[1]
        config = tmp_path / "config.toml"
        config.write_text("")
        cli_env = {**env, "REWINDTUI_CONFIG": str(config), "REWINDTUI_DATA_DIR": str(tmp_path / "client")}
        card = subprocess.run(
            [sys.executable, "-m", "rewindtui", "card", "--url", agent_url, "--binding", "grpc"],
            capture_output=True,
            text=True,
            env=cli_env,
            timeout=60,
        )
        assert f"rewindtui uses   GRPC (A2A 1.0) at {grpc_address}" in card.stdout, card.stdout + card.stderr
        sent = subprocess.run(
            [sys.executable, "-m", "rewindtui", "send", "--url", agent_url, "--binding", "grpc", "hello over grpc"],
            capture_output=True,
            text=True,
            env=cli_env,
            timeout=60,
        )
        assert sent.returncode == 0, sent.stderr
        assert "demo: You said: hello over grpc (turn 1" in sent.stdout
    finally:
        proc.terminate()
        proc.wait(30)
        proc.stdout.close()
        proc.stderr.close()


def test_send_over_grpc_on_the_embedded_default_waits_for_the_agent_to_start(tmp_path):
    """The embedded default answers its card before the agent (and its gRPC port) is up, marked
    starting: a client asked for gRPC reads the card again until the agent is up, instead of
    failing with "the agent offers no GRPC interface"."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("REWINDTUI_")}
    config = tmp_path / "config.toml"
    config.write_text("")
    env = {**env, "REWINDTUI_CONFIG": str(config)}
    sent = subprocess.run(
        [sys.executable, "-m", "rewindtui", "send", "--data-dir", str(tmp_path / "d"), "--binding", "grpc", "hi grpc"],
        capture_output=True,
        text=True,
        env=env,
        timeout=100,
    )
    assert sent.returncode == 0, sent.stderr
    assert "demo: You said: hi grpc (turn 1" in sent.stdout
