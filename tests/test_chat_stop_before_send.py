"""``Chat.stop`` while a send is still being prepared (its freshness check, before the message
leaves) stops the send: it raises ``StoppedBeforeSending`` (a ``TurnRefused``: keep the draft), the
server has nothing of it, the view is unchanged, and nothing of the stop is left for the next send.
The app's side (ctrl+c or Esc right after Enter) is in ``tests/tui/test_stop_before_send.py``."""

from __future__ import annotations

import asyncio

import httpx
import pytest

from kit.fakes import freshness_gate
from kit.pilot import server_tasks, user_texts_of
from kit.servers import embedded_fixture
from rewindtui.chat import Action, Chat, StoppedBeforeSending, TurnRefused
from rewindtui.client.a2a_client import A2AClient, ServerConfig

server = embedded_fixture("chat-stop-before-send")


async def test_stop_while_the_send_is_prepared_sends_nothing(server):
    gate = freshness_gate()
    client = A2AClient(
        ServerConfig(url=server.agent_url, api=server.api_url), http=httpx.AsyncClient(transport=gate, timeout=30)
    )
    await client.connect()
    chat = Chat(client)
    try:
        await chat.send("one")
        before = [(it.role, it.text) for it in chat.conversation.items]
        assert chat.why_not(Action.STOP)  # nothing to stop between turns
        gate.arm()
        sending = asyncio.create_task(chat.send("two"))
        await asyncio.wait_for(gate.held.wait(), 10)
        assert chat.preparing_send and not chat.sending
        assert not chat.why_not(Action.STOP)  # the gate offers the stop in this window
        await chat.stop()
        with pytest.raises(StoppedBeforeSending) as raised:  # at once: the held check is not waited for
            await asyncio.wait_for(sending, 10)
        gate.open()
        assert isinstance(raised.value, TurnRefused)  # a refused send: the caller keeps the draft
        assert "never got it" in str(raised.value)
        assert user_texts_of(await server_tasks(server, chat.session_id)) == ["one"]
        assert [(it.role, it.text) for it in chat.conversation.items] == before
        assert not chat.preparing_send and not chat.sending
        await chat.send("three")  # no stop left over for the next send
        assert user_texts_of(await server_tasks(server, chat.session_id)) == ["one", "three"]
        await chat.stop()  # nothing running: a stop now changes nothing
        await chat.send("four")
        assert user_texts_of(await server_tasks(server, chat.session_id)) == ["one", "three", "four"]
    finally:
        await client.aclose()
