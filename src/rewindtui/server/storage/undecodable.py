"""A stored row whose text cannot be decoded does not make its session unreadable.

SQLite hands back TEXT as bytes; a few garbled bytes inside one stored message (``PRAGMA
integrity_check`` still says ok) made Python's sqlite3 raise "Could not decode to UTF-8 column
'body'" for the whole query, and so a bare HTTP 500 for the whole session. The store's
connections decode with :func:`decode_text` instead: valid UTF-8 as usual, anything else as a
:class:`BadText` (the text with U+FFFD in place of the bad bytes, and the reason). A message body
that is a BadText is answered as :func:`placeholder` -- a message saying it could not be read and
why -- and logged with its row id; everything else in the session reads as stored.

A task row degrades the same way (:func:`task_problem`): a body that is not UTF-8, not a JSON
object, or not text at all, or a rewind's history references that are not a list of message
numbers, make the row read as :func:`placeholder_task_body` -- the task's id, session and state
from their own columns, ``metadata.rewindtui_unreadable`` with the reason -- and its history ends
with a note saying so (:func:`task_note`); its messages are read as stored.
"""

from __future__ import annotations

import json
import logging
import re
from typing import Any

log = logging.getLogger(__name__)

_MESSAGE_ID = re.compile(r'"messageId"\s*:\s*"([^"\\]{1,200})"')


class BadText(str):
    """Text from the database that was not valid UTF-8 (decoded with replacement characters)."""

    reason: str = ""


def decode_text(raw: bytes) -> str:
    """The store's ``text_factory``: UTF-8, or a BadText saying where it is not."""
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        text = BadText(raw.decode("utf-8", "replace"))
        text.reason = f"its stored text is not valid UTF-8 (at byte {exc.start} of {len(raw)})"
        return text


def checked_body(body: Any, seq: Any, *, v1: bool) -> str:
    """A message body as stored, or a placeholder message when it cannot be decoded (logged)."""
    if not isinstance(body, BadText):
        return str(body)
    log.warning("stored message %s cannot be read: %s; answered as a placeholder", seq, body.reason)
    return placeholder(body, seq, body.reason, v1=v1)


def placeholder(garbled: str, seq: Any, reason: str, *, v1: bool) -> str:
    """A message (0.3 JSON, or 1.0 with ``v1``) standing in for an unreadable stored one: its
    messageId when it can still be found, role agent, one text part with the reason."""
    found = _MESSAGE_ID.search(garbled)
    message_id = found.group(1) if found else f"unreadable-{seq}"
    text = f"(this message could not be read from the store: {reason}; stored message #{seq})"
    if v1:
        message: dict[str, Any] = {"messageId": message_id, "role": "ROLE_AGENT", "parts": [{"text": text}]}
    else:
        message = {"kind": "message", "messageId": message_id, "role": "agent", "parts": [{"kind": "text", "text": text}]}
    message["metadata"] = {UNREADABLE_KEY: True}
    return json.dumps(message, ensure_ascii=False)


#: the metadata key marking a placeholder (message or task) read from a damaged row
UNREADABLE_KEY = "rewindtui_unreadable"
#: states a placeholder task may keep from its row's ``state`` column (A2A 0.3 names)
_STATES = frozenset(
    ("submitted", "working", "input-required", "auth-required", "completed", "canceled", "failed", "rejected")
)


def task_problem(body: Any, history_refs: Any) -> str | None:
    """Why a task row cannot be read as stored (None: it can)."""
    if isinstance(body, (bytes, bytearray, memoryview)):
        return "its stored body is not text"
    if not isinstance(body, str):
        return f"its stored body is not text (a {type(body).__name__})"
    if isinstance(body, BadText):
        return body.reason
    try:
        data = json.loads(body)
    except ValueError as exc:
        return f"its stored body is not JSON ({exc})"
    if not isinstance(data, dict):
        return "its stored body is not a JSON object"
    if history_refs is None:
        return None
    if isinstance(history_refs, BadText) or not isinstance(history_refs, str):
        return "its stored history references are not text"
    try:
        refs = json.loads(history_refs)
    except ValueError:
        return "its stored history references are not JSON"
    if not isinstance(refs, list) or not all(isinstance(r, int) and not isinstance(r, bool) for r in refs):
        return "its stored history references are not a list of message numbers"
    return None


def placeholder_task_body(task_id: str, session_id: str, state: Any, updated_at: Any, reason: str) -> str:
    """The body (0.3 task JSON without history) standing in for an unreadable task row."""
    return json.dumps(
        {
            "kind": "task",
            "id": str(task_id),
            "contextId": str(session_id),
            "status": {
                "state": state if isinstance(state, str) and state in _STATES else "unknown",
                "timestamp": updated_at if isinstance(updated_at, str) and not isinstance(updated_at, BadText) else "",
            },
            "metadata": {UNREADABLE_KEY: reason},
        },
        ensure_ascii=False,
        separators=(",", ":"),
    )


def task_note(task_id: str, seq: Any, reason: str) -> str:
    """The note (a 0.3 agent message) ending an unreadable task's history."""
    text = (
        f"(this turn's stored task could not be read from the store: {reason}; stored task #{seq}, "
        "id {task_id}; its messages are shown as stored)"
    ).replace("{task_id}", str(task_id))
    message = {
        "kind": "message",
        "messageId": f"unreadable-task-{seq}",
        "role": "agent",
        "taskId": str(task_id),
        "parts": [{"kind": "text", "text": text}],
        "metadata": {UNREADABLE_KEY: True},
    }
    return json.dumps(message, ensure_ascii=False)
