"""A stored row whose text cannot be decoded does not make its session unreadable.

SQLite hands back TEXT as bytes; a few garbled bytes inside one stored message (``PRAGMA
integrity_check`` still says ok) made Python's sqlite3 raise "Could not decode to UTF-8 column
'body'" for the whole query, and so a bare HTTP 500 for the whole session. The store's
connections decode with :func:`decode_text` instead: valid UTF-8 as usual, anything else as a
:class:`BadText` (the text with U+FFFD in place of the bad bytes, and the reason). A message body
that is a BadText is answered as :func:`placeholder` -- a message saying it could not be read and
why -- and logged with its row id; everything else in the session reads as stored.

The same holds for a body that is valid UTF-8 but not a message: not JSON (a few bytes changed,
the text cut short), not an object, or lacking a field every reader relies on or holding one of
the wrong type (:func:`message_problem`) -- such a body is never spliced into an answer.

A task row degrades the same way (:func:`task_problem`): a body that is not UTF-8, not a JSON
object, not text at all, or lacking a field (``id``, ``status.state``) or holding one of the
wrong type, or a rewind's history references that are not a list of message numbers, make the row read
as :func:`placeholder_task_body` -- the task's id, session and state
from their own columns, ``metadata.rewindtui_unreadable`` with the reason -- and its history ends
with a note saying so (:func:`task_note`); its messages are read as stored.
"""

from __future__ import annotations

import json
import logging
import re
import sqlite3
from typing import Any

from rewindtui.server.storage.history_refs import problem as history_problem

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


def checked_body(body: Any, seq: Any, *, v1: bool, sound: Any = None) -> str:
    """A message body as stored, or a placeholder message when it cannot be read (logged): not
    UTF-8, not JSON, not a message object (:func:`message_problem`). ``sound``: what
    :func:`sound_sql` said of the row (1: SQLite checked it, so it is not parsed again here)."""
    if sound == 1 and isinstance(body, str) and not isinstance(body, BadText):
        return body
    reason = message_problem(body, v1=v1)
    if reason is None:
        return str(body)
    log.warning("stored message %s cannot be read: %s; answered as a placeholder", seq, reason)
    garbled = body if isinstance(body, str) else ""
    return placeholder(garbled, seq, reason, v1=v1)


#: the roles a stored message may have (A2A 0.3 names, and 1.0's for ``body_v1``)
_ROLES = {False: frozenset(("user", "agent")), True: frozenset(("ROLE_USER", "ROLE_AGENT"))}


def _sound_sql(column: str, v1: bool) -> str:
    roles = ", ".join(f"'{r}'" for r in sorted(_ROLES[v1]))
    kind = "" if v1 else f" AND coalesce(json_extract({column}, '$.kind'), 'message') = 'message'"
    # SQLite 3.42-3.44's json_valid() also accepts JSON5, which clients cannot read: the strict
    # form (flag 1) came with 3.45; between the two every body is checked in Python
    if sqlite3.sqlite_version_info >= (3, 45):
        valid = f"json_valid({column}, 1)"
    elif sqlite3.sqlite_version_info < (3, 42):
        valid = f"json_valid({column})"
    else:
        return "0"
    # nested CASEs: SQLite evaluates a CASE lazily (its documented short-circuit), and the JSON
    # functions raise on text that is not JSON -- which would fail the whole query
    return (
        f"CASE WHEN {column} IS NOT NULL AND {valid} THEN CASE WHEN json_type({column}) = 'object' "
        f"AND json_type({column}, '$.messageId') = 'text' AND json_type({column}, '$.parts') = 'array' THEN "
        f"CASE WHEN json_extract({column}, '$.messageId') != '' AND json_extract({column}, '$.role') IN ({roles}) "
        f"AND coalesce(json_type({column}, '$.metadata'), 'object') IN ('object', 'null'){kind} "
        f"AND NOT EXISTS (SELECT 1 FROM json_each({column}, '$.parts') WHERE type != 'object') "
        "THEN 1 ELSE 0 END ELSE 0 END ELSE 0 END"
    )


