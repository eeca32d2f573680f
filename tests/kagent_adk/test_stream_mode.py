"""Stream mode (``STREAM=1``) on the real kagent-adk 0.10.4: live deltas are shown as they come, and
the deltas it stores in the task's history (``kagent_adk_partial: true``) are not shown again when
the session is read back -- with and without the add-on."""

from __future__ import annotations

from pathlib import Path

import pytest

from kagent_adk.kagent_proc import kagent_agent
from rewindtui.chat import Chat
from rewindtui.client.a2a_client import A2AClient, ServerConfig
from rewindtui.model import ItemKind


def agent_messages(chat: Chat) -> list[str]:
    return [i.text for i in chat.conversation.items if i.kind is ItemKind.MESSAGE and i.role == "agent"]


@pytest.mark.slow
@pytest.mark.parametrize("rewind", [True, False], ids=["with-add-on", "stock"])
async def test_stored_deltas_are_not_shown_again(addon_python: Path, tmp_path: Path, rewind: bool) -> None:
    with kagent_agent(addon_python, tmp_path / "requests.jsonl", rewind=rewind, stream=True) as agent:
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
