"""Fault injection between the app and a real server: transports that hold chosen requests
(real HTTP either way)."""

from __future__ import annotations

import asyncio

import httpx

from rewindtui.a2a import contract


class Gate(httpx.AsyncBaseTransport):
    """Requests whose body holds ``marker`` wait until :meth:`open`; everything else goes straight
    through."""

    def __init__(self, marker: str) -> None:
        self.inner = httpx.AsyncHTTPTransport()
        self.marker = marker.encode()
        self.held = asyncio.Event()
        self._open = asyncio.Event()

    def open(self) -> None:
        self._open.set()

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        if self.marker in request.content:
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
