"""Streaming deltas a server stored in a task's history, left out when history is built.

With model streaming on (kagent-adk's ``STREAM=1``), each text delta is a status message of its own
marked ``kagent_adk_partial: true`` (``adk_partial`` on ADK-native servers), followed by the full
message. a2a-sdk's task manager moves every status message into the task's history, so stock
kagent-adk stores every delta: a session read back would show each chunk as its own agent message
and then the full text. The full message is the truth; the deltas are dropped here, from stored
tasks only (a live stream still shows them as they arrive; see ``Conversation``).
"""

from __future__ import annotations

from typing import Any

from rewindtui.a2a import raw
from rewindtui.a2a.metadata import is_partial


def _is_stored_delta(message: Any) -> bool:
    return isinstance(message, dict) and raw.role(message) != "user" and is_partial(message)


def drop_from_task(task: dict[str, Any]) -> dict[str, Any]:
    """The task without the deltas in its history (the same object when it holds none)."""
    history = task.get("history")
    if not isinstance(history, list) or not any(_is_stored_delta(m) for m in history):
        return task
    return {**task, "history": [m for m in history if not _is_stored_delta(m)]}


def drop_stored_partials(tasks: list[Any]) -> list[Any]:
    """Each task without the deltas in its history."""
    return [drop_from_task(t) if isinstance(t, dict) else t for t in tasks]
