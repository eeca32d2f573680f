"""Named checkpoints where tests stop the server to kill it (fault injection).

``ServerOptions.pause_at`` maps a checkpoint name to a marker file. When the server reaches
that checkpoint it writes the file and waits there forever, so a test can ``kill -9`` it at
exactly that point and check what a restart makes of it. With no ``pause_at`` (always, outside
tests) a checkpoint costs one dict lookup.

Checkpoints:

* ``rewind.after_agent`` -- ADK has committed a rewind event; the task store has not.
* ``fork.after_agent`` -- the forked ADK session is written; the store has no trace of it.
* ``turn.after_agent_message`` -- ADK has committed an agent message of a turn; the store
  has not stored it.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from pathlib import Path

REWIND_AFTER_AGENT = "rewind.after_agent"
FORK_AFTER_AGENT = "fork.after_agent"
TURN_AFTER_AGENT_MESSAGE = "turn.after_agent_message"


class Checkpoints:
    def __init__(self, pause_at: Mapping[str, str] | None = None) -> None:
        self._pause_at = dict(pause_at or {})

    async def reach(self, name: str) -> None:
        marker = self._pause_at.get(name)
        if marker is None:
            return
        Path(marker).write_text(name)
        await asyncio.Event().wait()  # until the process is killed
