"""``rewindtui mcp`` driven by the MCP SDK's own client over stdio (a real subprocess): a coding
agent tries the embedded agent, rewinds it, and tries again; a plain a2a-sdk server without rewind
gets no rewind sent to it."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

import pytest
from mcp import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client

pytestmark = pytest.mark.slow

TOOLS = {"agents", "sessions", "send", "history", "rewind", "redo", "fork", "card", "export"}


def _params(tmp_path: Path, *flags: str, env: dict[str, str] | None = None) -> StdioServerParameters:
    config = tmp_path / "config.toml"
    config.write_text("")
    clean = {k: v for k, v in os.environ.items() if not k.startswith("REWINDTUI_")}
    clean.update({"REWINDTUI_CONFIG": str(config), "REWINDTUI_DATA_DIR": str(tmp_path / "data")})
    clean["PYTHONPATH"] = str(Path(__file__).resolve().parents[2] / "src") + os.pathsep + clean.get("PYTHONPATH", "")
    clean.update(env or {})
    return StdioServerParameters(command=sys.executable, args=["-m", "rewindtui", "mcp", *flags], env=clean)


def _records(result: Any) -> list[dict[str, Any]]:
    assert not result.is_error, result.content[0].text
    structured = result.structured_content
    if isinstance(structured, dict) and "result" in structured:
        return structured["result"]
    return [json.loads(c.text) for c in result.content]


def _error(result: Any) -> dict[str, Any]:
    """The command's JSON error inside the tool error's text ("Error executing tool X: {...}")."""
    assert result.is_error
    text = result.content[0].text
    return json.loads(text[text.index("{") :])["error"]


def _agent_turns(records: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [r for r in records if r.get("role") == "agent" and r.get("invocation_id")]


async def test_a_coding_agent_tries_rewinds_and_tries_again(tmp_path: Path) -> None:
    progress: list[tuple[float, str | None]] = []

    async def on_progress(value: float, total: float | None, message: str | None) -> None:
        progress.append((value, message))

    async with stdio_client(_params(tmp_path)) as (read, write), ClientSession(read, write) as mcp:
        await mcp.initialize()
        names = {tool.name for tool in (await mcp.list_tools()).tools}
        assert TOOLS <= names

        agent = _records(await mcp.call_tool("agents", {}))[0]
        assert agent["rewind"] and agent["fork"]

        first = _records(
            await mcp.call_tool("send", {"text": "remember the word apple"}, progress_callback=on_progress)
        )
        session = first[0]["session"]
        assert any("remember the word apple" in (message or "") for _, message in progress), progress
        second = _records(await mcp.call_tool("send", {"text": "what was the word?", "session": session}))
        assert second[0]["session"] == session
        turn2 = _agent_turns(second)[0]["invocation_id"]

        before = _records(await mcp.call_tool("history", {"session": session}))
        assert [r["text"] for r in before if r["role"] == "user"] == ["remember the word apple", "what was the word?"]

        rewound = _records(await mcp.call_tool("rewind", {"session": session, "before": turn2, "text": "try again"}))
        assert {k: rewound[0][k] for k in ("session", "rewound_before")} == {
            "session": session,
            "rewound_before": turn2,
        }
        assert rewound[0]["undo"].startswith(f'redo(session="{session[:8]}"')  # how to undo it: the MCP tool
        after = _records(await mcp.call_tool("history", {"session": session}))
        assert [r["text"] for r in after if r["role"] == "user"] == ["remember the word apple", "try again"]
        assert turn2 not in {r.get("invocation_id") for r in after}

        # an unknown invocation is refused with the command's own error, nothing sent
        bad = await mcp.call_tool("rewind", {"session": session, "before": "e-nope"})
        error = _error(bad)
        assert "no invocation 'e-nope'" in error["message"]
        assert f'`history(session="{session}")`' in error["message"] and "rewindtui" not in error["message"]

        forked = _records(
            await mcp.call_tool("fork", {"session": session, "before": _agent_turns(after)[-1]["invocation_id"]})
        )
        assert forked[0]["forked_from"] == session and forked[0]["session"] != session
        listed = _records(await mcp.call_tool("sessions", {}))
        assert {session, forked[0]["session"]} <= {r["id"] for r in listed}

        # rewind without new text, then redo: the turn comes back
        last = _agent_turns(after)[-1]["invocation_id"]
        _records(await mcp.call_tool("rewind", {"session": session, "before": last}))
        assert [
            r["text"] for r in _records(await mcp.call_tool("history", {"session": session})) if r["role"] == "user"
        ] == ["remember the word apple"]
        _records(await mcp.call_tool("redo", {"session": session}))
        assert [
            r["text"] for r in _records(await mcp.call_tool("history", {"session": session})) if r["role"] == "user"
        ] == ["remember the word apple", "try again"]

        exported = await mcp.call_tool("export", {"session": session})
        assert not exported.is_error and "try again" in exported.content[0].text
        card = _records(await mcp.call_tool("card", {}))[0]
        assert card["card"]["name"] and card["signature"]["status"] == "not signed"


async def test_no_rewind_is_sent_to_a_server_without_it(tmp_path: Path) -> None:
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "a2a_servers"))
    from a2a_servers import sdk_app  # a2a-sdk's own server classes; no rewind
    from asgi_thread import ServeInThread

    with ServeInThread(factory=sdk_app) as served:
        async with (
            stdio_client(_params(tmp_path, "--url", served.url)) as (read, write),
            ClientSession(read, write) as mcp,
        ):
            await mcp.initialize()
            agent = _records(await mcp.call_tool("agents", {}))[0]
            assert agent["rewind"] is False and agent["why_no_rewind"]
            sent = _records(await mcp.call_tool("send", {"text": "hello"}))
            session = sent[0]["session"]
            turn = _agent_turns(sent)[0]["invocation_id"] if _agent_turns(sent) else "e-any"
            refused = await mcp.call_tool("rewind", {"session": session, "before": turn})
            assert "rewind" in _error(refused)["message"].lower()
            # nothing was rolled back: the turn is still there
            kept = _records(await mcp.call_tool("history", {"session": session}))
            assert [r["text"] for r in kept if r["role"] == "user"] == ["hello"]
