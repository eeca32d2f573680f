"""A small real HTTP server on loopback for client tests.

It replays canned response bodies byte for byte (for example the captured SSE bodies in
``tests/fixtures``) and records every request it receives, so a test can assert both what the
client made of an answer and exactly what the client sent (or that it sent nothing).

Standard library only: ``ThreadingHTTPServer`` on port 0 in a daemon thread.
"""

from __future__ import annotations

import json
import socket
import threading
from collections import deque
from collections.abc import Iterable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlsplit


@dataclass
class Reply:
    """One canned answer. ``body`` is sent with a Content-Length; ``chunks`` (if given) are sent
    one by one with chunked transfer encoding, flushed after each. ``hold`` makes the handler wait
    for that event before answering (to provoke client timeouts)."""

    status: int = 200
    body: bytes = b""
    content_type: str | None = "application/json"
    headers: dict[str, str] = field(default_factory=dict)
    chunks: list[bytes] | None = None
    hold: threading.Event | None = None

    @classmethod
    def json(cls, data: Any, status: int = 200) -> Reply:
        return cls(status=status, body=json.dumps(data).encode())

    @classmethod
    def sse(cls, body: bytes, status: int = 200, chunks: list[bytes] | None = None) -> Reply:
        return cls(status=status, body=body, content_type="text/event-stream; charset=utf-8", chunks=chunks)

    @classmethod
    def capture(cls, cap: Any) -> Reply:
        """Replay a :class:`captures.Capture` response: its status, content type and body bytes."""
        return cls(status=cap.status, body=cap.body, content_type=cap.headers.get("content-type"))


@dataclass
class Received:
    method: str
    path: str
    query: dict[str, list[str]]
    headers: dict[str, str]  # lower-case names
    body: bytes

    @property
    def json(self) -> Any:
        return json.loads(self.body)


class FakeServer:
    """``with FakeServer() as server:`` → ``server.url``; ``server.route(method, path, reply)``."""

    def __init__(self) -> None:
        self._routes: dict[tuple[str, str], deque[Reply] | Reply] = {}
        self.requests: list[Received] = []
        self._lock = threading.Lock()
        self._holds: list[threading.Event] = []
        self._httpd: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    # -- set-up ------------------------------------------------------------------------------
    def route(self, method: str, path: str, *replies: Reply) -> None:
        """Answer ``method path`` with ``replies``: one reply is repeated, several are used in turn."""
        with self._lock:
            self._routes[(method.upper(), path)] = replies[0] if len(replies) == 1 else deque(replies)
        for reply in replies:
            if reply.hold is not None:
                self._holds.append(reply.hold)

    @property
    def url(self) -> str:
        assert self._httpd is not None
        host, port = self._httpd.server_address[:2]
        return f"http://{host}:{port}"

    def requests_to(self, method: str, path: str) -> list[Received]:
        return [r for r in self.requests if r.method == method.upper() and r.path == path]

    # -- lifecycle ---------------------------------------------------------------------------
    def start(self) -> FakeServer:
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            disable_nagle_algorithm = True  # no 40 ms delayed-ACK stalls between header and body writes

            def log_message(self, *args: Any) -> None:  # keep test output quiet
                pass

            def _handle(self) -> None:
                length = int(self.headers.get("content-length") or 0)
                body = self.rfile.read(length) if length else b""
                split = urlsplit(self.path)
                received = Received(
                    self.command,
                    split.path,
                    parse_qs(split.query, keep_blank_values=True),
                    {k.lower(): v for k, v in self.headers.items()},
                    body,
                )
                with server._lock:
                    server.requests.append(received)
                    found = server._routes.get((self.command, split.path))
                    if isinstance(found, deque):
                        reply = found.popleft() if len(found) > 1 else found[0]
                    else:
                        reply = found
                if reply is None:
                    reply = Reply.json({"error": f"no route for {self.command} {split.path}"}, status=404)
                if reply.hold is not None:
                    reply.hold.wait(timeout=30)
                self._send(reply)

            def _send(self, reply: Reply) -> None:
                try:
                    self.send_response(reply.status)
                    if reply.content_type:
                        self.send_header("Content-Type", reply.content_type)
                    for k, v in reply.headers.items():
                        self.send_header(k, v)
                    if reply.chunks is not None:
                        self.send_header("Transfer-Encoding", "chunked")
                        self.end_headers()
                        for chunk in reply.chunks:
                            if chunk:
                                self.wfile.write(b"%x\r\n%s\r\n" % (len(chunk), chunk))
                                self.wfile.flush()
                        self.wfile.write(b"0\r\n\r\n")
                    else:
                        self.send_header("Content-Length", str(len(reply.body)))
                        self.end_headers()
                        self.wfile.write(reply.body)
                    self.wfile.flush()
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client gave up (e.g. a timeout test)

            do_GET = do_POST = do_PUT = do_DELETE = do_PATCH = _handle

        class Server(ThreadingHTTPServer):
            daemon_threads = True
            block_on_close = False

        self._httpd = Server(("127.0.0.1", 0), Handler)
        self._thread = threading.Thread(
            target=self._httpd.serve_forever, kwargs={"poll_interval": 0.02}, name="fakeserver", daemon=True
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        for hold in self._holds:
            hold.set()
        if self._httpd is not None:
            self._httpd.shutdown()
            self._httpd.server_close()
            self._httpd = None
        if self._thread is not None:
            self._thread.join(timeout=5)
            self._thread = None

    def __enter__(self) -> FakeServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


def closed_port() -> int:
    """A loopback port with nothing listening on it (bound, then released)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def sse_body(data_lines: Iterable[str], *, newline: str = "\n", comments: bool = False, ids: bool = False) -> bytes:
    """An SSE body holding ``data_lines`` as events, with the chosen line ending, optionally with
    ``: keep-alive`` comment events between them and an ``id:`` line on each event."""
    out: list[str] = []
    if comments:
        out.append(": keep-alive" + newline + newline)
    for n, data in enumerate(data_lines, start=1):
        event = ""
        if ids:
            event += f"id: {n}" + newline
        event += "data: " + data + newline + newline
        out.append(event)
        if comments:
            out.append(": keep-alive" + newline + newline)
    return "".join(out).encode()
