"""Accessors over raw wire dictionaries, tolerant of both dialects and of both key spellings.

These are the single place where A2A 0.3 / 1.0 and camelCase / snake_case differences are read.
The conversation uses them directly on parsed JSON, so that loading thousands of messages costs
little more than the JSON parse itself. Nothing here raises on odd input: a value of the wrong type reads as absent.
"""

from __future__ import annotations

from typing import Any

from rewindtui.a2a.dialect import norm_role


def get(d: Any, camel: str, snake: str | None = None) -> Any:
    """``d[camel]`` or ``d[snake]``; None when ``d`` is not a dict or both are missing."""
    if not isinstance(d, dict):
        return None
    value = d.get(camel)
    if value is None and snake is not None:
        value = d.get(snake)
    return value


def text_or_none(value: Any) -> str | None:
    return value if isinstance(value, str) else None


def message_id(m: Any) -> str | None:
    return text_or_none(get(m, "messageId", "message_id"))


def task_id(d: Any) -> str | None:
    return text_or_none(get(d, "taskId", "task_id"))


def context_id(d: Any) -> str | None:
    return text_or_none(get(d, "contextId", "context_id"))


def role(m: Any) -> str:
    return norm_role(get(m, "role"))


def metadata(d: Any) -> dict[str, Any]:
    value = get(d, "metadata")
    return value if isinstance(value, dict) else {}


def parts(m: Any) -> list[Any]:
    value = get(m, "parts")
    return value if isinstance(value, list) else []


def history(t: Any) -> list[Any]:
    value = get(t, "history")
    return value if isinstance(value, list) else []


def is_message(m: Any) -> bool:
    """A dict that can be shown as a message (``kind`` absent or ``message``)."""
    if not isinstance(m, dict):
        return False
    kind = m.get("kind")
    return kind is None or kind == "message"


def part_kind(p: Any) -> str:
    """``text`` / ``data`` / ``file`` for understood parts, ``unknown`` otherwise.

    0.3 says it with ``kind``; 1.0 says it by which key is present (``text``, ``data``, ``url``
    or ``raw`` for files).
    """
    if not isinstance(p, dict):
        return "unknown"
    kind = p.get("kind")
    if kind is not None:
        return kind if kind in ("text", "data", "file") else "unknown"
    if isinstance(p.get("text"), str):
        return "text"
    if "data" in p:
        return "data"
    if "url" in p or "raw" in p or "file" in p:
        return "file"
    return "unknown"


def part_text(p: Any) -> str | None:
    if isinstance(p, dict) and part_kind(p) == "text":
        return text_or_none(p.get("text"))
    return None


def text_of(m: Any) -> str:
    """The concatenated text parts of a message (or artifact)."""
    pieces = []
    for p in parts(m):
        if isinstance(p, dict):
            t = p.get("text")
            if isinstance(t, str) and part_kind(p) == "text":
                pieces.append(t)
    return "".join(pieces)
