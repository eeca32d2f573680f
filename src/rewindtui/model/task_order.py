"""The order of a session's tasks as a list answers them."""

from __future__ import annotations

from typing import Any


def oldest_first(tasks: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """ListTasks answers newest first (by last update, per the spec); some servers answer oldest
    first. Order by the status timestamps when every task has one, else reverse the spec's order."""
    stamps = []
    for task in tasks:
        status = task.get("status")
        stamp = status.get("timestamp") if isinstance(status, dict) else None
        if not isinstance(stamp, str) or not stamp:
            return list(reversed(tasks))
        stamps.append(stamp)
    order = sorted(range(len(tasks)), key=lambda i: stamps[i])
    return [tasks[i] for i in order]
