"""A question answered from another client while this one shows it: this client's answer is
refused by the server (the turn is completed), and the view follows the server -- the answer,
the tool's result and the reply shown, no question waiting -- with one sentence saying so.
Against the embedded server over loopback (real ADK and SQLite)."""

from __future__ import annotations

import pytest

from rewindtui.chat import AnsweredElsewhere, Chat
from rewindtui.client.a2a_client import A2AClient, ServerConfig
from rewindtui.server import EmbeddedServer


async def chat_on(srv: EmbeddedServer, session_id: str | None = None) -> Chat:
    client = A2AClient(ServerConfig(url=srv.agent_url, api=srv.api_url))
    await client.connect()
    chat = Chat(client)
    await chat.open(session_id)
    return chat


async def test_an_answer_refused_because_another_client_answered_shows_the_servers_session(tmp_path) -> None:
    with EmbeddedServer(tmp_path / "data") as srv:
        shown = await chat_on(srv)
        await shown.send("delete z.txt")
        assert shown.pending_confirmation() is not None
        other = await chat_on(srv, shown.session_id)
        assert other.pending_confirmation() is not None
        await other.confirm(True)  # the other client (as `rewindtui send --approve`) answers
        with pytest.raises(AnsweredElsewhere) as refused:
            await shown.confirm(True)
        message = str(refused.value)
        assert message.startswith("The question was already answered elsewhere") and "Not sent" not in message
        assert "completed" in message
        texts = [item.text for item in shown.conversation.items]
        assert "Approved" in texts, texts
        assert any(t.startswith("Tool delete_file returned: {") for t in texts), texts
        assert shown.pending_confirmation() is None
        for chat in (shown, other):
            await chat.client.aclose()
