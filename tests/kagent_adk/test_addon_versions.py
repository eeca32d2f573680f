"""The add-on's supported kagent-adk range, tested at both ends: 0.10.3 forced under the add-on (it
declares no dependency on kagent-adk, so installing it never changes the agent's), and a refusal in
one sentence beside a2a-sdk 1.x (rewindtui's own venv)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from kagent_adk.kagent_proc import ADDON, REWIND_KEY, ensure_overlay_venv, kagent_agent, python_says
from rewindtui.cli import main as cli


@pytest.mark.slow
def test_kagent_adk_0_10_3_forced_rewinds(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    python = ensure_overlay_venv("0.10.3")
    have = python_says(python, "import importlib.metadata as m; print(m.version('kagent-adk'))")
    assert have == "0.10.3"
    with kagent_agent(python, tmp_path / "requests.jsonl") as agent:

        def run(*args: str) -> list[Any]:
            code = cli.main([*args, "--url", agent.url, "--json"])
            out, err = capsys.readouterr()
            assert code == 0, err
            return [json.loads(line) for line in out.splitlines() if line.startswith("{")]

        first = run("send", "first")
        session = first[0]["session"]
        second = run("send", "--session", session, "second")
        rewound = run("rewind", "--session", session, "--before", second[-1]["invocation_id"])
        assert [r["text"] for r in rewound[1:] if r["role"] == "user"] == ["first"]
        again = run("send", "--session", session, "again")
        assert "history: ['first', 'again']" in again[-1]["text"]
        assert len(agent.control_messages()) == 1 and REWIND_KEY in agent.control_messages()[0]["metadata"]


def test_beside_a2a_sdk_1_the_add_on_refuses_in_one_sentence() -> None:
    """rewindtui's venv has a2a-sdk 1.x and no kagent-adk: ``enable_rewind`` says so before any import fails."""
    code = (
        "from kagent_rewind import enable_rewind, UnsupportedVersion\n"
        "try:\n    enable_rewind(object())\nexcept UnsupportedVersion as e:\n    print(e)\n"
    )
    env = dict(os.environ, PYTHONPATH=str(ADDON / "src"))
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, env=env)
    assert out.returncode == 0, out.stderr
    import importlib.metadata

    a2a = importlib.metadata.version("a2a-sdk")
    assert out.stdout == (
        "kagent-rewind supports kagent-adk >=0.10.3,<0.11 with a2a-sdk >=0.3,<0.4, but this agent has no kagent-adk "
        f"and a2a-sdk {a2a}: rewind is not enabled (the agent's packages were left as they are).\n"
    )
