"""Approve and reject over MCP: the ``send`` tool with ``approve``/``reject`` and no text answers the
question the agent asks (the embedded server's demo model asks before ``delete_file``). The tool
must pass no text at all when none is given: an empty text is still a text, and the headless
``send`` refuses an answer that comes with one. In-process: the MCP server's own ``call_tool``
over the real headless operations, against the embedded server over loopback."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from mcp.server.mcpserver.exceptions import ToolError

from kit.servers import embedded_fixture, settings_in
from rewindtui.cli.mcp_server import Operations
from rewindtui.cli.mcp_tools import build_server

pytestmark = [pytest.mark.slow, pytest.mark.timeout(120)]

server = embedded_fixture("mcp_answers")


def _records(result: Any) -> list[dict[str, Any]]:
    assert not result.is_error, result.content[0].text
    structured = result.structured_content
    if isinstance(structured, dict) and "result" in structured:
        return structured["result"]
    return [json.loads(c.text) for c in result.content]


def _agent_texts(records: list[dict[str, Any]]) -> list[str]:
    return [r["text"] for r in records if r.get("role") == "agent" and r.get("text")]


@pytest.mark.parametrize("answer", ["approve", "reject"])
async def test_send_with_only_approve_or_reject_answers_the_waiting_question(
    server, tmp_path: Path, answer: str
) -> None:
    ops = Operations(settings_in(tmp_path, url=server.agent_url, api=server.api_url))
    mcp = build_server(ops)
    try:
        asked = _records(await mcp.call_tool("send", {"text": "delete temp.txt"}))
        session = asked[0]["session"]
        assert not any("returned" in text for text in _agent_texts(asked)), "the tool ran before it was approved"

        answered = _records(await mcp.call_tool("send", {"session": session, answer: True}))

        replies = _agent_texts(answered)
        assert replies, answered
        # the demo tool's result says what the answer was (delete_file in server/agent/agent.py)
        expected = "'status': 'deleted'" if answer == "approve" else "'status': 'rejected'"
        assert expected in replies[-1], replies
        # the question is gone: answering again is refused
        with pytest.raises(ToolError, match="no question is waiting"):
            await mcp.call_tool("send", {"session": session, answer: True})
    finally:
        await ops.aclose()
