"""Fault injection between the app and a real server: transports that hold chosen requests
(real HTTP either way)."""

from __future__ import annotations

import asyncio

import httpx

from rewindtui.a2a import contract


class Gate(httpx.AsyncBaseTransport):
    """Requests whose body holds ``marker`` (``in_url``: whose URL does) wait until :meth:`open`;
    everything else goes straight through. ``armed=False``: nothing is held until :meth:`arm`."""

    def __init__(self, marker: str, *, in_url: bool = False, armed: bool = True) -> None:
        self.inner = httpx.AsyncHTTPTransport()
        self.marker = marker.encode()
        self.in_url = in_url
        self.armed = armed
        self.held = asyncio.Event()
        self._open = asyncio.Event()

    def arm(self) -> None:
        self.armed = True

    def open(self) -> None:
        self._open.set()

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        where = str(request.url).encode() if self.in_url else request.content
        if self.armed and self.marker in where:
            self.held.set()
            await self._open.wait()
        return await self.inner.handle_async_request(request)

    async def aclose(self) -> None:
        await self.inner.aclose()


class HoldStreamEnd(httpx.AsyncBaseTransport):
    """The first streamed answer sends all its events, then its end (EOF) waits until
    :meth:`open` -- a turn that has ended while its stream is still closing."""

    def __init__(self) -> None:
        self.inner = httpx.AsyncHTTPTransport()
        self.holding = asyncio.Event()
        self._open = asyncio.Event()
        self._armed = True

    def open(self) -> None:
        self._open.set()

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        response = await self.inner.handle_async_request(request)
        if not self._armed or "text/event-stream" not in response.headers.get("content-type", ""):
            return response
        self._armed = False
        gate = self

        class Stream(httpx.AsyncByteStream):
            async def __aiter__(self):
                async for chunk in response.stream:
                    yield chunk
                gate.holding.set()
                await gate._open.wait()

            async def aclose(self) -> None:
                await response.stream.aclose()

        return httpx.Response(
            response.status_code, headers=response.headers, stream=Stream(), extensions=response.extensions
        )

    async def aclose(self) -> None:
        await self.inner.aclose()


def rewind_gate() -> Gate:
    """Holds rewind requests (the A2A control message carries this metadata key)."""
    return Gate(contract.REWIND_METADATA_KEY)


def freshness_gate() -> Gate:
    """Holds, once armed, the freshness check a send, rewind or edit makes first on the embedded
    server (the newest task over REST, ``limit=1``): the window before the message leaves."""
    return Gate("limit=1", in_url=True, armed=False)
