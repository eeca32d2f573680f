"""The two HTTP bindings of A2A, over one ``httpx.AsyncClient``: JSON-RPC and HTTP+JSON (and\nthe door to the third, gRPC).

Both give the client the same three things: :meth:`Transport.stream` (send a message, read the
SSE stream), :meth:`Transport.subscribe` (resume a task's stream) and :meth:`Transport.call`
(``get_task``, ``list_tasks``, ``cancel_task``), and the same errors: a stream yields classified
events (an error the server answers with is an ``EventKind.ERROR`` event, ``{"code", "message"}``
with the JSON-RPC code, so both bindings read alike), a unary call returns the result or raises
:class:`~rewindtui.client.errors.RpcError`.

* JSON-RPC: ``POST {url}`` with ``message/stream`` / ``SendStreamingMessage`` ... in the dialect.
* gRPC (A2A 1.0): :mod:`rewindtui.client.grpc_transport`, loaded by :func:`make_transport` when used.
* HTTP+JSON (A2A 1.0): ``POST {url}/message:stream``, ``POST {url}/tasks/{id}:subscribe``,
  ``GET {url}/tasks/{id}``, ``GET {url}/tasks?contextId=...``, ``POST {url}/tasks/{id}:cancel``;
  errors as ``{"error": {"code": <HTTP status>, "status", "message", "details": [{"reason"}]}}``
  (a2a-sdk's ``RestDispatcher`` and ``build_rest_error_payload``), mapped back to JSON-RPC codes.
  Ids are escaped as single path segments.
"""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any
from urllib.parse import quote

import httpx
from httpx_sse import SSEError, aconnect_sse

from rewindtui.a2a import outgoing
from rewindtui.a2a.card import GRPC, HTTP_JSON, JSONRPC
from rewindtui.a2a.classify import EventKind, StreamEvent, classify_frame
from rewindtui.a2a.dialect import Dialect, method
from rewindtui.client.auth import CredentialScope, origin_text, same_origin
from rewindtui.client.errors import (
    ClientError,
    ConnectionLost,
    MalformedFrame,
    RpcError,
    Unsupported,
    describe_transport,
    excerpt,
    parse_frame,
    parse_json,
    status_error,
)
from rewindtui.client.limits import STREAM_FACTOR, max_answer_bytes, page_seconds

#: HTTP+JSON error ``reason`` (google.rpc.ErrorInfo) -> the JSON-RPC code of the same error
#: (a2a-sdk ``a2a.utils.errors``: ``A2A_ERROR_MAPPING`` and ``JSON_RPC_ERROR_CODE_MAP``).
REST_REASON_CODES = {
    "TASK_NOT_FOUND": -32001,
    "TASK_NOT_CANCELABLE": -32002,
    "PUSH_NOTIFICATION_NOT_SUPPORTED": -32003,
    "UNSUPPORTED_OPERATION": -32004,
    "CONTENT_TYPE_NOT_SUPPORTED": -32005,
    "INVALID_AGENT_RESPONSE": -32006,
    "EXTENDED_AGENT_CARD_NOT_CONFIGURED": -32007,
    "EXTENSION_SUPPORT_REQUIRED": -32008,
    "VERSION_NOT_SUPPORTED": -32009,
    "INVALID_PARAMS": -32602,
    "INVALID_REQUEST": -32600,
    "METHOD_NOT_FOUND": -32601,
    "INTERNAL_ERROR": -32603,
}
#: Without a reason: the HTTP status says it.
_STATUS_CODES = {404: -32001, 400: -32602, 405: -32601, 501: -32004}
_OPERATIONS = ("get_task", "list_tasks", "cancel_task", "set_push", "get_push", "list_push", "delete_push")
#: Redirects followed for one turn (each to the same origin, or to one the user configured).
MAX_TURN_REDIRECTS = 5


class AnswerTooLarge(ClientError):
    """An answer larger than ``limits.max_answer_bytes()``: reading stopped there."""

    category = "too-large"


class RedirectRefused(ClientError):
    """A turn was redirected to an origin the user did not configure: not followed."""

    category = "redirect"


