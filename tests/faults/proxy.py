"""A small fault-injecting HTTP proxy for tests: it sits between the client and a real server.

Every request is read whole and, unless a fault says otherwise, forwarded to the upstream server;
the upstream's answer is read whole too (so the server has finished, and stored, whatever the
request did) and then written back to the client -- as it was, or broken the way a fault says:

- ``status`` / ``body``: answer with a canned status and body instead (``forward=True``: after the
  upstream has done the work, i.e. a 5xx after the server committed).
- ``reset``: after forwarding, reset the connection (TCP RST) without a byte of answer.
- ``delay``: wait this long before answering (a client with a shorter timeout gives up).
- ``hold``: a ``threading.Event``: wait until the test sets it before answering (no timing).
- ``frames``: rewrite an event stream's frames (a function over the list of ``data:`` payloads, as
  bytes): drop, reorder, inject error frames, malformed or half frames, non-UTF-8 bytes ...
- ``cut_after``: send only the first N frames, then end the answer: ``how="eof"`` closes a
  close-delimited body cleanly (the stream just stops), ``"chunked"`` stops a chunked body in the
  middle (a protocol error), ``"reset"`` resets the connection.
- ``live``: relay the stream frame by frame as the server sends it (with ``cut_after``: cut while
  the server is still working on the turn; with ``hold``: the answer's head goes out, its first
  frame waits until the test sets the event, while the server works on).
- ``request`` / ``reply``: rewrite the request body before forwarding it, or a (non-stream) answer's
  body before sending it on.

Faults match requests by a predicate and apply ``times`` times (then requests pass through).
Standard library and httpx only; asyncio on a background thread, so sync and async tests can use it.
"""

from __future__ import annotations

import asyncio
import json
import socket
import struct
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import httpx

from rewindtui.base.tls import default_context

_HOP = {"connection", "keep-alive", "transfer-encoding", "content-length", "host", "accept-encoding", "te", "upgrade"}


@dataclass
class Seen:
    """One request the proxy received."""

    method: str
    path: str  # with the query string
    headers: dict[str, str]
    body: bytes

    @property
    def json(self) -> Any:
        try:
            return json.loads(self.body)
        except ValueError:
            return None

    @property
    def rpc_method(self) -> str | None:
        data = self.json
        return data.get("method") if isinstance(data, dict) else None

    @property
    def message(self) -> dict[str, Any]:
        data = self.json
        params = data.get("params") if isinstance(data, dict) else None
        message = params.get("message") if isinstance(params, dict) else None
        return message if isinstance(message, dict) else {}


# -- request predicates -------------------------------------------------------------------------
STREAM_METHODS = ("message/stream", "SendStreamingMessage")
REWIND_KEY = "kagent_rewind_before_invocation_id"


def is_turn(req: Seen) -> bool:
    """A streamed message that is not a rewind control message."""
    return req.rpc_method in STREAM_METHODS and REWIND_KEY not in (req.message.get("metadata") or {})


def is_a2a_rewind(req: Seen) -> bool:
    return req.rpc_method in STREAM_METHODS and REWIND_KEY in (req.message.get("metadata") or {})


def is_rest(method: str, suffix: str) -> Callable[[Seen], bool]:
    def match(req: Seen) -> bool:
        return req.method == method and req.path.split("?", 1)[0].endswith(suffix)

    return match


def is_rpc(*methods: str) -> Callable[[Seen], bool]:
    return lambda req: req.rpc_method in methods


@dataclass
class Fault:
    match: Callable[[Seen], bool]
    times: int = 1
    status: int | None = None
    body: bytes = b""
    content_type: str = "application/json"
    forward: bool = False  # with status: forward first (the server does the work), then answer status
    reset: bool = False
    delay: float = 0.0
    hold: threading.Event | None = None
    frames: Callable[[list[bytes]], list[bytes]] | None = None
    cut_after: int | None = None
    how: str = "eof"  # eof | chunked | reset
    live: bool = False
    request: Callable[[bytes], bytes] | None = None
    reply: Callable[[bytes], bytes] | None = None
    hits: int = 0

    def takes(self, req: Seen) -> bool:
        return self.hits < self.times and self.match(req)


@dataclass
class _Answer:
    status: int
    reason: str
    headers: dict[str, str] = field(default_factory=dict)
    body: bytes = b""

    @property
    def is_sse(self) -> bool:
        return "text/event-stream" in self.headers.get("content-type", "")


