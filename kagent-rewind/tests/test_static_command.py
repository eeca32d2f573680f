"""``kagent-rewind-adk static``: kagent's own command for declarative agents (the controller renders
``config.json`` and ``agent-card.json``), with rewind on. No controller runs here, so the agent
answers its card; a rewind reaches the add-on, which cannot read the session and refuses."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import httpx

from echo_agent import agent_card, bind_loopback, message, stream
from kagent_rewind import contract


def test_static_command_serves_a_declarative_agent_with_rewind(tmp_path: Path) -> None:
    config = {"model": {"type": "openai", "model": "gpt-4o"}, "description": "d", "instruction": "i"}
    (tmp_path / "config.json").write_text(json.dumps(config))
    sock = bind_loopback()
    port = sock.getsockname()[1]
    sock.close()
    url = f"http://127.0.0.1:{port}/"
    card = agent_card(url).model_dump(mode="json", by_alias=True, exclude_none=True)
    (tmp_path / "agent-card.json").write_text(json.dumps(card))
    command = shutil.which("kagent-rewind-adk", path=str(Path(sys.executable).parent))
    assert command, "the kagent-rewind-adk script is not installed"
    env = dict(
        os.environ,
        KAGENT_URL="http://127.0.0.1:9",  # no controller there
        KAGENT_NAME="echo-agent",
        KAGENT_NAMESPACE="test",
        OPENAI_API_KEY="unused",
    )
    process = subprocess.Popen(
        [command, "static", "--host", "127.0.0.1", "--port", str(port), "--filepath", str(tmp_path)],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 180  # kagent-adk imports for seconds; more on a busy machine
        served = None
        while time.monotonic() < deadline and process.poll() is None:
            try:
                served = httpx.get(url + ".well-known/agent-card.json").json()
                break
            except httpx.TransportError:
                time.sleep(0.1)
        assert served is not None, f"the agent did not start (exit {process.poll()})"
        assert [e["uri"] for e in served["capabilities"]["extensions"]] == [contract.EXTENSION_URI]
        results = stream(url, message("", "s1", **{contract.REWIND_METADATA_KEY: "e-1"}))
        assert len(results) == 1 and results[0]["status"]["state"] == "failed"
        assert results[0]["metadata"] == {contract.ERROR_CODE_KEY: contract.CODE_INTERNAL}
    finally:
        process.terminate()
        process.wait(20)
