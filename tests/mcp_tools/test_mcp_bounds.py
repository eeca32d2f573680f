"""``rewindtui mcp`` screens what a tool call names (issue 30, item 5), driven by the MCP SDK's own
client over stdio against the embedded server (real subprocesses):

- ``rewind`` with ``before: ""`` used to take the empty string as a prefix of every id and rewind
  the only turn of a one-turn session; empty and blank ids are now refused and nothing changes.
- ``send`` with ``files`` could attach any readable file (an agent's reply can ask for
  ``~/.ssh/id_rsa``); now only files inside ``--mcp-files-dir`` or the client's roots go, a path
  outside (or a symlink inside that points outside) is refused with the reason, nothing sent."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

import pytest
from mcp import ClientSession, types
from mcp.client.stdio import StdioServerParameters, stdio_client

pytestmark = [pytest.mark.slow, pytest.mark.timeout(180)]


def _params(tmp_path: Path, *flags: str) -> StdioServerParameters:
    config = tmp_path / "config.toml"
    config.write_text("")
    clean = {k: v for k, v in os.environ.items() if not k.startswith("REWINDTUI_")}
    clean.update({"REWINDTUI_CONFIG": str(config), "REWINDTUI_DATA_DIR": str(tmp_path / "data")})
    clean["PYTHONPATH"] = str(Path(__file__).resolve().parents[2] / "src") + os.pathsep + clean.get("PYTHONPATH", "")
    return StdioServerParameters(command=sys.executable, args=["-m", "rewindtui", "mcp", *flags], env=clean)


def _records(result: Any) -> list[dict[str, Any]]:
    assert not result.is_error, result.content[0].text
    structured = result.structured_content
    if isinstance(structured, dict) and "result" in structured:
        return structured["result"]
    return [json.loads(c.text) for c in result.content]


def _error_text(result: Any) -> str:
    assert result.is_error, result.content
    return result.content[0].text


def _users(records: list[dict[str, Any]]) -> list[str]:
    return [r["text"] for r in records if r.get("role") == "user"]


async def test_empty_and_blank_ids_are_refused_and_nothing_is_rewound(tmp_path: Path) -> None:
    async with stdio_client(_params(tmp_path)) as (read, write), ClientSession(read, write) as mcp:
        await mcp.initialize()
        sent = _records(await mcp.call_tool("send", {"text": "the only turn"}))
        session = sent[0]["session"]
        for before in ("", "   "):
            text = _error_text(await mcp.call_tool("rewind", {"session": session, "before": before}))
            assert "`before` is empty" in text
            text = _error_text(await mcp.call_tool("fork", {"session": session, "before": before}))
            assert "`before` is empty" in text
        assert "`session` is empty" in _error_text(await mcp.call_tool("rewind", {"session": "", "before": "e-"}))
        assert "`session` is empty" in _error_text(await mcp.call_tool("history", {"session": " "}))
        assert "`rewind_task` is empty" in _error_text(
            await mcp.call_tool("redo", {"session": session, "rewind_task": ""})
        )
        # the one turn is still there, and only one session exists (no fork was made)
        assert _users(_records(await mcp.call_tool("history", {"session": session}))) == ["the only turn"]
        assert [r["id"] for r in _records(await mcp.call_tool("sessions", {}))] == [session]
        # an id that matches nothing is refused by the command (its own message)
        assert "no invocation 'e-nope'" in _error_text(
            await mcp.call_tool("rewind", {"session": session, "before": "e-nope"})
        )


async def test_files_outside_the_allowed_directories_are_refused(tmp_path: Path) -> None:
    allowed = tmp_path / "work"
    allowed.mkdir()
    (allowed / "notes.txt").write_text("fine to send")
    secret_dir = tmp_path / "home" / ".ssh"
    secret_dir.mkdir(parents=True)
    secret = secret_dir / "id_rsa"
    secret.write_text("-----BEGIN OPENSSH PRIVATE KEY-----")
    (allowed / "link").symlink_to(secret)

    # no --mcp-files-dir and a client without roots: no local file may go
    async with stdio_client(_params(tmp_path)) as (read, write), ClientSession(read, write) as mcp:
        await mcp.initialize()
        text = _error_text(await mcp.call_tool("send", {"text": "here", "files": [str(secret)]}))
        assert "no directory is allowed for local files" in text and "--mcp-files-dir" in text
        assert _records(await mcp.call_tool("sessions", {})) == []  # nothing was sent

    async with (
        stdio_client(_params(tmp_path, "--mcp-files-dir", str(allowed))) as (read, write),
        ClientSession(read, write) as mcp,
    ):
        await mcp.initialize()
        for path in (str(secret), str(allowed / "link"), str(allowed / ".." / "home" / ".ssh" / "id_rsa")):
            text = _error_text(await mcp.call_tool("send", {"text": "here", "files": [path]}))
            assert "outside the directories allowed" in text and str(allowed) in text, text
        text = _error_text(await mcp.call_tool("export", {"session": "abc", "output": str(tmp_path / "elsewhere.md")}))
        assert "outside the directories allowed" in text
        assert _records(await mcp.call_tool("sessions", {})) == []  # still nothing sent
        sent = _records(await mcp.call_tool("send", {"text": "here", "files": [str(allowed / "notes.txt")]}))
        user = next(r for r in sent if r.get("role") == "user")
        assert "notes.txt" in json.dumps(user)


async def test_the_clients_roots_allow_their_files(tmp_path: Path) -> None:
    root = tmp_path / "project"
    root.mkdir()
    (root / "a.txt").write_text("in the root")
    outside = tmp_path / "b.txt"
    outside.write_text("not in the root")

    async def roots(context: Any) -> types.ListRootsResult:
        return types.ListRootsResult(roots=[types.Root(uri=root.as_uri(), name="project")])

    async with (
        stdio_client(_params(tmp_path)) as (read, write),
        ClientSession(read, write, list_roots_callback=roots) as mcp,
    ):
        await mcp.initialize()
        text = _error_text(await mcp.call_tool("send", {"text": "x", "files": [str(outside)]}))
        assert "outside the directories allowed" in text and str(root) in text
        sent = _records(await mcp.call_tool("send", {"text": "x", "files": [str(root / "a.txt")]}))
        assert "a.txt" in json.dumps(next(r for r in sent if r.get("role") == "user"))
