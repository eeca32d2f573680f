"""``rewindtui mcp`` for any agent: every tool takes ``agent`` / ``url`` / ``auth_profile``; the
new tools (tasks, push configs, card validation, undo, restore, rewound branches) against the
embedded server (rewind) and a2a-sdk's own server (``full_servers.full_app``); credentials go only
where they are configured. The tools run in-process (MCPServer.call_tool); one stdio run checks
the same over the real protocol."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "a2a_servers"))

from binding_servers import Recorder, card_json_10, card_only_app
from full_servers import full_app

from asgi_thread import ServeInThread
from kit.servers import embedded_fixture
from rewindtui.a2a.classify import EventKind
from rewindtui.client.a2a_client import A2AClient, ServerConfig
from rewindtui.config.settings import load_settings

pytestmark = [pytest.mark.slow, pytest.mark.timeout(120)]

embedded = embedded_fixture("mcp-any-agent")


@pytest.fixture(scope="module")
def sdk():
    served = ServeInThread(factory=lambda url: full_app(url + "/")).start()
    yield served
    served.stop()


@pytest.fixture
def recorder():
    seen = Recorder()
    served = ServeInThread(factory=lambda url: card_only_app(card_json_10(url + "/"), seen)).start()
    yield served, seen
    served.stop()


def make_server(tmp_path: Path, url: str, config_text: str = "", env: dict[str, str] | None = None) -> Any:
    from rewindtui.cli.mcp_server import Operations
    from rewindtui.cli.mcp_tools import build_server

    config = tmp_path / "config.toml"
    config.write_text(config_text)
    flags = {"url": url, "config": str(config), "data_dir": str(tmp_path / "data")}
    if env and "BASE_TOKEN" in env:
        flags.update(bearer_env="BASE_TOKEN", user_id="alice")
    settings = load_settings(flags, env=env or {})
    ops = Operations(settings)
    return build_server(ops), ops


async def call(server: Any, name: str, **arguments: Any) -> list[dict[str, Any]]:
    result = await server.call_tool(name, arguments)
    assert not result.is_error, result.content[0].text
    structured = result.structured_content
    if isinstance(structured, dict) and "result" in structured:
        return structured["result"]
    return [json.loads(c.text) for c in result.content]


async def fails(server: Any, name: str, **arguments: Any) -> str:
    from mcp.server.mcpserver.exceptions import ToolError

    try:
        result = await server.call_tool(name, arguments)
    except ToolError as exc:
        return str(exc)
    assert result.is_error, result
    return str(result.content[0].text)


async def test_every_tool_says_what_it_changes_and_takes_any_agent(tmp_path, embedded):
    server, ops = make_server(tmp_path, embedded.agent_url)
    try:
        tools = await server.list_tools()
    finally:
        await ops.aclose()
    names = {t.name for t in tools}
    assert {
        "task_get",
        "task_list",
        "task_cancel",
        "task_resubscribe",
        "push_set",
        "push_get",
        "push_list",
        "push_remove",
        "card_validate",
        "undo",
        "restore",
        "rewound_branches",
    } <= names
    for tool in tools:
        assert "Changes" in (tool.description or ""), tool.name
        params = set(tool.input_schema["properties"])
        assert {"agent", "url", "auth_profile"} <= params, tool.name
        assert not {p for p in params if any(w in p for w in ("token", "password", "secret", "bearer"))} - {"token_env"}


async def test_tasks_push_and_card_of_another_agent_by_url(tmp_path, embedded, sdk, monkeypatch):
    monkeypatch.setenv("HOOK_TOKEN", "hook-" + os.urandom(4).hex())
    async with A2AClient(ServerConfig(url=sdk.url + "/")) as client:
        await client.connect()
        events = [e async for e in client.stream(client.build_message("hi there", session_id=None))]
    task = next(e.body for e in events if e.kind is EventKind.TASK)
    server, ops = make_server(tmp_path, embedded.agent_url)
    other = sdk.url + "/"
    try:
        (got,) = await call(server, "task_get", task_id=task["id"], url=other)
        assert got["id"] == task["id"] and got["status"]["state"] == "TASK_STATE_COMPLETED"
        listed = await call(server, "task_list", context_id=task["contextId"], url=other)
        assert [t["id"] for t in listed] == [task["id"]]
        (made,) = await call(
            server,
            "push_set",
            task_id=task["id"],
            push_url="http://127.0.0.1:9/hook",
            token_env="HOOK_TOKEN",
            config_id="c1",
            url=other,
        )
        assert made["id"] == "c1" and made["token"] == "***"
        assert [c["id"] for c in await call(server, "push_list", task_id=task["id"], url=other)] == ["c1"]
        await call(server, "push_remove", task_id=task["id"], config_id="c1", url=other)
        assert await call(server, "push_list", task_id=task["id"], url=other) == []
        (verdict,) = await call(server, "card_validate", url=other)
        assert verdict["valid"] and verdict["usable_versions"] == ["1.0", "0.3"]
        # the started agent is still the default
        (mine,) = await call(server, "agents")
        assert mine["rewind"] and mine["url"].startswith(embedded.agent_url.rstrip("/"))
    finally:
        await ops.aclose()


async def test_undo_restore_and_rewound_branches(tmp_path, embedded):
    server, ops = make_server(tmp_path, embedded.agent_url)
    try:
        first = await call(server, "send", text="one")
        session = first[0]["session"]
        second = await call(server, "send", text="two", session=session)
        turn2 = next(r["invocation_id"] for r in second if r.get("role") == "agent" and r.get("invocation_id"))
        refused = await fails(server, "rewind", session=session, before="2")  # a turn number is not an id
        assert "turn" in refused and "invocation id" in refused
        assert await call(server, "rewound_branches", session=session) == []  # nothing rewound
        await call(server, "rewind", session=session, before=turn2)
        (branch,) = await call(server, "rewound_branches", session=session)
        assert branch["rewind_task"] and [m["text"] for m in branch["messages"] if m["role"] == "user"] == ["two"]
        (undone,) = await call(server, "undo", session=session)
        assert undone["turns_back"] == 1 and undone["said"].startswith("Undid the rewind")
        assert await call(server, "rewound_branches", session=session) == []
        assert "nothing-to-undo" in await fails(server, "undo", session=session)
        await call(server, "rewind", session=session, before=turn2)
        (branch,) = await call(server, "rewound_branches", session=session)
        (restored,) = await call(server, "restore", session=session, rewind_task=branch["rewind_task"])
        assert restored["turns_back"] == 1
        users = [r["text"] for r in await call(server, "history", session=session) if r.get("role") == "user"]
        assert users == ["one", "two"]
    finally:
        await ops.aclose()


async def test_credentials_go_only_where_configured(tmp_path, embedded, recorder, monkeypatch):
    served, seen = recorder
    monkeypatch.setenv("P_TOKEN", "profile-token-123")
    config = f'[auth_profiles.p]\nbearer_env = "P_TOKEN"\norigins = ["{served.url}"]\n'
    server, ops = make_server(tmp_path, embedded.agent_url, config, env={"BASE_TOKEN": "base-token-456"})
    try:
        await call(server, "card", url=served.url + "/")
        plain = [s.headers for s in seen.seen]
        assert plain and all("authorization" not in h and "x-user-id" not in h for h in plain)
        seen.seen.clear()
        await call(server, "card", url=served.url + "/", auth_profile="p")
        assert {s.headers.get("authorization") for s in seen.seen} == {"Bearer profile-token-123"}
        refused = await fails(server, "card", url="http://127.0.0.1:9/", auth_profile="p")
        assert "may not be sent to http://127.0.0.1:9" in refused
        assert "no saved agent 'nope'" in await fails(server, "agents", agent="nope")
        assert "not both" in await fails(server, "agents", agent="x", url=served.url)
    finally:
        await ops.aclose()


async def test_over_stdio_a_second_agent_by_url(tmp_path, embedded, sdk):
    from mcp import ClientSession
    from mcp.client.stdio import StdioServerParameters, stdio_client

    config = tmp_path / "config.toml"
    config.write_text("")
    env = {k: v for k, v in os.environ.items() if not k.startswith("REWINDTUI_")}
    env.update({"REWINDTUI_CONFIG": str(config), "REWINDTUI_DATA_DIR": str(tmp_path / "data")})
    env["PYTHONPATH"] = str(Path(__file__).resolve().parents[2] / "src") + os.pathsep + env.get("PYTHONPATH", "")
    params = StdioServerParameters(
        command=sys.executable, args=["-m", "rewindtui", "mcp", "--url", embedded.agent_url], env=env
    )
    async with stdio_client(params) as (read, write), ClientSession(read, write) as mcp:
        await mcp.initialize()
        result = await mcp.call_tool("agents", {"url": sdk.url + "/"})
        assert not result.is_error, result.content[0].text
        (record,) = result.structured_content["result"]
        assert record["name"] == "full-sdk" and record["rewind"] is False
        result = await mcp.call_tool("agents", {})
        assert result.structured_content["result"][0]["rewind"] is True


@pytest.mark.parametrize(
    ("binding", "dialect"), [("JSONRPC", "1.0"), ("HTTP+JSON", "1.0"), ("GRPC", "1.0"), ("JSONRPC", "0.3")]
)
async def test_task_and_push_tools_on_every_binding_and_dialect(binding, dialect, tmp_path, embedded, monkeypatch):
    """The tools reach a saved agent on the binding it names (its config table), in its dialect."""
    from rewindtui.a2a.dialect import Dialect

    monkeypatch.setenv("HOOK_TOKEN", "hook-" + os.urandom(4).hex())
    served = ServeInThread(factory=lambda url: full_app(url + "/", only_03=dialect == "0.3")).start()
    try:
        url = served.url + "/"
        config = f'[agents.lane]\nurl = "{url}"\nbinding = "{binding}"\ndialect = "{dialect}"\n'
        config_for_client = ServerConfig(
            url=url, binding=binding if dialect == "1.0" else None, dialect=Dialect.parse(dialect)
        )
        async with A2AClient(config_for_client) as client:
            await client.connect()
            events = [e async for e in client.stream(client.build_message("hi lane", session_id=None))]
        task = next(e.body for e in events if e.kind is EventKind.TASK)
        server, ops = make_server(tmp_path, embedded.agent_url, config)
        try:
            (got,) = await call(server, "task_get", task_id=task["id"], agent="lane")
            assert got["id"] == task["id"]
            listed = (
                await call(server, "task_list", context_id=task["contextId"], agent="lane")
                if dialect == "1.0"
                else None
            )
            if listed is not None:
                assert [t["id"] for t in listed] == [task["id"]]
            else:
                assert "A2A 0.3 has no tasks/list" in await fails(
                    server, "task_list", context_id=task["contextId"], agent="lane"
                )
            await call(
                server,
                "push_set",
                task_id=task["id"],
                push_url="http://127.0.0.1:9/h",
                token_env="HOOK_TOKEN",
                config_id="c",
                agent="lane",
            )
            assert [c["id"] for c in await call(server, "push_list", task_id=task["id"], agent="lane")] == ["c"]
            await call(server, "push_remove", task_id=task["id"], config_id="c", agent="lane")
            assert await call(server, "push_list", task_id=task["id"], agent="lane") == []
            (verdict,) = await call(server, "card_validate", agent="lane")
            assert verdict["valid"]
        finally:
            await ops.aclose()
    finally:
        served.stop()
