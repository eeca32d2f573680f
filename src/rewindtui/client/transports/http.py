"""What the two HTTP bindings share, over one ``httpx.AsyncClient``: requests whose answers are
bounded (size and time), a turn's redirects followed only to an origin the user configured, and
server-sent events read within bounds. :class:`HttpTransport` is the base of
:class:`~rewindtui.client.transports.jsonrpc.JsonRpcTransport` and
:class:`~rewindtui.client.transports.rest.RestTransport`.
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any
from urllib.parse import quote

import httpx
from httpx_sse import SSEError, aconnect_sse

from rewindtui.a2a.classify import EventKind, StreamEvent
from rewindtui.a2a.dialect import Dialect
from rewindtui.client.auth import CredentialScope, origin_text, same_origin
from rewindtui.client.errors import (
    ClientError,
    ConnectionLost,
    MalformedFrame,
    RpcError,
    Unsupported,
    describe_transport,
    parse_frame,
    status_error,
)
from rewindtui.client.limits import STREAM_FACTOR, max_answer_bytes, page_seconds
from rewindtui.client.transports.base import Transport, rest_error

#: Redirects followed for one turn (each to the same origin, or to one the user configured).
MAX_TURN_REDIRECTS = 5


class AnswerTooLarge(ClientError):
    """An answer larger than ``limits.max_answer_bytes()``: reading stopped there."""

    category = "too-large"


class RedirectRefused(ClientError):
    """A turn was redirected to an origin the user did not configure: not followed."""

    category = "redirect"


async def bounded_request(
    http: httpx.AsyncClient, verb: str, url: str, *, limit: int | None = None, **kw: Any
) -> httpx.Response:
    """``http.request`` with the answer bounded: at most ``limits.max_answer_bytes()`` read (or
    ``limit``, smaller, for an answer that is small by nature: a token, a key set), and the
    whole answer within ``limits.page_seconds()`` (a server trickling a byte at a time cannot hold
    a page open forever). Transport failures as ConnectFailed / ConnectionLost."""
    limit, seconds = min(limit or max_answer_bytes(), max_answer_bytes()), page_seconds()
    send_kw = {name: kw.pop(name) for name in ("follow_redirects", "auth") if name in kw}
    try:
        async with asyncio.timeout(seconds):
            request = http.build_request(verb, url, **kw)
            response = await http.send(request, stream=True, **send_kw)
            try:
                await read_bounded(response, limit, f"{verb} {url}: the answer")
            finally:
                await response.aclose()
    except TimeoutError:
        raise ConnectionLost(
            f"{verb} {url}: no whole answer within {seconds:g} s (raise REWINDTUI_PAGE_SECONDS if the server is slow)"
        ) from None
    except httpx.TransportError as exc:
        raise describe_transport(exc, url) from None
    return response


def _too_large(what: str, limit: int, stopped: str) -> AnswerTooLarge:
    return AnswerTooLarge(
        f"{what} is larger than {_mb(limit)} (the limit REWINDTUI_MAX_ANSWER_MB): {stopped} "
        "(raise REWINDTUI_MAX_ANSWER_MB if it is expected)"
    )


def _mb(limit: int) -> str:
    mb = limit / (1024 * 1024)
    return f"{mb:,.0f} MB" if mb >= 1 else f"{limit:,} bytes"


async def read_bounded(response: httpx.Response, limit: int, what: str) -> bytes:
    """Read a streamed ``response``'s body, at most ``limit`` bytes: past it reading stops (the
    rest is never read) with AnswerTooLarge naming ``what`` and the setting. Sets the body as
    ``Response.aread()`` would, so ``.content`` / ``.text`` work afterwards."""
    chunks: list[bytes] = []
    size = 0
    async for chunk in response.aiter_bytes():
        size += len(chunk)
        if size > limit:
            raise _too_large(what, limit, "reading stopped")
        chunks.append(chunk)
    response._content = b"".join(chunks)  # what Response.aread() sets: the body, read within bounds
    return response._content


def _scope_of(http: httpx.AsyncClient) -> CredentialScope | None:
    return next((h for h in http.event_hooks.get("request", []) if isinstance(h, CredentialScope)), None)


def segment(value: str) -> str:
    """``value`` as one URL path segment: every reserved character escaped, and a segment of dots
    (which a URL library would resolve as "this" / "parent" directory) escaped too."""
    if not value:
        raise Unsupported("an empty id cannot be put in a URL path")
    text = quote(value, safe="")
    return text.replace(".", "%2E") if set(text) == {"."} else text


class HttpTransport(Transport):
    """A binding over the client's HTTP connection (JSON-RPC, HTTP+JSON): bounded answers,
    redirects followed only home, server-sent events read within bounds."""

    def __init__(self, http: httpx.AsyncClient, url: str, dialect: Dialect, timeout: float) -> None:
        super().__init__(url, dialect, timeout)
        self.http = http

    async def request(self, verb: str, url: str, **kw: Any) -> httpx.Response:
        return await bounded_request(self.http, verb, url, **kw)

    def _redirect_target(self, url: str, response: httpx.Response, hops: int) -> str:
        """Where a redirected turn may go: a 307/308 (method and body kept) to the same origin or
        to one the user configured, at most MAX_TURN_REDIRECTS times; else RedirectRefused naming
        both origins (nothing is sent there)."""
        location = response.headers.get("location", "")
        target = str(response.request.url.join(location)) if location else ""
        scope = _scope_of(self.http)
        home = bool(target) and (same_origin(url, target) or (scope is not None and scope.allows(target)))
        if response.status_code in (307, 308) and home and hops < MAX_TURN_REDIRECTS:
            return target
        where = origin_text(target) if target else "nowhere (no Location)"
        why = "an origin you did not configure" if not home else "too many redirects or a method change"
        raise RedirectRefused(
            f"{origin_text(url)} redirected the turn (HTTP {response.status_code}) to {where}: not followed "
            f"({why}); nothing was sent there",
            hint="configure that address (--url / home URLs) if it is yours",
        )

    @asynccontextmanager
    async def _sse(
        self,
        verb: str,
        url: str,
        body: dict[str, Any],
        headers: dict[str, str],
        read_timeout: float | None,
        hops: int = 0,
    ) -> AsyncIterator[AsyncIterator[StreamEvent]]:
        try:
            timeout = httpx.Timeout(self.timeout, read=read_timeout)
            async with aconnect_sse(
                self.http, verb, url, json=body, headers=headers, timeout=timeout, follow_redirects=False
            ) as source:
                response = source.response
                if response.is_redirect:
                    target = self._redirect_target(url, response, hops)
                    async with self._sse(verb, target, body, headers, read_timeout, hops + 1) as events:
                        yield events
                    return
                limit = max_answer_bytes()
                if response.status_code >= 400:
                    await read_bounded(response, limit, f"the error answer from {url}")
                    yield _single(self._refusal(response))
                    return
                if "text/event-stream" not in response.headers.get("content-type", ""):
                    # e.g. a JSON-RPC error answered as plain JSON
                    await read_bounded(response, limit, f"the answer from {url}")
                    yield _single(parse_frame(response.text))
                    return
                yield _events(response, limit)
        except httpx.TransportError as exc:
            raise describe_transport(exc, url) from None
        except SSEError as exc:
            raise MalformedFrame(f"bad event stream from {url}: {exc}") from None

    def _refusal(self, response: httpx.Response) -> StreamEvent:
        """An HTTP error answer to a stream request: raised as HTTPStatusFailed (JSON-RPC: the
        binding answers its errors with 200)."""
        raise status_error(response)


def rpc_error(name: str, body: Any, label: str) -> RpcError:
    error = body if isinstance(body, dict) else {}
    code = error.get("code") if isinstance(error.get("code"), int) else None
    text = str(error.get("message") or "no message")
    return RpcError(f"{name}: {label} {code}: {text}", code, text)


async def _events(response: httpx.Response, limit: int) -> AsyncIterator[StreamEvent]:
    async for data, name in sse_frames(response, limit):
        event = parse_frame(data)
        if name == "error" and event.kind is EventKind.ERROR and isinstance(event.body, dict):
            # HTTP+JSON: an error in the middle of a stream (``event: error``, a REST error body)
            mapped = rest_error({"error": event.body}, int(event.body.get("code") or 500))
            event = StreamEvent(EventKind.ERROR, mapped or event.body)
        yield event


_NEWLINE = re.compile(rb"\r\n|\r|\n")


async def sse_frames(response: httpx.Response, limit: int) -> AsyncIterator[tuple[str, str]]:
    """The ``(data, event name)`` of each server-sent event with data in ``response``'s body,
    bounded while reading: a line, or one event's data lines together, longer than ``limit``
    bytes stops the stream there with AnswerTooLarge (what was read of it is dropped, the rest is
    never read). So one endless line, or an endless run of ``data:`` lines, costs at most
    ``limit`` bytes of memory, not the server's choice. Lines end at CR, LF or CRLF (the SSE
    spec); each line is UTF-8 (bad bytes replaced). Comment-only and keep-alive events are
    skipped. The whole stream is bounded too: past ``STREAM_FACTOR`` times ``limit`` bytes in all
    (an endless run of small events), it stops the same way."""
    where = f"a stream frame from {response.request.url}"
    total = 0
    pending = bytearray()  # the line being read
    data: list[str] = []  # the current event's data lines
    data_size = 0
    name = ""
    skip_lf = False  # a CR ended the last chunk: an LF opening the next one is the same newline
    async for chunk in response.aiter_bytes():
        total += len(chunk)
        if total > limit * STREAM_FACTOR:
            raise _too_large(f"the stream from {response.request.url}", limit * STREAM_FACTOR, "the stream was stopped")
        if skip_lf and chunk[:1] == b"\n":
            chunk = chunk[1:]
        skip_lf = False
        start = 0
        for match in _NEWLINE.finditer(chunk):
            pending += chunk[start : match.start()]
            start = match.end()
            skip_lf = start == len(chunk) and match.group() == b"\r"
            if len(pending) > limit:
                raise _too_large(where, limit, "the stream was stopped")
            line = pending.decode("utf-8", "replace")
            pending.clear()
            if not line:  # an empty line dispatches the event
                if data:
                    yield "\n".join(data), name
                data, data_size, name = [], 0, ""
                continue
            field, _, value = line.partition(":")
            value = value[1:] if value.startswith(" ") else value
            if field == "data":
                data_size += len(value) + 1
                if data_size > limit:
                    raise _too_large(where, limit, "the stream was stopped")
                data.append(value)
            elif field == "event":
                name = value
            # comments (":..."), id, retry and unknown fields: ignored
        pending += chunk[start:]
        if len(pending) > limit:
            raise _too_large(where, limit, "the stream was stopped")
    # a body that ends inside an event: the event is incomplete and not dispatched (the SSE spec)


async def _single(event: StreamEvent) -> AsyncIterator[StreamEvent]:
    yield event
