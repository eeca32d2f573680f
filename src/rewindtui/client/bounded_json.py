"""JSON from a server, with its nesting bounded.

``json.loads`` dies of RecursionError near 1,000 levels (and takes the app with it);
pydantic-core's parser refuses past ~200 levels ("recursion limit exceeded"), which made a whole
session read "not JSON" because one data part in it was deep. Here the fast parser runs first;
only when it refuses for depth is the text scanned once (strings skipped, brackets counted) and
every value nested deeper than :data:`rewindtui.client.limits.MAX_JSON_DEPTH` replaced by the
:data:`rewindtui.client.limits.TOO_DEEP` marker, so the rest of the answer is read as sent.

:func:`bound_depth` does the same to a parsed value (a data part) at a smaller depth, without
recursion.
"""

from __future__ import annotations

import json
import re
from typing import Any, TypeVar

from pydantic_core import from_json

from rewindtui.client.limits import (
    DATA_TOO_DEEP,
    MAX_DATA_DEPTH,
    MAX_JSON_DEPTH,
    MAX_MESSAGES_PER_TASK,
    MAX_PARTS_PER_MESSAGE,
    TOO_DEEP,
)

#: a whole JSON string (escapes included), or one bracket
_T = TypeVar("_T")
_TOKENS = re.compile(rb'"[^"\\]*(?:\\.[^"\\]*)*"|[\[\]{}]', re.S)
_OPEN = frozenset(b"[{")


def loads(data: bytes | str) -> Any:
    """Parse JSON; values nested deeper than MAX_JSON_DEPTH become a marker string. ValueError on
    text that is not JSON (never RecursionError)."""
    try:
        return from_json(data)
    except ValueError as exc:
        if "recursion limit" not in str(exc):
            raise
    raw = data.encode() if isinstance(data, str) else bytes(data)
    return from_json(prune(raw, MAX_JSON_DEPTH))


def prune(raw: bytes, max_depth: int) -> bytes:
    """``raw`` with every array/object that opens below ``max_depth`` levels replaced by the
    marker (a JSON string). Linear; brackets inside strings are not counted."""
    marker = json.dumps(TOO_DEEP).encode()
    out: list[bytes] = []
    depth = 0
    last = 0
    cut: int | None = None
    for match in _TOKENS.finditer(raw):
        char = raw[match.start()]
        if char == 0x22:  # a string
            continue
        if char in _OPEN:
            depth += 1
            if depth > max_depth and cut is None:
                cut = match.start()
        else:
            if cut is not None and depth == max_depth + 1:
                out.append(raw[last:cut])
                out.append(marker)
                last = match.end()
                cut = None
            depth -= 1
    if cut is not None:  # unterminated: the parser will say it is not JSON
        return raw
    out.append(raw[last:])
    return b"".join(out)


def deeper_than(raw: bytes, max_depth: int) -> bool:
    """Whether the JSON text ``raw`` opens an array/object more than ``max_depth`` levels deep
    (brackets inside strings not counted). Linear, no recursion: checked before parsing a body
    that is refused rather than cut when it is that deep."""
    depth = 0
    for match in _TOKENS.finditer(raw):
        char = raw[match.start()]
        if char == 0x22:
            continue
        if char in _OPEN:
            depth += 1
            if depth > max_depth:
                return True
        else:
            depth -= 1
    return False


def bound_depth(value: Any, max_depth: int = MAX_DATA_DEPTH, marker: str = DATA_TOO_DEEP) -> Any:
    """``value`` with containers below ``max_depth`` levels replaced by ``marker``. The same object
    when nothing is that deep (no copy); iterative, so any depth is safe."""
    if not _deeper_than(value, max_depth):
        return value
    return _cut(value, max_depth, marker)


def _deeper_than(value: Any, max_depth: int) -> bool:
    stack: list[tuple[Any, int]] = [(value, 0)]
    while stack:
        node, depth = stack.pop()
        if isinstance(node, dict):
            children: Any = node.values()
        elif isinstance(node, list):
            children = node
        else:
            continue
        if depth >= max_depth:
            return True
        stack.extend((child, depth + 1) for child in children if isinstance(child, (dict, list)))
    return False


def _cut(value: Any, max_depth: int, marker: str) -> Any:
    """A copy of ``value`` cut at ``max_depth`` (built top-down with an explicit stack)."""
    root: list[Any] = [None]
    stack: list[tuple[Any, Any, Any, int]] = [(value, root, 0, 0)]
    while stack:
        node, parent, key, depth = stack.pop()
        if not isinstance(node, (dict, list)):
            parent[key] = node
            continue
        if depth >= max_depth:
            parent[key] = marker
            continue
        if isinstance(node, dict):
            copy: Any = {}
            parent[key] = copy
            for k, v in node.items():
                copy[k] = None
                stack.append((v, copy, k, depth + 1))
        else:
            copy = [None] * len(node)
            parent[key] = copy
            stack.extend((v, copy, i, depth + 1) for i, v in enumerate(node))
    return root[0]


# -- tasks and messages ------------------------------------------------------------------------
def bound_task(obj: _T) -> _T:
    """Bound a Task / Message / stream event body in place and return it: at most
    MAX_MESSAGES_PER_TASK history messages (the newest), MAX_PARTS_PER_MESSAGE parts per message
    (one text part then says how many more were dropped), data part values cut at MAX_DATA_DEPTH.
    Anything that is not shaped like one is returned untouched."""
    if not isinstance(obj, dict):
        return obj
    for key in ("task", "message", "statusUpdate", "artifactUpdate", "status", "artifact"):
        inner = obj.get(key)
        if isinstance(inner, dict):
            bound_task(inner)
    history = obj.get("history")
    if isinstance(history, list):
        if len(history) > MAX_MESSAGES_PER_TASK:
            del history[: len(history) - MAX_MESSAGES_PER_TASK]
        for message in history:
            if isinstance(message, dict):
                _bound_parts(message)
    artifacts = obj.get("artifacts")
    if isinstance(artifacts, list):
        for artifact in artifacts[:MAX_MESSAGES_PER_TASK]:
            if isinstance(artifact, dict):
                _bound_parts(artifact)
    _bound_parts(obj)
    return obj


def _bound_parts(holder: dict[str, Any]) -> None:
    parts = holder.get("parts")
    if not isinstance(parts, list):
        return
    if len(parts) > MAX_PARTS_PER_MESSAGE:
        dropped = len(parts) - MAX_PARTS_PER_MESSAGE
        note = f"({dropped:,} more parts not shown: a message shows at most {MAX_PARTS_PER_MESSAGE:,})"
        first = parts[0] if isinstance(parts[0], dict) else {}
        del parts[MAX_PARTS_PER_MESSAGE:]
        parts.append({"kind": "text", "text": note} if "kind" in first else {"text": note})
    for part in parts:
        if isinstance(part, dict) and isinstance(part.get("data"), (dict, list)):
            part["data"] = bound_depth(part["data"])
