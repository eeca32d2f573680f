"""Servers and settings for tests: the embedded server as a fixture, settings from flags, a
``Chat`` on a server (real HTTP over loopback, real SQLite)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from rewindtui.chat import Chat
from rewindtui.client.a2a_client import A2AClient, ServerConfig
from rewindtui.config.settings import Settings, load_settings


def embedded_fixture(name: str, *, scope: str = "module", **options: Any):
    """A fixture that runs the embedded server (data in a temporary folder named ``name``) for
    ``scope``: ``server = embedded_fixture("branches")`` in a test module. ``options`` go to
    ``EmbeddedServer`` (``demo_delay=0.1``: a reply stays in flight)."""

    @pytest.fixture(scope=scope)  # type: ignore[call-overload]
    def server(tmp_path_factory):
        from rewindtui.server import EmbeddedServer  # imported only where a server is started

        with EmbeddedServer(tmp_path_factory.mktemp(name), **options) as running:
            yield running

    return server


def settings_in(tmp_path: Path, **flags: object) -> Settings:
    """Settings as the command line gives them (``flags``), with an empty config file and the data
    dir in ``tmp_path`` and no environment."""
    config = tmp_path / "config.toml"
    config.write_text("")
    return load_settings({**flags, "config": str(config), "data_dir": str(tmp_path / "data")}, env={})


async def chat_for(server, session_id: str | None = None) -> Chat:
    """A fresh client and chat on the embedded ``server`` (as after a restart), ``session_id`` open."""
    client = A2AClient(ServerConfig(url=server.agent_url, api=server.api_url))
    await client.connect()
    chat = Chat(client)
    await chat.open(session_id)
    return chat


async def connected_chat(server) -> Chat:
    """A ``Chat`` on the embedded ``server`` whose client read the card, no session opened yet."""
    client = A2AClient(ServerConfig(url=server.agent_url, api=server.api_url, timeout=10))
    await client.connect()
    return Chat(client)


async def session_on_disk(data_dir: Path, *texts: str) -> str:
    """A session holding ``texts`` (one turn each), written by an embedded server on ``data_dir``
    that is stopped again: the store as a later start finds it. Its id."""
    from rewindtui.server import EmbeddedServer

    with EmbeddedServer(data_dir) as srv:
        chat = await connected_chat(srv)
        try:
            for text in texts:
                await chat.send(text)
            assert chat.session_id
            return chat.session_id
        finally:
            await chat.client.aclose()
