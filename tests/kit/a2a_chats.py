"""Chats on an A2A server the tests run on a thread (a2a-sdk's own classes): a connected client
with its own local store, and the user's texts a chat shows."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from rewindtui.chat import Chat
from rewindtui.client.a2a_client import A2AClient, ServerConfig
from rewindtui.model import ItemKind


def user_texts_of(chat: Chat) -> list[str]:
    return [i.text for i in chat.conversation.items if i.role == "user" and i.kind is ItemKind.MESSAGE]


async def connected_client(served: Any, store: Path) -> A2AClient:
    """A client of ``served`` (a ``ServeInThread``) keeping what it remembers in ``store``."""
    client = A2AClient(ServerConfig(url=served.url + "/", local_store=store, timeout=10))
    await client.connect()
    return client
