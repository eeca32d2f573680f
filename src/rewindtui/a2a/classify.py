"""Tell stream payloads apart, as the seeds describe (``isA2ATask`` / ``isTaskLike`` ...), plus
the A2A 1.0 wrapper shapes. Pure functions; no I/O."""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import Enum
from typing import Any

from rewindtui.a2a import raw


class EventKind(str, Enum):
    TASK = "task"  # kind == "task", or the 1.0 {"task": ...} wrapper
    TASK_LIKE = "task-like"  # no kind, non-empty history, id or contextId a string
    STATUS = "status-update"
    ARTIFACT = "artifact-update"
    MESSAGE = "message"
    ERROR = "error"  # a JSON-RPC error
    UNKNOWN = "unknown"


_WRAPPERS = {
    "task": EventKind.TASK,
    "message": EventKind.MESSAGE,
    "statusUpdate": EventKind.STATUS,
    "status_update": EventKind.STATUS,
    "artifactUpdate": EventKind.ARTIFACT,
    "artifact_update": EventKind.ARTIFACT,
}

_KINDS = {
    "task": EventKind.TASK,
    "message": EventKind.MESSAGE,
    "status-update": EventKind.STATUS,
    "artifact-update": EventKind.ARTIFACT,
}


@dataclass(frozen=True)
class StreamEvent:
    """One classified stream payload: its kind and the (unwrapped) wire dict."""

    kind: EventKind
    body: Any
    rpc_id: Any = field(default=None, compare=False)

    @property
    def is_task(self) -> bool:
        return self.kind in (EventKind.TASK, EventKind.TASK_LIKE)


def is_a2a_task(payload: Any) -> bool:
    return isinstance(payload, dict) and payload.get("kind") == "task"


def is_task_like(payload: Any) -> bool:
    """No ``kind``, ``history`` a non-empty list, and ``id`` or ``contextId`` a string."""
    if not isinstance(payload, dict) or "kind" in payload:
        return False
    history = payload.get("history")
    if not isinstance(history, list) or not history:
        return False
    return isinstance(payload.get("id"), str) or isinstance(raw.context_id(payload), str)


def _unwrap(payload: dict[str, Any]) -> tuple[EventKind, Any] | None:
    if "kind" in payload or len(payload) != 1:
        return None
    ((key, inner),) = payload.items()
    found = _WRAPPERS.get(key)
    if found is None or not isinstance(inner, dict):
        return None
    return found, inner


def classify(payload: Any, rpc_id: Any = None) -> StreamEvent:
    """Classify a JSON-RPC ``result`` (or a bare object) from a stream."""
    if not isinstance(payload, dict):
        return StreamEvent(EventKind.UNKNOWN, payload, rpc_id)
    kind = payload.get("kind")
    if kind is not None:
        return StreamEvent(_KINDS.get(kind, EventKind.UNKNOWN), payload, rpc_id)
    wrapped = _unwrap(payload)
    if wrapped is not None:
        return StreamEvent(wrapped[0], wrapped[1], rpc_id)
    if is_task_like(payload):
        return StreamEvent(EventKind.TASK_LIKE, payload, rpc_id)
    if "status" in payload and (raw.task_id(payload) or raw.context_id(payload)):
        return StreamEvent(EventKind.STATUS, payload, rpc_id)
    if "artifact" in payload:
        return StreamEvent(EventKind.ARTIFACT, payload, rpc_id)
    if "status" in payload and isinstance(payload.get("id"), str):
        return StreamEvent(EventKind.TASK, payload, rpc_id)
    if raw.message_id(payload) and "parts" in payload:
        return StreamEvent(EventKind.MESSAGE, payload, rpc_id)
    return StreamEvent(EventKind.UNKNOWN, payload, rpc_id)


def classify_frame(frame: Any) -> StreamEvent:
    """Classify one JSON-RPC response frame: ``{"result": ...}`` or ``{"error": ...}``."""
    if isinstance(frame, dict):
        rpc_id = frame.get("id")
        if "error" in frame and "result" not in frame:
            error = frame["error"]
            body = error if isinstance(error, dict) else {"message": str(error)}
            return StreamEvent(EventKind.ERROR, body, rpc_id)
        if "result" in frame:
            return classify(frame["result"], rpc_id)
    return classify(frame)
