"""A token endpoint that answers a huge token (issue 30, item 4): a real endpoint on loopback
serves ``{"access_token": "<40 MB>"}``. The client stops reading past the token-answer bound,
says so in one sentence, and caches nothing, so the next command does not repeat it. A token
just over the per-token bound (a small answer) is refused the same way; a token cached by an
older version that took any size is never sent."""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import AsyncIterator, Iterator

import httpx
import pytest
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route

from asgi_thread import ServeInThread
from rewindtui.client.auth import AuthError, SecretRef
from rewindtui.client.limits import MAX_TOKEN_ANSWER_BYTES, MAX_TOKEN_CHARS
from rewindtui.client.oauth import Endpoints, OAuthConfig, OAuthSession, TokenStore

pytestmark = pytest.mark.timeout(60)

MB = 1024 * 1024


class TokenEndpoint:
    """``POST /huge``: a 40 MB access token (streamed, counted); ``POST /long``: a token just over
    the per-token bound in a small answer; ``POST /ok``: a normal one. ``sent``: bytes put out."""

    def __init__(self) -> None:
        self.sent = 0
        self.calls = 0

    async def huge(self, request: Request) -> Response:
        self.calls += 1

        async def body() -> AsyncIterator[bytes]:
            yield b'{"token_type": "Bearer", "expires_in": 3600, "access_token": "'
            chunk = b"A" * 65536
            for _ in range(40 * MB // len(chunk)):
                self.sent += len(chunk)
                yield chunk
                await asyncio.sleep(0)  # lets Starlette see the client hang up
            yield b'"}'

        return StreamingResponse(body(), media_type="application/json")

    async def long(self, request: Request) -> Response:
        self.calls += 1
        return JSONResponse({"token_type": "Bearer", "expires_in": 3600, "access_token": "B" * (MAX_TOKEN_CHARS + 1)})

    async def ok(self, request: Request) -> Response:
        self.calls += 1
        return JSONResponse({"token_type": "Bearer", "expires_in": 3600, "access_token": "good-token"})

    def app(self) -> Starlette:
        return Starlette(
            routes=[Route(f"/{name}", getattr(self, name), methods=["POST"]) for name in ("huge", "long", "ok")]
        )


@pytest.fixture
def endpoint() -> Iterator[tuple[str, TokenEndpoint]]:
    server = TokenEndpoint()
    with ServeInThread(server.app()) as served:
        yield served.url, server


def session(url: str, store: TokenStore, monkeypatch) -> OAuthSession:
    monkeypatch.setenv("TOKEN_BOUNDS_SECRET", "s3cret")
    config = OAuthConfig("client-1", SecretRef(env="TOKEN_BOUNDS_SECRET"), token_url=url)
    return OAuthSession(config, Endpoints(url), store, lambda: httpx.AsyncClient(timeout=30))


async def test_a_40_mb_token_answer_is_refused_quickly_and_never_cached(endpoint, tmp_path, monkeypatch):
    url, server = endpoint
    store = TokenStore(tmp_path / "oauth-tokens.json")
    started = time.monotonic()
    with pytest.raises(AuthError) as caught:
        await session(url + "/huge", store, monkeypatch).token()
    took = time.monotonic() - started
    message = str(caught.value)
    assert f"answered more than {MAX_TOKEN_ANSWER_BYTES // 1024} KB" in message and "nothing cached" in message
    assert "ReadError" not in message
    assert server.sent < 32 * MB  # reading stopped near the bound, not at 40 MB (what the socket buffers took aside)
    assert took < 20
    assert store.entries() == {} and not store.path.exists()
    # the next command asks again (nothing was cached) and is refused the same way
    with pytest.raises(AuthError, match="nothing cached"):
        await session(url + "/huge", store, monkeypatch).token()
    assert server.calls == 2 and store.entries() == {}


async def test_a_token_over_the_per_token_bound_is_refused_and_not_cached(endpoint, tmp_path, monkeypatch):
    url, server = endpoint
    store = TokenStore(tmp_path / "oauth-tokens.json")
    with pytest.raises(AuthError, match=r"access_token of [\d,]+ characters: refused and not cached"):
        await session(url + "/long", store, monkeypatch).token()
    assert store.entries() == {}
    # a normal token still works and is cached
    assert await session(url + "/ok", store, monkeypatch).token() == "good-token"
    assert [t.access_token for t in store.entries().values()] == ["good-token"]


async def test_a_huge_token_cached_by_an_older_version_is_never_sent(endpoint, tmp_path, monkeypatch):
    url, server = endpoint
    store = TokenStore(tmp_path / "oauth-tokens.json")
    key = TokenStore.key(url + "/ok", "client-1", None)
    store.path.write_text(
        json.dumps({key: {"access_token": "C" * (MAX_TOKEN_CHARS * 4), "expires_at": time.time() + 3600}})
    )
    assert store.get(key) is None
    assert await session(url + "/ok", store, monkeypatch).token() == "good-token"  # a new grant instead
    assert server.calls == 1


async def test_a_discovery_document_over_1_mb_is_refused(tmp_path):
    from rewindtui.client.limits import MAX_DOCUMENT_BYTES
    from rewindtui.client.oauth import _discover

    big = {"token_endpoint": "http://127.0.0.1/token", "padding": "x" * (MAX_DOCUMENT_BYTES + 1)}
    app = Starlette(routes=[Route("/.well-known/openid-configuration", lambda request: JSONResponse(big))])
    with ServeInThread(app) as served:
        async with httpx.AsyncClient(timeout=10) as http:
            with pytest.raises(AuthError, match="answered more than 1 MB: refused"):
                await _discover(http, served.url + "/.well-known/openid-configuration")


async def test_a_device_answer_naming_odd_times_is_held_to_bounds(tmp_path):
    """``expires_in: "soon"`` used to crash the login (float("soon")); an interval of a billion
    seconds would have held it open for ever. Both are bounded; the login completes."""
    from rewindtui.client.oauth import DEVICE, MAX_POLL_INTERVAL

    device = {
        "device_code": "d-1",
        "user_code": "U-1",
        "verification_uri": "http://verify",
        "expires_in": "soon",
        "interval": 1e9,
    }
    token = {"token_type": "Bearer", "expires_in": 3600, "access_token": "device-token"}
    app = Starlette(
        routes=[
            Route("/device", lambda request: JSONResponse(device), methods=["POST"]),
            Route("/token", lambda request: JSONResponse(token), methods=["POST"]),
        ]
    )
    waits: list[float] = []

    async def sleep(seconds: float) -> None:
        waits.append(seconds)

    with ServeInThread(app) as served:
        config = OAuthConfig(
            "public-client", flow=DEVICE, token_url=served.url + "/token", device_url=served.url + "/device"
        )
        oauth = OAuthSession(
            config,
            Endpoints(served.url + "/token", served.url + "/device"),
            TokenStore(tmp_path / "t.json"),
            lambda: httpx.AsyncClient(timeout=10),
        )
        got = await oauth._device_flow(None, sleep=sleep)
    assert got.access_token == "device-token" and waits == [MAX_POLL_INTERVAL]
