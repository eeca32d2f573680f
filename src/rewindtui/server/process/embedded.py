"""Start/stop the server inside this process: uvicorn on a background thread.

::

    with EmbeddedServer(data_dir) as server:      # port 0: a free port
        httpx.get(server.agent_url + ".well-known/agent-card.json")

``start()`` returns once the server accepts connections (socket bound, app
started). ``stop()`` cancels running turns, shuts uvicorn down, closes the
databases and joins the thread; calling it twice is fine.

Like ``rewindtui serve`` it holds its data directory (one server per directory, see
``instance.py``) and writes ``server.json`` there. ``options`` default to
``ServerOptions.from_env()``, read when the server is created.
"""

from __future__ import annotations

import asyncio
import logging
import threading
import time
from collections.abc import Coroutine
from dataclasses import replace
from pathlib import Path
from typing import Any, TypeVar

from rewindtui.server.http.options import ServerOptions, is_loopback
from rewindtui.server.process.instance import DataDirHold
from rewindtui.server.process.spawn import ServerUrls
from rewindtui.server.process.uvicorn_server import ManagedServer, base_url_for, bind_socket, make_config
from rewindtui.server.shared.paths import DATA_FILES

T = TypeVar("T")


class EmbeddedServer(ServerUrls):
    def __init__(
        self,
        data_dir: Path,
        host: str = "127.0.0.1",
        port: int = 0,
        model: str | None = None,
        demo_delay: float = 0.0,
        *,
        options: ServerOptions | None = None,
        start_timeout: float = 60.0,
        log_level: str = "warning",
    ) -> None:
        options = options if options is not None else ServerOptions.from_env()
        if options.push_allow is None and is_loopback(host):
            options = replace(options, push_allow=("loopback",))  # the app's own receiver listens on loopback
        self.options, _ = options.for_bind(host)
        self.data_dir = Path(data_dir)
        self.host = host
        self.requested_port = port
        self.model = model
        self.demo_delay = demo_delay
        self.start_timeout = start_timeout
        self.log_level = log_level
        self._port: int | None = None
        self._server: ManagedServer | None = None
        self._thread: threading.Thread | None = None
        self._ready = threading.Event()
        self._error: BaseException | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._hold = DataDirHold(self.data_dir, DATA_FILES)
        self.app: Any = None

    @property
    def token(self) -> str | None:
        """The bearer token clients must send (None: none needed)."""
        return self.options.token

    # -- addresses -----------------------------------------------------------------
    @property
    def port(self) -> int:
        if self._port is None:
            raise RuntimeError("the server has not been started")
        return self._port

    @property
    def base_url(self) -> str:  # type: ignore[override]
        return base_url_for(self.host, self.port)

    @property
    def running(self) -> bool:
        return self._thread is not None and self._thread.is_alive()

    # -- lifecycle -----------------------------------------------------------------
    def start(self) -> EmbeddedServer:
        if self._thread is not None:
            raise RuntimeError("the server is already started")
        from rewindtui.server.http.app import create_app  # heavy (google-adk): only when starting
        from rewindtui.server.storage.integrity import check_data_dir

        self._hold.acquire()
        try:
            for note in check_data_dir(self.data_dir):  # DataDirProblem: one line naming the file, what to do
                logging.getLogger("rewindtui.server.storage.integrity").warning("%s", note)
            sock = bind_socket(self.host, self.requested_port)
        except BaseException:
            self._hold.release()
            raise
        try:
            self._port = sock.getsockname()[1]
            self.app = create_app(
                self.data_dir,
                self.base_url,
                model=self.model,
                demo_delay=self.demo_delay,
                options=self.options,
                bind_host=self.host,
                instance=self._hold.instance,
            )
            service = self.app.state.parts.service
            self._ready.clear()
            self._error = None
            self._server = ManagedServer(
                make_config(self.app, log_level=self.log_level),
                on_ready=self._on_ready,
                before_shutdown=service.shutdown,
            )
            self._thread = threading.Thread(
                target=self._run, args=(self._server, sock), name=f"rewindtui-server-{self._port}", daemon=True
            )
            self._thread.start()
        except BaseException:
            sock.close()
            self._hold.release()
            raise
        deadline = time.monotonic() + self.start_timeout
        while not self._ready.wait(0.02):
            if not self._thread.is_alive():
                self._thread.join()
                self._thread = None
                self._hold.release()
                raise RuntimeError("the embedded server failed to start") from self._error
            if time.monotonic() > deadline:
                self.stop()
                raise RuntimeError(f"the embedded server did not start within {self.start_timeout:g} s")
        return self

    def _on_ready(self) -> None:
        self._hold.publish(base_url=self.base_url, agent_url=self.agent_url, api_url=self.api_url, token=self.token)
        self._ready.set()

    def _run(self, server: ManagedServer, sock: Any) -> None:
        async def main() -> None:
            self._loop = asyncio.get_running_loop()
            await server.serve(sockets=[sock])

        try:
            asyncio.run(main())
        except BaseException as exc:  # reported by start() / kept for stop()
            self._error = exc
        finally:
            sock.close()

    def call(self, coro: Coroutine[Any, Any, T], timeout: float | None = None) -> T:
        """Run ``coro`` on the server's event loop and return its result (tests, benchmarks).

        ``self.app.state.parts`` holds the store, ADK session service, runner and service.
        """
        if self._loop is None or not self.running:
            coro.close()
            raise RuntimeError("the server is not running")
        return asyncio.run_coroutine_threadsafe(coro, self._loop).result(timeout)

    def stop(self, timeout: float = 30.0) -> None:
        thread, server = self._thread, self._server
        if thread is None or server is None:
            return
        server.should_exit = True
        thread.join(timeout)
        if thread.is_alive():
            server.force_exit = True
            thread.join(timeout)
        self._thread = None
        self._server = None
        self._loop = None
        self._hold.release()

    def __enter__(self) -> EmbeddedServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def __repr__(self) -> str:
        where = self.base_url if self._port is not None else "not started"
        return f"EmbeddedServer({str(self.data_dir)!r}, {where})"
