"""A running turn as subscribers see it (``SubscribeToTask``, a team's followers): its Task as it
is now, then its events from there on, then :data:`CLOSED`."""

from __future__ import annotations

import asyncio
import contextlib
import copy
from collections.abc import AsyncIterator
from typing import Any

_CLOSED: dict[str, Any] = {"kind": "__closed__"}
#: what a :meth:`LiveTask.subscribe` queue gets last, when the turn has ended
CLOSED = _CLOSED


class LiveTask:
    """A running turn as subscribers see it: its Task now, and its events from now on."""

    def __init__(self, task: dict[str, Any], history: list[dict[str, Any]]) -> None:
        self.task = task
        self.history = history
        self._queues: list[asyncio.Queue[dict[str, Any]]] = []

    def publish(self, event: dict[str, Any]) -> None:
        for queue in self._queues:
            queue.put_nowait(event)

    def close(self) -> None:
        self.publish(_CLOSED)
        self._queues.clear()

    def subscribe(self) -> tuple[dict[str, Any], asyncio.Queue[dict[str, Any]]]:
        """The Task as it is now, and a queue that gets every later event, then :data:`CLOSED`
        (taken together, with no ``await`` between them: no event is missed or seen twice)."""
        queue: asyncio.Queue[dict[str, Any]] = asyncio.Queue()
        snapshot = copy.deepcopy({**self.task, "history": self.history})
        self._queues.append(queue)
        return snapshot, queue

    async def follow(self) -> AsyncIterator[dict[str, Any]]:
        """The Task as it is now, then every later event until the turn ends (:meth:`subscribe`)."""
        snapshot, queue = self.subscribe()
        try:
            yield snapshot
            while True:
                event = await queue.get()
                if event is _CLOSED:
                    return
                yield event
        finally:
            with contextlib.suppress(ValueError):
                self._queues.remove(queue)
