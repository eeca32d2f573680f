"""The headless commands use the app's turn numbers (model/turn_numbers.py): `history` shows
`· turn N` beside each invocation and `turn` in its records, `rewind --turn N` / `fork --turn N`
take them (1: the first turn, -1: the last), and a number that names no turn is a clear usage
error that changes nothing. Real embedded server over loopback; MCP's rewind takes `turn` too."""

from __future__ import annotations

import pytest
from mcp.server.mcpserver.exceptions import ToolError

from clirun import isolate, runner
from kit.servers import embedded_fixture, settings_in
from rewindtui.cli.mcp_server import Operations
from rewindtui.cli.mcp_tools import build_server

server = embedded_fixture("cli-turn-numbers", scope="module")


@pytest.fixture(autouse=True)
def isolated_settings(tmp_path, monkeypatch):
    return isolate(tmp_path, monkeypatch)


@pytest.fixture
def run(capsys, server):
    return runner(capsys, "--url", server.agent_url, "--api", server.api_url)


def _session(run, *texts: str) -> str:
    session = None
    for text in texts:
        r = run("send", "--json", *(["--session", session] if session else []), text)
        assert r.rc == 0, r.err
        session = r.records()[0]["session"]
    assert session is not None
    return session


def _users(run, session: str) -> list[tuple[str, int]]:
    return [
        (r["text"], r["turn"]) for r in run("history", "--json", "--session", session).records() if r["role"] == "user"
    ]


def test_history_numbers_turns_and_rewind_turn_n_goes_back_before_turn_n(run):
    session = _session(run, "one", "two", "three", "four")
    assert _users(run, session) == [("one", 1), ("two", 2), ("three", 3), ("four", 4)]
    readable = run("history", "--session", session).lines
    headers = [line for line in readable if line.startswith("--- invocation")]
    assert headers[0].endswith(" · turn 1 ---") and headers[-1].endswith(" · turn 4 ---")
    r = run("rewind", "--session", session, "--turn", "2")
    assert r.rc == 0, r.err
    assert _users(run, session) == [("one", 1)]
    r = run("send", "--json", "--session", session, "again")
    assert r.rc == 0 and _users(run, session) == [("one", 1), ("again", 2)]  # the next turn is 2 again
    r = run("fork", "--json", "--session", session, "--turn", "-1")
    assert r.rc == 0, r.err
    fork = r.records()[0]["session"]
    assert _users(run, fork) == [("one", 1)] and _users(run, session) == [("one", 1), ("again", 2)]


def test_a_turn_number_that_names_no_turn_is_refused_and_nothing_changes(run):
    session = _session(run, "alpha", "beta")
    for bad in ("3", "-3", "0", "two"):
        r = run("rewind", "--json", "--session", session, "--turn", bad)
        assert r.rc != 0
        error = r.records()[0]["error"]
        assert error["code"] == "usage" and "turn" in error["message"], error
    assert (
        "turns 1 to 2" in run("rewind", "--json", "--session", session, "--turn", "3").records()[0]["error"]["message"]
    )
    r = run("rewind", "--session", session, "--turn", "1", "--before", "e-x")
    assert r.rc != 0  # one or the other
    assert _users(run, session) == [("alpha", 1), ("beta", 2)]


@pytest.mark.slow
async def test_mcp_rewind_takes_a_turn_number(server, tmp_path):
    ops = Operations(settings_in(tmp_path, url=server.agent_url, api=server.api_url))
    mcp = build_server(ops)
    try:

        def records(result):
            assert not result.is_error, result.content[0].text
            return result.structured_content["result"]

        first = records(await mcp.call_tool("send", {"text": "first"}))
        session = first[0]["session"]
        records(await mcp.call_tool("send", {"text": "second", "session": session}))
        records(await mcp.call_tool("rewind", {"session": session, "turn": -1}))
        history = records(await mcp.call_tool("history", {"session": session}))
        assert [(r["text"], r["turn"]) for r in history if r["role"] == "user"] == [("first", 1)]
        with pytest.raises(ToolError, match="one"):
            await mcp.call_tool("rewind", {"session": session, "turn": 1, "before": "e-x"})
        with pytest.raises(ToolError, match="no turn 5: this session has only turn 1"):
            await mcp.call_tool("rewind", {"session": session, "turn": 5})
    finally:
        await ops.aclose()
