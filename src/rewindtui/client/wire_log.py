"""The wire log: every HTTP request and answer, every SSE frame and every gRPC message a client
sends or receives, in order, with timings, credentials redacted, bounded in memory.

* :class:`WireLog` keeps the newest :data:`MAX_ENTRIES` entries (and at most :data:`MAX_BYTES` of
  them) for a view, and writes each entry as one JSON line to a file when given one
  (``--wire-log FILE``); listeners (``subscribe``) hear each entry as it is made.
* :func:`attach` wraps an ``httpx.AsyncClient``'s transport with :class:`RecordingTransport`
  (every :class:`~rewindtui.client.a2a_client.A2AClient` is wrapped; it records only while a log is
  active, so the app's wire console, opened later, sees what comes from then on), which sees each
  request as sent (after the credential hook added what the user configured) and
  each answer's body as it is read: an SSE answer is logged one frame per event, any other body
  once it is read (the first :data:`MAX_BODY` bytes). The client reads exactly what it would
  read without the log.
* ``rewindtui.client.grpc_transport.wire_interceptors``: ``grpc.aio`` client interceptors that
  log each call, each message either way and the end status (through :func:`grpc_request`).

Redacted: the values of sensitive headers (``Authorization``, ``X-API-Key``, cookies, ... :
:func:`rewindtui.client.auth.is_sensitive_header`), every registered secret anywhere
(:func:`rewindtui.client.auth.redact`), and in a JSON body the values of keys that name a secret
(``token``, ``password``, ``secret``, ``credentials``, ``authorization``). Each request entry has a
``curl`` command line that repeats it, with the redacted values left as ``***``.

A process has one active log (:func:`activate`); without one nothing is recorded (the wrapped
transport and the interceptors pass everything through).
"""

from __future__ import annotations

import contextlib
import json
import re
import shlex
import threading
import time
from collections import deque
from collections.abc import AsyncIterator, Callable, Iterator
from pathlib import Path
from typing import Any

import httpx

from rewindtui.client.auth import REDACTED, is_sensitive_header, redact
from rewindtui.client.errors import ClientError

#: entries kept in memory (the newest), and their size in all
MAX_ENTRIES = 2000
MAX_BYTES = 8 * 1024 * 1024
#: bytes of one body or frame kept in an entry
MAX_BODY = 64 * 1024
_SECRET_KEYS = re.compile(r"token|password|secret|credential|authorization|api[-_]?key", re.IGNORECASE)
#: the same words, for a quick look at a body before it is parsed
_SECRET_WORDS = ("token", "password", "secret", "credential", "authorization", "apikey", "api_key", "api-key")


def _redact_json(value: Any, depth: int = 0) -> Any:
    if depth > 50:
        return "…"
    if isinstance(value, dict):
        return {
            k: (
                REDACTED
                if isinstance(k, str) and _SECRET_KEYS.search(k) and isinstance(v, (str, int)) and v != ""
                else _redact_json(v, depth + 1)
            )
            for k, v in value.items()
        }
    if isinstance(value, list):
        return [_redact_json(v, depth + 1) for v in value]
    if isinstance(value, str):
        return redact(value)
    return value


def redact_body(data: bytes | str) -> str:
    """A body as logged: at most MAX_BODY bytes, JSON with its secret fields redacted, every
    registered secret redacted."""
    raw = data.encode("utf-8", "replace") if isinstance(data, str) else data
    cut = len(raw) > MAX_BODY
    text = raw[:MAX_BODY].decode("utf-8", "replace")
    lowered = text.lower()
    if not cut and any(word in lowered for word in _SECRET_WORDS):  # a key that may name a secret
        try:
            return json.dumps(_redact_json(json.loads(text)), ensure_ascii=False)
        except (ValueError, RecursionError):
            pass
    text = redact(text)
    return text + (f"… ({len(raw):,} bytes in all)" if cut else "")


def redact_headers(headers: Any) -> dict[str, str]:
    out: dict[str, str] = {}
    for name, value in headers.items() if hasattr(headers, "items") else headers:
        name = name.decode("latin-1") if isinstance(name, bytes) else str(name)
        value = value.decode("latin-1") if isinstance(value, bytes) else str(value)
        out[name] = REDACTED if is_sensitive_header(name) or name.lower() == "cookie" else redact(value)
    return out


