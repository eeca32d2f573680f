"""Requests larger than the server's limit are refused before they are read whole.

One message of 50 MB cost the embedded server ~50x its size in memory while it went through
a2a-sdk, ADK and both stores (2.6 GB at peak) and ~13x on disk. :class:`BodyLimit` (pure ASGI)
refuses a request body above ``max_bytes`` (``REWINDTUI_SERVER_MAX_REQUEST_MB``, default
:data:`DEFAULT_MAX_REQUEST_MB`) with HTTP 413: at once when its ``Content-Length`` says so,
else as soon as the bytes read pass the limit (it never holds more than the limit; the rest is
read and dropped, up to :data:`DRAIN_BYTES`, so a client still sending reads the refusal). The answer
is a JSON-RPC error on the A2A endpoint (``id`` null: the request was not parsed) and
``{"error": ...}`` elsewhere, saying the size, the limit and its setting; nothing is stored.
A body within the limit is handed on unchanged.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]

DEFAULT_MAX_REQUEST_MB = 16
#: a refused body is read and dropped up to this much (the client then reads the refusal); past
#: it the connection is closed
DRAIN_BYTES = 256 * 1024 * 1024
MAX_REQUEST_ENV = "REWINDTUI_SERVER_MAX_REQUEST_MB"
#: JSON-RPC 2.0 "Invalid Request" (the body is not read, so not parsed)
_INVALID_REQUEST = -32600


def max_request_bytes(env: MutableMapping[str, str] | Any) -> int:
    """The limit from ``env`` (MB, a positive number), else the default."""
    try:
        mb = float(env.get(MAX_REQUEST_ENV, DEFAULT_MAX_REQUEST_MB))
    except (TypeError, ValueError):
        mb = DEFAULT_MAX_REQUEST_MB
    return int((mb if mb > 0 else DEFAULT_MAX_REQUEST_MB) * 1024 * 1024)


class BodyLimit:
    def __init__(self, app: ASGIApp, *, max_bytes: int, jsonrpc_paths: tuple[str, ...] = ()) -> None:
        self.app = app
        self.max_bytes = max_bytes
        self.jsonrpc_paths = jsonrpc_paths

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope.get("method") in ("GET", "HEAD", "OPTIONS", "DELETE"):
            await self.app(scope, receive, send)
            return
        declared = _content_length(scope)
        if declared is not None and declared > self.max_bytes:
            await _drain(receive, 0)
            await self._refuse(scope, send, declared)
            return
        chunks: list[bytes] = []
        total = 0
        while True:
            message = await receive()
            if message["type"] != "http.request":  # the client went away
                return
            chunk = message.get("body", b"")
            total += len(chunk)
            if total > self.max_bytes:
                chunks.clear()
                if message.get("more_body", False):
                    await _drain(receive, total)
                await self._refuse(scope, send, None)
                return
            if chunk:
                chunks.append(chunk)
            if not message.get("more_body", False):
                break
        body = chunks[0] if len(chunks) == 1 else b"".join(chunks)
        chunks.clear()
        sent = False

        async def replay() -> Message:
            nonlocal sent
            if not sent:
                sent = True
                return {"type": "http.request", "body": body, "more_body": False}
            return await receive()  # after the body: the disconnect, when it comes

        await self.app(scope, replay, send)

    async def _refuse(self, scope: Scope, send: Send, size: int | None) -> None:
        limit_mb = self.max_bytes / 1024 / 1024
        what = f"{size / 1024 / 1024:.1f} MB" if size is not None else f"more than {limit_mb:g} MB"
        text = (
            f"the request is {what}, larger than this server takes ({limit_mb:g} MB, the setting "
            f"{MAX_REQUEST_ENV}): nothing was stored; send a smaller message or raise the limit"
        )
        path = scope.get("path", "")
        if any(path == p or path == p.rstrip("/") for p in self.jsonrpc_paths):
            payload: dict[str, Any] = {
                "jsonrpc": "2.0",
                "id": None,
                "error": {"code": _INVALID_REQUEST, "message": text},
            }
        else:
            payload = {"error": text}
        body = json.dumps(payload).encode()
        await send(
            {
                "type": "http.response.start",
                "status": 413,
                "headers": [
                    (b"content-type", b"application/json"),
                    (b"content-length", str(len(body)).encode()),
                    (b"connection", b"close"),
                ],
            }
        )
        await send({"type": "http.response.body", "body": body})


async def _drain(receive: Receive, read: int) -> None:
    """Read the rest of a refused body and drop it (up to :data:`DRAIN_BYTES` in all), so a client
    still sending reads the refusal instead of a broken connection."""
    while read < DRAIN_BYTES:
        message = await receive()
        if message["type"] != "http.request":
            return
        read += len(message.get("body", b""))
        if not message.get("more_body", False):
            return


def _content_length(scope: Scope) -> int | None:
    for name, value in scope.get("headers", []):
        if name == b"content-length":
            try:
                return int(value)
            except ValueError:
                return None
    return None
