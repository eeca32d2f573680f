"""Stop and reattach against the embedded server (REST and A2A both there), next to the same
capabilities against the a2a-sdk servers in test_any_a2a.py."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator

import pytest

from rewindtui.chat import Chat
from rewindtui.client.a2a_client import A2AClient, ServerConfig
from rewindtui.model import ItemKind
from rewindtui.server import EmbeddedServer


@pytest.fixture(scope="module")
def slow(tmp_path_factory) -> Iterator[EmbeddedServer]:
    with EmbeddedServer(tmp_path_factory.mktemp("embedded-caps"), demo_delay=0.15) as srv:
        yield srv


def client_for(srv: EmbeddedServer) -> A2AClient:
    return A2AClient(ServerConfig(url=srv.agent_url, api=srv.api_url))


def shown(chat: Chat) -> list[tuple[str, str]]:
    return [(i.role, i.text) for i in chat.conversation.items if i.kind in (ItemKind.MESSAGE, ItemKind.ARTIFACT)]


async def wait_for(condition, timeout: float = 10.0) -> None:
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while not condition():
        assert loop.time() < deadline, "timed out waiting"
        await asyncio.sleep(0.02)


async def test_stop_a_running_turn_on_the_embedded_server(slow):
    async with client_for(slow) as client:
        chat = Chat(client)
        await chat.open(None)
        running = asyncio.ensure_future(chat.send("a long answer to stop"))
        await wait_for(lambda: any(i.role == "agent" for i in chat.conversation.items))
        await chat.stop()
        await running
        assert chat.conversation.turn_state == "canceled" and not chat.sending
        sid = chat.session_id
        live = shown(chat)
    assert sid
    async with client_for(slow) as client:
        again = Chat(client)
        await again.open(sid)
        assert again.conversation.turn_state == "idle"
        tasks = await client.session_tasks(sid)
    assert tasks[-1]["status"]["state"] == "canceled"  # stored as canceled, nothing lost
    assert (
        [t for r, t in shown(again) if r == "user"] == [t for r, t in live if r == "user"] == ["a long answer to stop"]
    )


async def test_reattach_to_a_turn_still_running(slow):
    async with client_for(slow) as a, client_for(slow) as b:
        first = Chat(a)
        await first.open(None)
        await first.send("hello")
        running = asyncio.ensure_future(first.send("a long one to follow"))
        await wait_for(lambda: first.conversation.busy and len(first.conversation.items) > 3)
        second = Chat(b)
        assert first.session_id
        await second.open(first.session_id[:8])
        assert second.conversation.running_task_id is not None
        await second.resume(poll_interval=0.05)
        await running
        assert second.conversation.turn_state in ("completed", "idle")
        assert shown(second)[-1] == shown(first)[-1]
        assert shown(second)[-1][1].startswith("You said: a long one to follow (turn 2;")
