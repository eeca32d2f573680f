"""connection.connect: the named server or a spawned embedded one; failures are one actionable line."""

from __future__ import annotations

import socket

import httpx
import pytest

from rewindtui.client.a2a_client import REWIND_EXTENSION, ConnectFailed
from rewindtui.config.connection import connect, connection
from rewindtui.config.settings import Settings

CARD = {
    "name": "demo",
    "protocolVersion": "0.3.0",
    "capabilities": {"extensions": [{"uri": REWIND_EXTENSION, "params": {"rewind": ["a2a", "rest"], "fork": True}}]},
}


def free_port() -> int:
    """A loopback port with nothing listening on it."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def mock_http(status: int = 200, body: object = CARD, seen: list | None = None) -> httpx.AsyncClient:
    def handler(request: httpx.Request) -> httpx.Response:
        if seen is not None:
            seen.append(request)
        if isinstance(body, str):
            return httpx.Response(status, text=body)
        return httpx.Response(status, json=body)

    return httpx.AsyncClient(transport=httpx.MockTransport(handler))


class FakeServer:
    def __init__(self, base: str) -> None:
        self.base_url = base
        self.agent_url = base + "/api/a2a/local/demo/"
        self.api_url = base + "/api"
        self.stopped = 0

    def stop(self) -> None:
        self.stopped += 1


async def test_connect_with_injected_transport() -> None:
    seen: list[httpx.Request] = []
    settings = Settings(url="http://agent.test/a2a/", user_id="alice", headers={"Authorization": "Bearer t"})
    conn = await connect(settings, http=mock_http(seen=seen))
    try:
        assert not conn.embedded
        assert conn.capabilities.name == "demo" and conn.capabilities.can_rewind
        assert conn.describe() == "http://agent.test/a2a/"
        request = seen[0]
        assert str(request.url) == "http://agent.test/a2a/.well-known/agent-card.json"
        assert request.headers["Authorization"] == "Bearer t"
        assert request.headers["X-User-Id"] == "alice"
    finally:
        await conn.aclose()
        await conn.aclose()  # closing twice is harmless


async def test_unreachable_url_says_what_and_how_to_fix() -> None:
    url = f"http://127.0.0.1:{free_port()}/api/a2a/x/y/"
    with pytest.raises(ConnectFailed) as info:
        await connect(Settings(url=url))
    message = str(info.value)
    assert "cannot reach the agent at " + url in message
    assert "is the server running? check --url" in message
    assert "\n" not in message


async def test_unreachable_kagent_hint() -> None:
    base = f"http://127.0.0.1:{free_port()}"
    settings = Settings(url=base + "/api/a2a/ns/a/", api=base + "/api", kagent=base, agent="ns/a")
    with pytest.raises(ConnectFailed, match=f"cannot reach the kagent controller at {base} .*check --kagent$"):
        await connect(settings)


@pytest.mark.parametrize(
    "status, body, message",
    [
        (404, {"error": "not found"}, "no A2A agent card at http://agent.test/a2a/"),
        (401, {"error": "no token"}, "give them with --bearer-env VAR"),
        (500, "boom", "answered with an error"),
        (200, "<html>hello</html>", "does not look like an A2A agent"),
    ],
)
async def test_bad_answers(status, body, message) -> None:
    with pytest.raises(ConnectFailed) as info:
        await connect(Settings(url="http://agent.test/a2a/"), http=mock_http(status, body))
    assert message in str(info.value) and "\n" not in str(info.value)


async def test_embedded_server_is_spawned_and_stopped(tmp_path) -> None:
    calls = []
    server = FakeServer("http://embedded.test")

    def spawn(data_dir, model=None):
        calls.append((data_dir, model))
        return server

    settings = Settings(data_dir=tmp_path, model="demo")
    async with connection(settings, spawn=spawn, http=mock_http()) as conn:
        assert calls == [(tmp_path, "demo")]
        assert conn.embedded and conn.url == server.agent_url and conn.settings.api == server.api_url
        assert conn.describe() == "embedded server http://embedded.test"
        assert server.stopped == 0
    assert server.stopped == 1


async def test_embedded_server_that_does_not_answer_is_stopped(tmp_path) -> None:
    server = FakeServer(f"http://127.0.0.1:{free_port()}")
    with pytest.raises(ConnectFailed, match="the embedded server started but does not answer"):
        await connect(Settings(data_dir=tmp_path), spawn=lambda d, model=None: server)
    assert server.stopped == 1


async def test_embedded_server_that_cannot_start(tmp_path) -> None:
    def spawn(data_dir, model=None):
        raise RuntimeError("port\nin use")

    with pytest.raises(ConnectFailed) as info:
        await connect(Settings(data_dir=tmp_path), spawn=spawn)
    message = str(info.value)
    assert f"could not start the embedded server on {tmp_path}: port in use" in message
    assert "--url" in message and "\n" not in message


async def test_app_connector_and_hints(tmp_path) -> None:
    from rewindtui.config.connection import app_connector, connect_hint

    url = f"http://127.0.0.1:{free_port()}/api/a2a/x/y/"
    connector, hint = app_connector(Settings(url=url))
    assert url in hint and "--url" in hint
    for _ in range(2):  # each call is a fresh attempt (the app's retry)
        with pytest.raises(ConnectFailed, match="cannot reach the agent"):
            await connector()
    assert str(tmp_path) in connect_hint(Settings(data_dir=tmp_path))
    kagent = Settings(url="http://c/api/a2a/n/a/", kagent="http://c", agent="n/a")
    assert "agent n/a is deployed" in connect_hint(kagent)


class TokenServer(FakeServer):
    token = "t0ken"


async def test_embedded_server_token_goes_to_its_origin_only(tmp_path) -> None:
    from rewindtui.client.auth import CredentialScope

    seen: list[httpx.Request] = []
    server = TokenServer("http://127.0.0.1:4321")
    async with connection(Settings(data_dir=tmp_path), spawn=lambda d, model=None: server, http=mock_http(seen=seen)):
        assert seen[0].headers["Authorization"] == "Bearer t0ken"
    auth = CredentialScope.for_urls(["http://127.0.0.1:4321/api/a2a/local/demo/"], {"Authorization": "Bearer t0ken"})
    for url, sent in [
        ("http://127.0.0.1:4321/api/sessions", True),
        ("http://127.0.0.1:4322/api/sessions", False),  # another port
        ("https://127.0.0.1:4321/api/sessions", False),  # another scheme
        ("http://localhost:4321/api/sessions", False),  # another host name
        ("http://evil.test/", False),
    ]:
        request = httpx.Request("GET", url)
        auth.apply(request)
        assert ("Authorization" in request.headers) is sent, url


async def test_a_real_spawned_server_wants_its_token(tmp_path) -> None:
    """The spawned server refuses strangers; the connection made for it gets in."""
    async with connection(Settings(data_dir=tmp_path)) as conn:
        server = conn.server
        assert server.token
        assert (await conn.client.list_sessions()) == []
        async with httpx.AsyncClient() as stranger:
            assert (await stranger.get(server.api_url + "/sessions")).status_code == 401