async def bounded_request(http: httpx.AsyncClient, verb: str, url: str, **kw: Any) -> httpx.Response:
    """``http.request`` with the answer bounded: at most ``limits.max_answer_bytes()`` read, and the
    whole answer within ``limits.page_seconds()`` (a server trickling a byte at a time cannot hold
    a page open forever). Transport failures as ConnectFailed / ConnectionLost."""
    limit, seconds = max_answer_bytes(), page_seconds()
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


def rest_error(body: Any, status: int) -> dict[str, Any] | None:
    """An HTTP+JSON error body as a JSON-RPC style ``{"code", "message"}`` (None if it is not one)."""
    if not isinstance(body, dict) or not isinstance(body.get("error"), dict):
        return None
    error = body["error"]
    code = _STATUS_CODES.get(status)
    for detail in error.get("details") or ():
        if isinstance(detail, dict) and isinstance(detail.get("reason"), str):
            code = REST_REASON_CODES.get(detail["reason"], code)
            break
    message = error.get("message") if isinstance(error.get("message"), str) else json.dumps(error)[:200]
    return {"code": code, "message": message, "status": error.get("status"), "http_status": status}


class Transport:
    """One binding at one URL, over the client's HTTP connection."""

    binding = ""

    def __init__(self, http: httpx.AsyncClient, url: str, dialect: Dialect, timeout: float) -> None:
        self.http = http
        self.url = url
        self.dialect = dialect
        self.timeout = timeout

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

    def stream(
        self,
        message: dict[str, Any],
        read_timeout: float | None,
        history_length: int | None = None,
        push: dict[str, Any] | None = None,
    ) -> Any:
        """Send ``message`` streaming; ``history_length``: the request's ``configuration.historyLength``;
        ``push``: its ``configuration``'s push notification config."""
        raise NotImplementedError

    def subscribe(self, task_id: str) -> Any:
        raise NotImplementedError

    async def call(self, operation: str, params: dict[str, Any]) -> Any:
        raise NotImplementedError

    async def aclose(self) -> None:
        """Release what the binding holds of its own (the HTTP ones share the client's connection)."""


class JsonRpcTransport(Transport):
    binding = JSONRPC

    def stream(
        self,
        message: dict[str, Any],
        read_timeout: float | None,
        history_length: int | None = None,
        push: dict[str, Any] | None = None,
    ) -> Any:
        body = outgoing.stream_request(message, self.dialect, history_length=history_length, push=push)
        return self._sse("POST", self.url, body, outgoing.headers_for(self.dialect), read_timeout)

    def subscribe(self, task_id: str) -> Any:
        name = method("subscribe", self.dialect)
        assert name is not None
        return self._sse("POST", self.url, outgoing.jsonrpc(name, {"id": task_id}), outgoing.headers_for(self.dialect), None)

    async def call(self, operation: str, params: dict[str, Any]) -> Any:
        name = method(operation, self.dialect)
        if name is None:
            raise Unsupported(f"A2A {self.dialect.value} has no {operation.replace('_', ' ')} method")
        response = await self.request(
            "POST", self.url, json=outgoing.jsonrpc(name, params), headers=outgoing.headers_for(self.dialect, stream=False)
        )
        if response.status_code >= 400:
            raise status_error(response)
        try:
            frame = parse_json(response.content)
        except ValueError:
            raise MalformedFrame(f"{name}: not JSON: {excerpt(response.text)!r}") from None
        event = classify_frame(frame)
        if event.kind is EventKind.ERROR:
            raise _rpc_error(name, event.body, "JSON-RPC error")
        if isinstance(frame, dict) and "result" not in frame and operation == "delete_push":
            # a2a-sdk's 0.3 server answers a delete without "result"; its own client reads that
            # as null (a2a-sdk 1.3 a2a/compat/v0_3/jsonrpc_transport.py, delete_task_push_notification_config)
            return None
        if not isinstance(frame, dict) or "result" not in frame:
            raise MalformedFrame(f"{name}: no result in {excerpt(response.text)!r}")
        return frame["result"]