def split_frames(body: bytes) -> list[bytes]:
    """The ``data:`` payloads of an SSE body (one per event)."""
    out = []
    for event in body.replace(b"\r\n", b"\n").split(b"\n\n"):
        data = [line[5:].lstrip(b" ") for line in event.split(b"\n") if line.startswith(b"data:")]
        if data:
            out.append(b"\n".join(data))
    return out


def frame_bytes(payload: bytes) -> bytes:
    return b"data: " + payload + b"\n\n"


class FaultProxy:
    """``with FaultProxy(upstream) as proxy:`` -> ``proxy.url`` (same paths as upstream)."""

    def __init__(self, upstream: str) -> None:
        self.upstream = upstream.rstrip("/")
        self.faults: list[Fault] = []
        self.seen: list[Seen] = []
        self._lock = threading.Lock()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._server: asyncio.AbstractServer | None = None
        self._thread: threading.Thread | None = None
        self._ready = threading.Event()
        self.port = 0

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def rewrite(self, url: str) -> str:
        """An upstream URL as the same URL through the proxy."""
        assert url.startswith(self.upstream), (url, self.upstream)
        return self.url + url[len(self.upstream) :]

    def add(self, fault: Fault) -> Fault:
        with self._lock:
            self.faults.append(fault)
        return fault

    def clear(self) -> None:
        with self._lock:
            self.faults.clear()
            self.seen.clear()

    def seen_by(self, match: Callable[[Seen], bool]) -> list[Seen]:
        with self._lock:
            return [r for r in self.seen if match(r)]

    # -- lifecycle -----------------------------------------------------------------------------
    def start(self) -> FaultProxy:
        self._thread = threading.Thread(target=self._run, name="fault-proxy", daemon=True)
        self._thread.start()
        if not self._ready.wait(10):
            raise RuntimeError("the fault proxy did not start")
        return self

    def _run(self) -> None:
        async def main() -> None:
            self._loop = asyncio.get_running_loop()
            self._http = httpx.AsyncClient(timeout=httpx.Timeout(60.0), verify=default_context())
            self._server = await asyncio.start_server(self._handle, "127.0.0.1", 0)
            self.port = self._server.sockets[0].getsockname()[1]
            self._ready.set()
            async with self._server:
                try:
                    await self._server.serve_forever()
                except asyncio.CancelledError:
                    pass
            await self._http.aclose()

        asyncio.run(main())

    def stop(self) -> None:
        if self._loop is not None and self._server is not None:
            self._loop.call_soon_threadsafe(self._shutdown)
        if self._thread is not None:
            self._thread.join(10)

    def _shutdown(self) -> None:
        """On the proxy's loop: the tasks are read there (another thread's read of them races with
        ``asyncio.run``'s own shutdown tasks, which it then cancelled)."""
        assert self._server is not None
        self._server.close()
        for task in asyncio.all_tasks():
            task.cancel()

    def __enter__(self) -> FaultProxy:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # -- one connection, one request -----------------------------------------------------------
    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            req = await self._read_request(reader)
            if req is None:
                return
            with self._lock:
                self.seen.append(req)
                fault = next((f for f in self.faults if f.takes(req)), None)
                if fault is not None:
                    fault.hits += 1
            await self._answer(req, fault, writer)
        except (ConnectionError, asyncio.IncompleteReadError):
            pass  # the client went away (e.g. it timed out)
        finally:
            if not writer.is_closing():
                writer.close()

    async def _read_request(self, reader: asyncio.StreamReader) -> Seen | None:
        try:
            head = await reader.readuntil(b"\r\n\r\n")
        except asyncio.IncompleteReadError:
            return None
        lines = head.decode("latin-1").split("\r\n")
        method, path, _ = lines[0].split(" ", 2)
        headers: dict[str, str] = {}
        for line in lines[1:]:
            if ":" in line:
                name, _, value = line.partition(":")
                headers[name.strip().lower()] = value.strip()
        length = int(headers.get("content-length") or 0)
        body = await reader.readexactly(length) if length else b""
        return Seen(method, path, headers, body)

    async def _forward(self, req: Seen) -> _Answer:
        headers = {k: v for k, v in req.headers.items() if k not in _HOP}
        response = await self._http.request(req.method, self.upstream + req.path, headers=headers, content=req.body)
        out = {
            k.lower(): v
            for k, v in response.headers.items()
            if k.lower() not in _HOP and k.lower() != "content-encoding"
        }
        return _Answer(response.status_code, response.reason_phrase, out, response.content)

    async def _relay_live(self, req: Seen, fault: Fault, writer: asyncio.StreamWriter) -> None:
        headers = {k: v for k, v in req.headers.items() if k not in _HOP}
        async with self._http.stream(
            req.method, self.upstream + req.path, headers=headers, content=req.body
        ) as response:
            head = [f"HTTP/1.1 {response.status_code} {response.reason_phrase}"]
            head += [f"content-type: {response.headers.get('content-type', 'text/event-stream')}"]
            head += ["transfer-encoding: chunked", "connection: close", "", ""]
            writer.write("\r\n".join(head).encode("latin-1"))
            await writer.drain()
            if fault.hold is not None:
                await asyncio.to_thread(fault.hold.wait, 60)
            sent, pending = 0, b""
            async for chunk in response.aiter_raw():
                pending += chunk.replace(b"\r\n", b"\n")
                while b"\n\n" in pending:
                    event, pending = pending.split(b"\n\n", 1)
                    data = event + b"\n\n"
                    writer.write(b"%x\r\n%s\r\n" % (len(data), data))
                    await writer.drain()
                    sent += 1
                    if fault.cut_after is not None and sent >= fault.cut_after:
                        if fault.how == "reset":
                            _reset(writer)
                        return  # closed mid-body: the client sees the stream break off
            writer.write(b"0\r\n\r\n")
            await writer.drain()

    async def _answer(self, req: Seen, fault: Fault | None, writer: asyncio.StreamWriter) -> None:
        if fault is not None and fault.request is not None:
            req = Seen(req.method, req.path, req.headers, fault.request(req.body))
        if fault is not None and fault.live:
            await self._relay_live(req, fault, writer)
            return
        if fault is not None and fault.status is not None and not fault.forward:
            answer = _Answer(fault.status, "Injected", {"content-type": fault.content_type}, fault.body)
        else:
            answer = await self._forward(req)
        if fault is None:
            await self._write(writer, answer)
            return
        if fault.delay:
            await asyncio.sleep(fault.delay)
        if fault.hold is not None:
            await asyncio.to_thread(fault.hold.wait, 60)
        if fault.reset:
            _reset(writer)
            return
        if fault.status is not None and fault.forward:
            answer = _Answer(fault.status, "Injected", {"content-type": fault.content_type}, fault.body)
        if fault.reply is not None and not answer.is_sse:
            answer.body = fault.reply(answer.body)
        if answer.is_sse and (fault.frames is not None or fault.cut_after is not None):
            frames = split_frames(answer.body)
            if fault.frames is not None:
                frames = fault.frames(frames)
            await self._write_stream(writer, answer, frames, fault.cut_after, fault.how)
            return
        await self._write(writer, answer)

    async def _write(self, writer: asyncio.StreamWriter, answer: _Answer) -> None:
        head = [f"HTTP/1.1 {answer.status} {answer.reason}"]
        head += [f"{k}: {v}" for k, v in answer.headers.items()]
        head += [f"content-length: {len(answer.body)}", "connection: close", "", ""]
        writer.write("\r\n".join(head).encode("latin-1") + answer.body)
        await writer.drain()

    async def _write_stream(
        self, writer: asyncio.StreamWriter, answer: _Answer, frames: list[bytes], cut_after: int | None, how: str
    ) -> None:
        chunked = how != "eof" or cut_after is None
        head = [f"HTTP/1.1 {answer.status} {answer.reason}", "content-type: text/event-stream; charset=utf-8"]
        head += ["transfer-encoding: chunked"] if chunked else []
        head += ["cache-control: no-cache", "connection: close", "", ""]
        writer.write("\r\n".join(head).encode("latin-1"))
        sent = frames if cut_after is None else frames[:cut_after]
        for payload in sent:
            data = frame_bytes(payload)
            writer.write(b"%x\r\n%s\r\n" % (len(data), data) if chunked else data)
            await writer.drain()
        if cut_after is not None and how == "reset":
            await asyncio.sleep(0.05)  # let the client read what was sent before the reset
            _reset(writer)
            return
        if cut_after is None:
            writer.write(b"0\r\n\r\n")
        await writer.drain()


def _reset(writer: asyncio.StreamWriter) -> None:
    """Close with a TCP RST (SO_LINGER 0), not a FIN."""
    sock = writer.get_extra_info("socket")
    if sock is not None:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    writer.transport.abort()
