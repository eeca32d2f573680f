"""The server's own routes: who it is (``GET /api/server``) and who uses it (``/api/server/clients``).

A server the app spawned serves every app on its data directory (see
:mod:`rewindtui.server.process.instance`); :class:`Clients` keeps the pids of the apps that use it,
and once the last one has gone (exited, or detached) the server stops itself. A server run in
the foreground (``rewindtui serve``) keeps the list too, but runs until it is stopped.
"""

from __future__ import annotations

import asyncio
import os
from collections import Counter
from collections.abc import Callable
from typing import Any

from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from rewindtui.server.shared.paths import CLIENTS_PATH, SERVER_PATH
from rewindtui.server.shared.pids import alive

POLL_SECONDS = 1.0


class Clients:
    """The processes using this server: a count of attachments per pid (one process may hold
    several connections); a process that died holds none."""

    def __init__(self, *, on_unused: Callable[[], None] | None = None) -> None:
        self._held: Counter[int] = Counter()
        self._on_unused = on_unused
        self._watcher: asyncio.Task[None] | None = None

    @property
    def pids(self) -> list[int]:
        return sorted(self._held)

    def add(self, pid: int) -> None:
        self._held[pid] += 1

    def remove(self, pid: int) -> None:
        if self._held[pid] > 1:
            self._held[pid] -= 1
        else:
            self._held.pop(pid, None)
        self._check()

    def _check(self) -> None:
        for pid in [pid for pid in self._held if not alive(pid)]:
            del self._held[pid]
        if not self._held and self._on_unused is not None:
            self._on_unused()

    def start(self) -> None:
        """Watch the clients' pids (only when the server stops once unused)."""
        if self._on_unused is None or self._watcher is not None:
            return

        async def watch() -> None:
            while True:
                await asyncio.sleep(POLL_SECONDS)
                self._check()

        self._watcher = asyncio.get_running_loop().create_task(watch())

    async def stop(self) -> None:
        if self._watcher is not None:
            self._watcher.cancel()
            await asyncio.gather(self._watcher, return_exceptions=True)
            self._watcher = None


def control_routes(*, describe: Callable[[], dict[str, Any]], clients: Clients) -> list[Route]:
    async def server(request: Request) -> Response:
        return JSONResponse({"error": False, "data": {**describe(), "clients": clients.pids}})

    async def attach(request: Request) -> Response:
        try:
            body = await request.json()
            pid = body["pid"]
        except (ValueError, KeyError, TypeError):
            return JSONResponse({"error": 'send {"pid": <the client process id>}'}, status_code=400)
        if isinstance(pid, bool) or not isinstance(pid, int) or pid <= 0:
            return JSONResponse({"error": "pid must be a positive integer"}, status_code=400)
        clients.add(pid)
        return JSONResponse({"error": False, "data": {"pid": pid, "server_pid": os.getpid()}}, status_code=201)

    async def detach(request: Request) -> Response:
        try:
            pid = int(request.path_params["pid"])
        except ValueError:
            return JSONResponse({"error": "pid must be an integer"}, status_code=400)
        clients.remove(pid)
        return Response(status_code=204)

    return [
        Route(SERVER_PATH, server, methods=["GET"]),
        Route(CLIENTS_PATH, attach, methods=["POST"]),
        Route(CLIENTS_PATH + "/{pid}", detach, methods=["DELETE"]),
    ]
