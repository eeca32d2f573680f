"""Stream mode (``STREAM=1``) on the real kagent-adk 0.10.4: live deltas are shown as they come, and
the deltas it stores in the task's history (``kagent_adk_partial: true``) are not shown again when
the session is read back -- with and without the add-on."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from kagent_adk.kagent_proc import KagentAgent, kagent_agent
from rewindtui.chat import Chat
from rewindtui.client.a2a_client import A2AClient, ServerConfig
from rewindtui.model import ItemKind

# One agent process per kind for the module, not one per test (importing kagent.adk is seconds of
# CPU in each): every test opens its own new session on it and reads nothing but that session (the
# echo agent's answers, the tasks and the rewinds are per session; no test reads the request
# record), so a fresh process tells a test nothing a shared one does not. The add-on without
# streaming is the run's own `with_addon` (conftest).
AGENTS = {(True, True): "streaming_with_addon", (False, True): "streaming_stock", (True, False): "with_addon"}


@pytest.fixture(scope="module")
def streaming_with_addon(addon_python: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[KagentAgent]:
    with kagent_agent(addon_python, tmp_path_factory.mktemp("kagent") / "requests.jsonl", stream=True) as agent:
        yield agent


@pytest.fixture(scope="module")
def streaming_stock(addon_python: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[KagentAgent]:
    record = tmp_path_factory.mktemp("kagent") / "requests.jsonl"
    with kagent_agent(addon_python, record, rewind=False, stream=True) as agent:
        yield agent


def agent_for(request: pytest.FixtureRequest, *, rewind: bool = True, stream: bool) -> KagentAgent:
    agent: KagentAgent = request.getfixturevalue(AGENTS[(rewind, stream)])
    return agent


def agent_messages(chat: Chat) -> list[str]:
    return [i.text for i in chat.conversation.items if i.kind is ItemKind.MESSAGE and i.role == "agent"]


@pytest.mark.slow
@pytest.mark.parametrize("rewind", [True, False], ids=["with-add-on", "stock"])
async def test_stored_deltas_are_not_shown_again(request: pytest.FixtureRequest, tmp_path: Path, rewind: bool) -> None:
    agent = agent_for(request, rewind=rewind, stream=True)
    config = ServerConfig(url=agent.url, local_store=tmp_path / "sessions.db")
    async with A2AClient(config) as client:
        chat = Chat(client)
        await chat.open(None)
        await chat.send("hello there")
        await chat.send("weather in Oslo")
        live = agent_messages(chat)
        task_id = chat.conversation.current_task_id
        assert task_id is not None
        stored = await client.rpc("get_task", {"id": task_id})
        body = stored.get("task", stored) if isinstance(stored, dict) else {}
        partial = [m for m in body.get("history") or [] if (m.get("metadata") or {}).get("kagent_adk_partial") is True]
        assert partial, "kagent-adk stored no deltas: the capture's behaviour changed"
    async with A2AClient(config) as client:
        reopened = Chat(client)
        await reopened.open(chat.session_id)
        shown = agent_messages(reopened)
    assert shown == live
    assert len(shown) == len(set(shown))  # no chunk shown as a message of its own
    assert shown[0].startswith("You said: hello there (turn 1")


@pytest.mark.slow
@pytest.mark.parametrize("stream", [True, False], ids=["STREAM=1", "STREAM=0"])
def test_redo_from_a_new_process_after_a_rewind(
    request: pytest.FixtureRequest, tmp_path: Path, monkeypatch, capsys, stream: bool
) -> None:
    """The report, from outside: stock kagent-adk 0.10.4 with the add-on; `rewindtui send` two
    turns, `rewindtui rewind --before` turn 2 (exits 0), then `rewindtui redo` -- each its own
    client, sharing only the data dir (what a new process has) -- brings turn 2 back; a second redo
    has nothing left to undo."""
    import json

    from clirun import isolate
    from rewindtui.cli import main as cli

    isolate(tmp_path, monkeypatch)

    def run(*argv: str) -> tuple[int, str, str]:
        capsys.readouterr()
        rc = cli.main([*argv, "--url", agent.url])
        out, err = capsys.readouterr()
        return rc, out, err

    agent = agent_for(request, stream=stream)
    rc, out, err = run("send", "--json", "hello there")
    assert rc == 0, err
    session = json.loads(out.splitlines()[0])["session"]
    rc, out, err = run("send", "--json", "--session", session, "weather in Oslo")
    assert rc == 0, err
    second = next(r["invocation_id"] for r in map(json.loads, out.splitlines()) if r.get("role") == "user")
    rc, out, err = run("rewind", "--session", session, "--before", second)
    assert rc == 0, err
    rc, out, err = run("history", "--json", "--session", session)
    assert [r["text"] for r in map(json.loads, out.splitlines()) if r.get("role") == "user"] == ["hello there"]
    rc, out, err = run("redo", "--session", session)
    assert rc == 0, err
    rc, out, err = run("history", "--json", "--session", session)
    users = [r["text"] for r in map(json.loads, out.splitlines()) if r.get("role") == "user"]
    assert users == ["hello there", "weather in Oslo"]
    rc, out, err = run("redo", "--session", session)
    assert rc != 0 and "Nothing to redo" in err
    rc, out, err = run("send", "--json", "--session", session, "third")
    agent_says = [r["text"] for r in map(json.loads, out.splitlines()) if r.get("role") == "agent" and r.get("text")]
    assert agent_says[-1].startswith("You said: third (turn 3; history: ['hello there', 'weather in Oslo', 'third']")


@pytest.mark.slow
@pytest.mark.parametrize("stream", [True, False], ids=["STREAM=1", "STREAM=0"])
async def test_redo_in_the_app_after_a_restart(request: pytest.FixtureRequest, tmp_path: Path, stream: bool) -> None:
    """The app rewinds, quits; a new app on the same session undoes the rewind (ctrl+z, the server's
    redo) and turn 2 is back."""
    from kit.apps import app_at
    from kit.pilot import settle, turns

    store = tmp_path / "sessions.db"
    agent = agent_for(request, stream=stream)
    app = app_at(agent.url, local_store=store)
    async with app.run_test(size=(120, 40)) as pilot:
        invocations = await turns(app, pilot, "first", "weather in Oslo")
        session = app.chat.session_id
        await app.chat.rewind(invocations[1])
        await settle(app, pilot)
        assert [i.text for i in app.chat.conversation.items if i.role == "user"] == ["first"]
    again = app_at(agent.url, session, local_store=store)
    async with again.run_test(size=(120, 40)) as pilot:
        await settle(again, pilot)
        assert again.chat.why_not_redo() == ""
        assert again.chat_screen.status.undo  # the status line names the rewind ctrl+z undoes
        await pilot.press("ctrl+z")
        await settle(again, pilot)
        assert [i.text for i in again.chat.conversation.items if i.kind is ItemKind.MESSAGE and i.role == "user"] == [
            "first",
            "weather in Oslo",
        ]
