"""Serve an ASGI app with uvicorn on a loopback port, on a background thread (test servers)."""

from __future__ import annotations

import asyncio
import socket
import threading
from collections.abc import Callable
from typing import Any

import uvicorn


class ServeInThread:
    """``with ServeInThread(app) as served:`` -> ``served.url`` (``http://127.0.0.1:PORT``).
    ``ServeInThread(factory=f)``: the app is ``f(url)`` (for an app that must know its own URL)."""

    def __init__(self, app: Any = None, *, factory: Callable[[str], Any] | None = None, **uvicorn_options: Any) -> None:
        """``uvicorn_options``: more ``uvicorn.Config`` settings (e.g. ``ssl_certfile``: https)."""
        assert (app is None) != (factory is None)
        self.options = uvicorn_options
        self.app = app
        self.factory = factory
        self.port = 0
        self._server: uvicorn.Server | None = None
        self._thread: threading.Thread | None = None
        self.loop: asyncio.AbstractEventLoop | None = None

    @property
    def url(self) -> str:
        return f"{'https' if self.options.get('ssl_certfile') else 'http'}://127.0.0.1:{self.port}"

    def start(self) -> ServeInThread:
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind(("127.0.0.1", 0))
        self.port = sock.getsockname()[1]
        app = self.factory(self.url) if self.factory is not None else self.app
        config = uvicorn.Config(app, log_level="warning", lifespan="on", timeout_graceful_shutdown=2, **self.options)
        server = uvicorn.Server(config)
        self._server = server

        def run() -> None:
            async def main() -> None:
                self.loop = asyncio.get_running_loop()
                await server.serve(sockets=[sock])

            asyncio.run(main())

        self._thread = threading.Thread(target=run, name=f"asgi-{self.port}", daemon=True)
        self._thread.start()
        while not server.started:
            if not self._thread.is_alive():
                raise RuntimeError("the test server did not start")
            threading.Event().wait(0.01)
        return self

    def stop(self) -> None:
        if self._server is not None:
            self._server.should_exit = True
        if self._thread is not None:
            self._thread.join(10)
            if self._thread.is_alive() and self._server is not None:
                self._server.force_exit = True
                self._thread.join(10)

    def __enter__(self) -> ServeInThread:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