def sound_sql(column: str, *, v1: bool) -> str:
    """An SQL expression: 1 when the message body in ``column`` passes :func:`message_problem`'s
    checks (done by SQLite's JSON functions in C, several times faster than parsing it in
    Python), else 0 (then the body is checked in Python, which says why). Text that is not UTF-8
    is caught in Python either way (:class:`BadText`)."""
    return _sound_sql(column, v1)


def message_problem(body: Any, *, v1: bool) -> str | None:
    """Why a stored message body cannot be answered as it is (None: it can be).

    The body is spliced into answers as stored, so it must be one JSON object with the fields
    every reader relies on: ``messageId`` (text), ``role`` (one of the dialect's), ``parts`` (a
    list of objects), ``metadata`` an object when present; in 0.3 JSON ``kind``, when present,
    ``message``."""
    if isinstance(body, BadText):
        return body.reason
    if not isinstance(body, str):
        return f"its stored text is not text (a {type(body).__name__})"
    try:
        data = json.loads(body)
    except ValueError as exc:
        return f"its stored text is not JSON ({exc})"
    return message_shape_problem(data, v1=v1)


def message_shape_problem(data: Any, *, v1: bool) -> str | None:
    """:func:`message_problem` for a message already parsed."""
    if not isinstance(data, dict):
        return "its stored text is not a JSON object"
    if not v1 and data.get("kind", "message") != "message":
        return "its stored kind is not 'message'"
    if not isinstance(data.get("messageId"), str) or not data["messageId"]:
        return "its stored messageId is missing or not text"
    if data.get("role") not in _ROLES[v1]:
        return "its stored role is missing or not one of " + "/".join(sorted(_ROLES[v1]))
    parts = data.get("parts")
    if not isinstance(parts, list) or not all(isinstance(part, dict) for part in parts):
        return "its stored parts are missing or not a list of objects"
    if "metadata" in data and not isinstance(data["metadata"], (dict, type(None))):
        return "its stored metadata is not an object"
    return None


def placeholder(garbled: str, seq: Any, reason: str, *, v1: bool) -> str:
    """A message (0.3 JSON, or 1.0 with ``v1``) standing in for an unreadable stored one: its
    messageId when it can still be found, role agent, one text part with the reason."""
    found = _MESSAGE_ID.search(garbled)
    message_id = found.group(1) if found else f"unreadable-{seq}"
    text = f"(this message could not be read from the store: {reason}; stored message #{seq})"
    if v1:
        message: dict[str, Any] = {"messageId": message_id, "role": "ROLE_AGENT", "parts": [{"text": text}]}
    else:
        message = {
            "kind": "message",
            "messageId": message_id,
            "role": "agent",
            "parts": [{"kind": "text", "text": text}],
        }
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
    shape = _task_shape_problem(data)
    if shape is not None:
        return shape
    if history_refs is None:
        return None
    if isinstance(history_refs, BadText) or not isinstance(history_refs, str):
        return "its stored history references are not text"
    return history_problem(history_refs)


def _task_shape_problem(data: dict[str, Any]) -> str | None:
    """A task object lacking a field the readers rely on, or with one of the wrong type."""
    if not isinstance(data.get("id"), str):
        return "its stored id is missing or not text"
    status = data.get("status")
    if not isinstance(status, dict) or not isinstance(status.get("state"), str):
        return "its stored status is missing or has no state"
    if status.get("message") is not None and message_shape_problem(status["message"], v1=False) is not None:
        return "its stored status message is not a message"
    if "metadata" in data and not isinstance(data["metadata"], (dict, type(None))):
        return "its stored metadata is not an object"
    artifacts = data.get("artifacts")
    if artifacts is not None and (
        not isinstance(artifacts, list)
        or not all(isinstance(a, dict) and isinstance(a.get("parts"), list) for a in artifacts)
    ):
        return "its stored artifacts are not a list of artifacts"
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
