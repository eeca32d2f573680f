"""uvicorn plumbing shared by ``serve`` (foreground) and ``EmbeddedServer`` (thread).

* The listening socket is bound *before* the app is built, so port 0 resolves
  to the real port and the agent card can carry real URLs.
* :class:`ManagedServer` reports readiness (after the app's startup), and on
  shutdown first cancels running turns (so open SSE streams end with a final
  ``canceled`` status instead of holding the shutdown up), and handles
  SIGINT/SIGTERM without re-raising them afterwards, so a signalled
  ``rewindtui serve`` exits with status 0.
"""

from __future__ import annotations

import contextlib
import signal
import socket
import threading
from collections.abc import Callable, Generator
from typing import Any

import uvicorn

_SIGNALS = tuple(
    s
    for s in (getattr(signal, "SIGINT", None), getattr(signal, "SIGTERM", None), getattr(signal, "SIGBREAK", None))
    if s is not None
)


def bind_socket(host: str, port: int) -> socket.socket:
    """A listening TCP socket on ``host:port`` (``0`` picks a free port).

    Made with ``IPPROTO_TCP`` named: the connections it accepts carry the listening socket's
    protocol number, and asyncio turns Nagle's algorithm off (``TCP_NODELAY``) only on sockets
    whose protocol says TCP (``asyncio.base_events._set_nodelay``). With the default of 0 it stayed
    on, and a streamed response's first frame, written right after its headers, waited for the
    client's delayed ACK of them: about 40 ms on every turn."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind((host, port))
        sock.listen(128)
        sock.set_inheritable(True)
    except BaseException:
        sock.close()
        raise
    return sock


def base_url_for(host: str, port: int) -> str:
    if host in ("0.0.0.0", ""):
        host = "127.0.0.1"
    elif host == "::":
        host = "::1"
    if ":" in host:
        host = f"[{host}]"
    return f"http://{host}:{port}"


class ManagedServer(uvicorn.Server):
    def __init__(
        self,
        config: uvicorn.Config,
        *,
        on_ready: Callable[[], None] | None = None,
        before_shutdown: Callable[[], Any] | None = None,
    ) -> None:
        super().__init__(config)
        self._on_ready = on_ready
        self._before_shutdown = before_shutdown

    async def startup(self, sockets: list[socket.socket] | None = None) -> None:
        await super().startup(sockets=sockets)
        if self.started and self._on_ready is not None:
            self._on_ready()

    async def shutdown(self, sockets: list[socket.socket] | None = None) -> None:
        if self._before_shutdown is not None:
            with contextlib.suppress(Exception):
                await self._before_shutdown()
        await super().shutdown(sockets=sockets)

    @contextlib.contextmanager
    def capture_signals(self) -> Generator[None, None, None]:
        if threading.current_thread() is not threading.main_thread():
            yield
            return
        previous = {sig: signal.signal(sig, self.handle_exit) for sig in _SIGNALS}
        try:
            yield
        finally:
            for sig, handler in previous.items():
                signal.signal(sig, handler)


def make_config(app: Any, *, log_level: str = "warning") -> uvicorn.Config:
    return uvicorn.Config(
        app,
        log_level=log_level,
        access_log=False,
        lifespan="on",
        timeout_graceful_shutdown=5,
        loop="asyncio",
        ws="none",  # no websocket routes: and uvicorn then does not import websockets at start
    )
