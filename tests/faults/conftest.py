"""The fault suite's fixtures: one real embedded server per module, a fault proxy in front of it,
and Chats that talk to the server through the proxy (or, to read the truth, directly)."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Iterator
from typing import Any

import pytest
from faultkit import view
from proxy import FaultProxy

from rewindtui.chat import Chat
from rewindtui.client.a2a_client import A2AClient, ServerConfig
from rewindtui.server import EmbeddedServer


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[EmbeddedServer]:
    with EmbeddedServer(tmp_path_factory.mktemp("faults")) as srv:
        yield srv


@pytest.fixture(scope="module")
def proxy(server: EmbeddedServer) -> Iterator[FaultProxy]:
    with FaultProxy(server.base_url) as p:
        yield p


@pytest.fixture(scope="module")
def slow_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[EmbeddedServer]:
    """A server whose demo model waits between deltas: a turn stays running a while."""
    with EmbeddedServer(tmp_path_factory.mktemp("faults-slow"), demo_delay=0.25) as srv:
        yield srv


@pytest.fixture(autouse=True)
def _fresh_faults(request: pytest.FixtureRequest) -> Iterator[None]:
    yield
    if "proxy" in request.fixturenames:
        request.getfixturevalue("proxy").clear()


@pytest.fixture
async def make_chat(server: EmbeddedServer, proxy: FaultProxy) -> AsyncIterator[Callable[..., Any]]:
    """``await make_chat()``: a connected Chat through the proxy (``direct=True``: without it)."""
    clients: list[A2AClient] = []

    async def make(
        *, direct: bool = False, timeout: float = 10.0, user: str | None = None, srv: Any = None, **config: Any
    ) -> Chat:
        target = srv or server
        agent, api = target.agent_url, target.api_url
        if not direct:
            assert srv is None, "the proxy fronts the module's server"
            agent, api = proxy.rewrite(agent), proxy.rewrite(api)
        client = A2AClient(ServerConfig(url=agent, api=api, timeout=timeout, user_id=user, **config))
        clients.append(client)
        await client.connect()
        return Chat(client)

    yield make
    for client in clients:
        await client.aclose()


@pytest.fixture
def truth(make_chat: Callable[..., Any]) -> Callable[..., Any]:
    """``await truth(session_id)``: the session's view as the server holds it (read directly)."""

    async def read(
        session_id: str, user: str | None = None, srv: Any = None
    ) -> list[tuple[str, str, str, tuple[str, ...]]]:
        chat = await make_chat(direct=True, user=user, srv=srv)
        await chat.open(session_id)
        return view(chat.conversation)

    return read
