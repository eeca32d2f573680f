"""Reading one request's stream: what its events say about the message that was sent (taken
by the server? shown back? which task? which state?) and how the reading ended. Pure functions
over classified events; :class:`rewindtui.chat.Chat` acts on them."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from rewindtui.a2a import raw
from rewindtui.a2a.classify import EventKind, StreamEvent
from rewindtui.a2a.dialect import TURN_ENDING_STATES, norm_state


def failure_text(event: StreamEvent) -> str | None:
    """The reason, if this event says the request failed (a failed status or a JSON-RPC error)."""
    if event.kind is EventKind.ERROR:
        body = event.body if isinstance(event.body, dict) else {}
        return f"JSON-RPC error {body.get('code')}: {body.get('message') or 'no message'}"
    if event.kind in (EventKind.STATUS, EventKind.TASK, EventKind.TASK_LIKE) and isinstance(event.body, dict):
        status = event.body.get("status")
        if isinstance(status, dict) and norm_state(status.get("state")) in ("failed", "rejected"):
            return raw.text_of(status.get("message")) or "the server reported failure"
    return None


def state_of(event: StreamEvent) -> str | None:
    if event.kind in (EventKind.STATUS, EventKind.TASK, EventKind.TASK_LIKE) and isinstance(event.body, dict):
        status = event.body.get("status")
        if isinstance(status, dict):
            return norm_state(status.get("state"))
    return None


def task_id_of(event: StreamEvent) -> str | None:
    body = event.body
    if event.is_task and isinstance(body, dict):
        return raw.text_or_none(body.get("id"))
    return raw.task_id(body)


def carries(event: StreamEvent, message_id: str | None) -> bool:
    """The event shows the message ``message_id`` back (a status echo, a Task's history)."""
    if not message_id or not isinstance(event.body, dict):
        return False
    if event.is_task:
        return any(raw.message_id(m) == message_id for m in raw.history(event.body))
    if event.kind is EventKind.STATUS:
        status = event.body.get("status")
        return isinstance(status, dict) and raw.message_id(status.get("message")) == message_id
    return event.kind is EventKind.MESSAGE and raw.message_id(event.body) == message_id


def has_message(tasks: list[dict[str, Any]], message_id: str) -> bool:
    return any(raw.message_id(m) == message_id for t in tasks for m in raw.history(t))


def state_in(tasks: list[dict[str, Any]], task_id: str | None) -> str | None:
    for task in reversed(tasks):
        if task_id is None or task.get("id") == task_id:
            status = task.get("status")
            return norm_state(status.get("state")) if isinstance(status, dict) else None
    return None


class Watch:
    """What one request's stream has shown so far."""

    def __init__(self, message_id: str | None, *, accepted: bool = False, task_id: str | None = None) -> None:
        self.message_id = message_id
        self.accepted = accepted  # the server took the message
        self.echoed = False  # ... and showed it back
        self.task_id = task_id
        self.state: str | None = None
        self.events = 0

    @property
    def ended(self) -> bool:
        return self.state in TURN_ENDING_STATES

    def see(self, event: StreamEvent) -> None:
        self.events += 1
        if event.kind is EventKind.UNKNOWN:
            return
        self.accepted = True
        task_id = task_id_of(event)
        if task_id and (self.task_id is None or event.is_task):
            self.task_id = task_id
        if carries(event, self.message_id):
            self.echoed = True
        state = state_of(event)
        if state and state != "unknown":
            self.state = state


@dataclass
class StreamEnd:
    """How reading a stream ended: ``done`` (the turn ended), ``cut`` (it stopped after the server
    took the message), ``unknown`` (it stopped before we could tell), ``refused``, ``stopped``."""

    kind: str
    reason: str = ""