def curl_of(method: str, url: str, headers: dict[str, str], body: str | None) -> str:
    """The request as a curl command line (headers as logged: redacted values stay ``***``)."""
    parts = ["curl", "-sS", "-X", method, shlex.quote(url)]
    for name, value in headers.items():
        if name.lower() in ("host", "content-length", "accept-encoding", "connection", "user-agent"):
            continue
        parts += ["-H", shlex.quote(f"{name}: {value}")]
    if body:
        parts += ["--data-raw", shlex.quote(body)]
    return " ".join(parts)


class WireLog:
    """The entries, bounded; optionally a file of JSON lines."""

    def __init__(
        self, path: str | Path | None = None, *, max_entries: int = MAX_ENTRIES, max_bytes: int = MAX_BYTES
    ) -> None:
        self.entries: deque[dict[str, Any]] = deque()
        self._sizes: deque[int] = deque()  # each entry's size as a JSON line
        self.max_entries = max_entries
        self.max_bytes = max_bytes
        self.size = 0
        self.dropped = 0
        self.start = time.monotonic()
        self._seq = 0
        self._ids = 0
        self._lock = threading.Lock()
        self._listeners: list[Callable[[dict[str, Any]], Any]] = []
        self._file = open(path, "a", encoding="utf-8") if path else None

    def next_id(self) -> int:
        with self._lock:
            self._ids += 1
            return self._ids

    def add(self, kind: str, **fields: Any) -> dict[str, Any]:
        with self._lock:
            self._seq += 1
            entry = {"seq": self._seq, "t": round(time.monotonic() - self.start, 4), "kind": kind, **fields}
            line = json.dumps(entry, ensure_ascii=False, default=str)
            self.entries.append(entry)
            self._sizes.append(len(line))
            self.size += len(line)
            while self.entries and (len(self.entries) > self.max_entries or self.size > self.max_bytes):
                self.entries.popleft()
                self.size -= self._sizes.popleft()
                self.dropped += 1
            if self._file is not None:
                self._file.write(line + "\n")
                self._file.flush()
            listeners = list(self._listeners)
        for listener in listeners:
            try:
                listener(entry)
            except Exception:  # a view that went away does not stop the log
                pass
        return entry

    def subscribe(self, listener: Callable[[dict[str, Any]], Any]) -> Callable[[], None]:
        self._listeners.append(listener)
        return lambda: self._listeners.remove(listener) if listener in self._listeners else None

    def close(self) -> None:
        if self._file is not None:
            self._file.close()
            self._file = None


_ACTIVE: WireLog | None = None


def activate(log: WireLog | None) -> WireLog | None:
    """Make ``log`` the process's wire log (None: none); the previous one."""
    global _ACTIVE
    previous, _ACTIVE = _ACTIVE, log
    return previous


def active() -> WireLog | None:
    return _ACTIVE


@contextlib.contextmanager
def logging_to(path: str | Path) -> Iterator[WireLog]:
    """``--wire-log FILE``: the active log, writing to ``path``, for the ``with`` block."""
    try:
        log = WireLog(path)
    except OSError as exc:
        raise ClientError(f"--wire-log {path}: cannot write there ({exc.strerror or exc})") from None
    previous = activate(log)
    try:
        yield log
    finally:
        activate(previous)
        log.close()


# -- HTTP ----------------------------------------------------------------------------------------
class _Tee(httpx.AsyncByteStream):
    """An answer's body as the client reads it, logged as it goes: SSE one event per entry."""

    def __init__(self, inner: Any, log: WireLog, rid: int, sse: bool, started: float) -> None:
        self.inner = inner
        self.log = log
        self.rid = rid
        self.sse = sse
        self.started = started
        self.pending = bytearray()
        self.body = bytearray()
        self.total = 0

    async def __aiter__(self) -> AsyncIterator[bytes]:
        try:
            async for chunk in self.inner:
                self.total += len(chunk)
                if self.sse:
                    self._frames(chunk)
                elif len(self.body) < MAX_BODY:
                    self.body += chunk[: MAX_BODY - len(self.body)]
                yield chunk
        finally:
            self._end()

    def _frames(self, chunk: bytes) -> None:
        self.pending += chunk.replace(b"\r\n", b"\n")
        while b"\n\n" in self.pending:
            frame, _, rest = bytes(self.pending).partition(b"\n\n")
            self.pending = bytearray(rest)
            data = b"\n".join(line[5:].lstrip(b" ") for line in frame.split(b"\n") if line.startswith(b"data:"))
            if data:
                self.log.add("frame", id=self.rid, ms=self._ms(), body=redact_body(data))
        if len(self.pending) > MAX_BODY:  # one endless event: logged cut, the rest skipped
            self.log.add("frame", id=self.rid, ms=self._ms(), body=redact_body(bytes(self.pending)), cut=True)
            self.pending.clear()

    def _ms(self) -> float:
        return round((time.monotonic() - self.started) * 1000, 1)

    def _end(self) -> None:
        fields: dict[str, Any] = {"id": self.rid, "ms": self._ms(), "bytes": self.total}
        if not self.sse and self.body:
            if self.total <= MAX_BODY:
                fields["body"] = redact_body(bytes(self.body))
            else:  # cut: logged as text, never parsed
                fields["body"] = (
                    redact(bytes(self.body[:MAX_BODY]).decode("utf-8", "replace")) + f"… ({self.total:,} bytes in all)"
                )
        self.log.add("end", **fields)

    async def aclose(self) -> None:
        await self.inner.aclose()


