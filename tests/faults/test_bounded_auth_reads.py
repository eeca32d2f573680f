"""The answers read on the way to a connection -- OIDC discovery, an OAuth2 token endpoint and a
signed card's key set -- are bounded while they are read, like every other answer: a hostile
endpoint sending an endless body is cut off near the limit (the server counts what it got out
before the client hung up) and the caller gets its usual failure, not an out-of-memory."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Iterator

import httpx
import pytest
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import StreamingResponse
from starlette.routing import Route

from asgi_thread import ServeInThread
from rewindtui.client import card_signature, oauth
from rewindtui.client.auth import AuthError

pytestmark = pytest.mark.timeout(60)

MB = 1024 * 1024


class Endless:
    """Every route answers 200 with a JSON-looking body that never ends; ``sent`` counts bytes."""

    def __init__(self) -> None:
        self.sent = 0

    async def _body(self) -> AsyncIterator[bytes]:
        yield b'{"keys": ["'
        chunk = b"x" * 65536
        while self.sent < 256 * MB:  # a bound for the test itself, far past the client's limit
            self.sent += len(chunk)
            yield chunk
            await asyncio.sleep(0)  # lets Starlette see the client hang up

    async def answer(self, request: Request) -> StreamingResponse:
        return StreamingResponse(self._body(), media_type="application/json")

    def app(self) -> Starlette:
        return Starlette(routes=[Route("/{path:path}", self.answer, methods=["GET", "POST"])])


@pytest.fixture
def endless(monkeypatch) -> Iterator[tuple[str, Endless]]:
    monkeypatch.setenv("REWINDTUI_MAX_ANSWER_MB", "1")
    server = Endless()
    with ServeInThread(server.app()) as served:
        yield served.url, server


async def test_an_endless_oidc_discovery_answer_is_cut_off(endless):
    url, server = endless
    async with httpx.AsyncClient(timeout=10) as http:
        with pytest.raises(AuthError, match="OIDC discovery"):
            await oauth._discover(http, url + "/.well-known/openid-configuration")
    assert server.sent < 32 * MB


async def test_an_endless_key_set_is_cut_off_and_the_card_is_not_verified(endless):
    url, server = endless
    assert await card_signature._jwks(url + "/jwks.json", timeout=10) is None
    assert server.sent < 32 * MB
