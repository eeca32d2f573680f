"""What an incoming A2A message asks for, decided once, with every id checked once.

Both entries into the server -- the rewind fast path (``http/fast_rewind.py``) and a2a-sdk's
dispatcher (``http/handler.py``) -- classify the message here and act on the result:

* :attr:`Kind.TURN` -- run the agent on it;
* :attr:`Kind.REWIND` -- rewind the session (the control message: the rewind metadata key,
  no content);
* :attr:`Kind.REWIND_AND_SEND` -- rewind, then run it as a turn (key plus content);
* :attr:`Kind.ANSWER` -- the user's answer to a tool call waiting for approval: the waiting
  task's ``taskId`` and a data part ``{"decision_type": "approve" | "reject"}``, as kagent's
  web UI sends it (kagent-adk 0.10.4 ``_agent_executor._handle_request``).

Anything malformed is a :class:`~rewindtui.server.shared.errors.BadRequest` naming the problem.
"""

from __future__ import annotations

import enum
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from rewindtui.a2a.outgoing import APPROVE, DECISION_KEY, REJECT
from rewindtui.server.shared.errors import BadRequest
from rewindtui.server.shared.wire import REWIND_KEY, text_of

_ID_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._:@+=-]{0,199}$")
_ID_RULE = "use 1-200 letters, digits and ._:@+=-"


class Kind(enum.Enum):
    TURN = "turn"
    REWIND = "rewind"
    REWIND_AND_SEND = "rewind-and-send"
    ANSWER = "answer"


def check_id(value: Any, what: str) -> str:
    if not isinstance(value, str) or not _ID_RE.match(value):
        raise BadRequest(f"invalid {what} {value!r}: {_ID_RULE}")
    return value


def check_invocation(value: Any) -> str:
    """A rewind/fork target: a non-empty string (whether it exists is the session's business)."""
    if not isinstance(value, str) or not value.strip():
        raise BadRequest("rewind_before_invocation_id must be a non-empty string")
    return value


@dataclass(frozen=True)
class Request:
    kind: Kind
    message: dict[str, Any]  # the 0.3 message dict; for a turn, without the rewind key
    context_id: str | None
    task_id: str | None
    rewind_before: str | None
    text: str
    #: for :attr:`Kind.ANSWER`: "approve" or "reject"
    decision: str | None = None

    @property
    def runs_turn(self) -> bool:
        return self.kind is not Kind.REWIND


def decision_of(message: Mapping[str, Any]) -> str | None:
    """The ``decision_type`` of the message's first data part that has one (kagent-core 0.10.4
    ``_hitl_utils.extract_decision_from_message``); BadRequest for a value other than approve /
    reject (kagent's batch decisions are not supported)."""
    for part in message.get("parts") or []:
        data = part.get("data") if isinstance(part, Mapping) and part.get("kind") == "data" else None
        if isinstance(data, Mapping) and DECISION_KEY in data:
            decision = data[DECISION_KEY]
            if decision not in (APPROVE, REJECT):
                raise BadRequest(f"{DECISION_KEY} must be {APPROVE!r} or {REJECT!r}, not {decision!r}")
            return str(decision)
    return None


def classify(message: Mapping[str, Any]) -> Request:
    """The :class:`Request` a 0.3 message dict makes; :class:`BadRequest` if it makes none."""
    metadata = message.get("metadata") or {}
    if not isinstance(metadata, Mapping):
        raise BadRequest("message metadata must be an object")
    context_id = message.get("contextId") or None
    if context_id is not None:
        check_id(context_id, "contextId")
    task_id = message.get("taskId") or None  # an id of another shape is simply not found
    if not message.get("messageId"):
        raise BadRequest("the message has no messageId")
    text = text_of(message).strip()
    has_content = bool(text) or any(p.get("kind") in ("data", "file") for p in message.get("parts") or [])
    turn_message = dict(message)
    if REWIND_KEY in metadata:
        before = check_invocation(metadata[REWIND_KEY])
        if context_id is None:
            raise BadRequest("a rewind needs the contextId of the session to rewind")
        if task_id is not None:
            raise BadRequest("a rewind names a session (contextId), not a task (taskId)")
        rest = {k: v for k, v in metadata.items() if k != REWIND_KEY}
        if rest:
            turn_message["metadata"] = rest
        else:
            turn_message.pop("metadata", None)
        kind = Kind.REWIND_AND_SEND if has_content else Kind.REWIND
        return Request(kind, turn_message, context_id, None, before, text)
    if not has_content:
        raise BadRequest("the message has no content")
    decision = decision_of(message)
    if decision is not None:
        if task_id is None:
            raise BadRequest(f"a {DECISION_KEY} answers a task waiting for approval: give that task's taskId")
        return Request(Kind.ANSWER, turn_message, context_id, task_id, None, text, decision)
    return Request(Kind.TURN, turn_message, context_id, task_id, None, text)