class RecordingTransport(httpx.AsyncBaseTransport):
    """``inner`` with each request recorded in ``log`` (None: the active log, when there is one)."""

    def __init__(self, inner: httpx.AsyncBaseTransport, log: WireLog | None = None) -> None:
        self.inner = inner
        self.log = log

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        log = self.log or _ACTIVE
        if log is None:
            return await self.inner.handle_async_request(request)
        rid = log.next_id()
        headers = redact_headers(request.headers)
        body: str | None = None
        try:
            content = request.content  # a built request's body (a streamed upload is not read here)
        except httpx.RequestNotRead:
            content = b""
        if content:
            body = redact_body(content)
        url = redact(str(request.url))
        log.add(
            "request",
            id=rid,
            method=request.method,
            url=url,
            headers=headers,
            body=body,
            curl=curl_of(request.method, url, headers, body),
        )
        started = time.monotonic()
        try:
            response = await self.inner.handle_async_request(request)
        except Exception as exc:
            log.add(
                "error",
                id=rid,
                ms=round((time.monotonic() - started) * 1000, 1),
                error=redact(f"{type(exc).__name__}: {exc}"),
            )
            raise
        sse = "text/event-stream" in response.headers.get("content-type", "")
        log.add(
            "response",
            id=rid,
            ms=round((time.monotonic() - started) * 1000, 1),
            status=response.status_code,
            headers=redact_headers(response.headers),
        )
        response.stream = _Tee(response.stream, log, rid, sse, started)
        return response

    async def aclose(self) -> None:
        await self.inner.aclose()


def attach(http: httpx.AsyncClient, log: WireLog | None = None) -> None:
    """Record ``http``'s traffic in ``log`` (default: whichever log is active at each request)."""
    if isinstance(http._transport, RecordingTransport):
        return
    http._transport = RecordingTransport(http._transport, log)


# -- gRPC: the interceptors are in rewindtui.client.grpc_transport (the one module that may import
# protobuf); they record through these two
def grpc_request(log: WireLog, target: str, method: str, metadata: Any, body: str) -> tuple[int, float]:
    rid = log.next_id()
    log.add(
        "request",
        id=rid,
        method="gRPC",
        url=f"grpc://{target}{method}",
        headers=redact_headers(list(metadata or ())),
        body=body,
    )
    return rid, time.monotonic()


def since(started: float) -> float:
    return round((time.monotonic() - started) * 1000, 1)


# -- reading -------------------------------------------------------------------------------------
def entry_line(entry: dict[str, Any]) -> str:
    """One entry as a line of text (the app's wire console, `--wire-log -`)."""
    head = f"{entry.get('t', 0):9.3f}  #{entry.get('id', '?')} "
    kind = entry.get("kind")
    if kind == "request":
        return (
            head
            + f"→ {entry.get('method')} {entry.get('url')}"
            + (f"  {entry['body'][:300]}" if entry.get("body") else "")
        )
    if kind == "response":
        return (
            head
            + f"← {entry.get('status')} ({entry.get('ms')} ms)"
            + (f"  {entry['body'][:300]}" if entry.get("body") else "")
        )
    if kind == "frame":
        return head + f"  ⋯ frame ({entry.get('ms')} ms)  {str(entry.get('body', ''))[:300]}"
    if kind == "end":
        status = f" {entry['status']}" if entry.get("status") else ""
        body = f"  {str(entry['body'])[:300]}" if entry.get("body") else ""
        if entry.get("error"):  # a gRPC call's status message
            body += f"  {str(entry['error'])[:300]}"
        size = f", {entry['bytes']} bytes" if "bytes" in entry else ""
        return head + f"  ■ end{status} ({entry.get('ms')} ms{size}){body}"
    return head + f"  ! {entry.get('error', kind)}"
