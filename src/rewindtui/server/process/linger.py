"""A shared server that outlives its last app for a while (``serve --keep-seconds S``).

:class:`~rewindtui.server.http.control.Clients` stops the server the moment its last app is gone;
:class:`LingeringClients` stops it ``seconds`` later instead, unless an app attached meanwhile --
then the window starts again when the last app goes. The next launch on the data directory
attaches to it at once (``spawn_server`` finds it through ``server.json``).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable

from rewindtui.server.http.control import Clients


class LingeringClients(Clients):
    def __init__(self, seconds: float, stop: Callable[[], None]) -> None:
        super().__init__(on_unused=self._unused)
        self.seconds = seconds
        self._stop = stop
        self._generation = 0
        self._armed: int | None = None  # the generation of the countdown under way

    def add(self, pid: int) -> None:
        super().add(pid)
        self._generation += 1  # a countdown under way no longer counts
        self._armed = None

    def _unused(self) -> None:
        if self._armed is not None:
            return  # counting down already (the watcher says "unused" every second)
        self._armed = generation = self._generation
        asyncio.get_running_loop().call_later(self.seconds, self._expire, generation)

    def _expire(self, generation: int) -> None:
        if self._armed != generation:
            return
        self._armed = None
        if not self.pids:
            self._stop()