class RestTransport(Transport):
    """The HTTP+JSON binding (A2A 1.0)."""

    binding = HTTP_JSON

    def _headers(self, stream: bool) -> dict[str, str]:
        return outgoing.headers_for(Dialect.V10, stream=stream)

    def _url(self, path: str) -> str:
        return self.url.rstrip("/") + path

    def _refusal(self, response: httpx.Response) -> StreamEvent:
        try:
            body = parse_json(response.content)
        except ValueError:
            body = None
        error = rest_error(body, response.status_code)
        if error is None or response.status_code in (401, 403):
            raise status_error(response)
        return StreamEvent(EventKind.ERROR, error)

    def stream(
        self,
        message: dict[str, Any],
        read_timeout: float | None,
        history_length: int | None = None,
        push: dict[str, Any] | None = None,
    ) -> Any:
        body = {"message": message, **outgoing.send_configuration(history_length, push)}
        return self._sse("POST", self._url("/message:stream"), body, self._headers(True), read_timeout)

    def subscribe(self, task_id: str) -> Any:
        return self._sse("POST", self._url(f"/tasks/{segment(task_id)}:subscribe"), {}, self._headers(True), None)

    async def call(self, operation: str, params: dict[str, Any]) -> Any:
        if operation not in _OPERATIONS:
            raise Unsupported(f"HTTP+JSON: no {operation.replace('_', ' ')} route")
        query = {k: _query_value(v) for k, v in params.items() if k != "id" and v is not None}
        if operation.endswith("_push"):
            verb, path, kw = _push_route(operation, params)
        elif operation == "get_task":
            verb, path, kw = "GET", f"/tasks/{segment(params['id'])}", {"params": query}
        elif operation == "list_tasks":
            verb, path, kw = "GET", "/tasks", {"params": query}
        else:
            verb, path, kw = "POST", f"/tasks/{segment(params['id'])}:cancel", {"json": {}}
        name = f"{verb} {path}"
        response = await self.request(verb, self._url(path), headers=self._headers(False), **kw)
        try:
            body = parse_json(response.content) if response.content.strip() else None
        except ValueError:
            body = None
        if response.status_code >= 400:
            error = rest_error(body, response.status_code)
            if error is None or response.status_code in (401, 403):
                raise status_error(response)
            raise _rpc_error(name, error, "error")
        if body is None:
            raise MalformedFrame(f"{name}: not JSON: {excerpt(response.text)!r}")
        return body


def make_transport(
    binding: str, http: httpx.AsyncClient, url: str, dialect: Dialect, timeout: float, scope: CredentialScope | None = None
) -> Transport:
    if binding == GRPC:
        # the one binding built on a2a-sdk's generated types and grpcio: loaded only when used
        try:
            from rewindtui.client.grpc_transport import GrpcTransport
        except ImportError as exc:
            raise Unsupported(f"the gRPC binding needs grpcio ({exc}): pip install 'rewindtui[grpc]'") from None
        return GrpcTransport(url, scope or CredentialScope(), timeout)
    if binding == HTTP_JSON:
        if dialect is not Dialect.V10:
            raise Unsupported("rewindtui speaks the HTTP+JSON binding in A2A 1.0 only; use JSON-RPC with this agent")
        return RestTransport(http, url, dialect, timeout)
    return JsonRpcTransport(http, url, dialect, timeout)


def _push_route(operation: str, params: dict[str, Any]) -> tuple[str, str, dict[str, Any]]:
    """A push-config operation's HTTP+JSON route (a2a-sdk 1.3 ``server/routes/rest_routes.py``:
    ``POST|GET /tasks/{id}/pushNotificationConfigs``, ``GET|DELETE .../pushNotificationConfigs/{push_id}``)."""
    base = f"/tasks/{segment(str(params.get('taskId', '')))}/pushNotificationConfigs"
    if operation == "set_push":
        body = {k: v for k, v in params.items() if k != "taskId"}
        return "POST", base, {"json": body}
    if operation == "list_push":
        return "GET", base, {}
    return ("GET" if operation == "get_push" else "DELETE"), f"{base}/{segment(str(params.get('id', '')))}", {}


def _query_value(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def _rpc_error(name: str, body: Any, label: str) -> RpcError:
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

