"""The store's rows as values (sessions, tasks, journal entries, pages), the SQL that names their
columns, the statements that write them, page cursors, and a task row as A2A 0.3 JSON."""

from __future__ import annotations

import base64
import binascii
import json
import logging
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

from rewindtui.a2a import contract
from rewindtui.server.shared.wire import RENDER_VERSION, dumps, message_v1_text
from rewindtui.server.storage.undecodable import (
    placeholder_task_body,
    task_note,
    task_problem,
)

log = logging.getLogger(__name__)


class InvalidPageToken(ValueError):
    pass


@dataclass(frozen=True)
class SessionRow:
    id: str
    user_id: str
    name: str
    agent_ref: str
    created_at: str
    updated_at: str
    forked_from: str | None = None
    forked_before_invocation_id: str | None = None
    #: read, not stored: the turn of ``forked_from`` the fork branched off at (1-based) ...
    forked_at_turn: int | None = None
    #: ... and how many branches of turns were rewound in this session
    rewound_branches: int = 0

    def to_json(self) -> dict[str, Any]:
        data: dict[str, Any] = {
            "id": self.id,
            "name": self.name,
            "user_id": self.user_id,
            "agent_ref": self.agent_ref,
            "created_at": self.created_at,
            "updated_at": self.updated_at,
            contract.SESSION_BRANCHES_FIELD: self.rewound_branches,
        }
        if self.forked_from:
            data[contract.SESSION_FORKED_FROM_FIELD] = self.forked_from
            data["forked_before_invocation_id"] = self.forked_before_invocation_id
            data[contract.SESSION_FORK_TURN_FIELD] = self.forked_at_turn
        return data


@dataclass(frozen=True)
class TaskRow:
    seq: int
    id: str
    session_id: str
    user_id: str
    kind: str
    invocation_id: str | None
    state: str
    created_at: str
    updated_at: str
    rewound_by: str | None
    rewound_at: str | None
    history_refs: str | None
    body: str
    #: read, not stored: why the row could not be read as stored ("": it could); then ``body``
    #: is a placeholder and ``history_refs`` empty (:mod:`.undecodable`)
    unreadable: str = ""


def task_row(r: Sequence[Any]) -> TaskRow:
    """A TaskRow from a ``_TASK_COLS`` row; a damaged row as a placeholder (logged with its id)."""
    row = TaskRow(*r)
    reason = task_problem(row.body, row.history_refs)
    if reason is None:
        return row
    log.warning("stored task %s (row %s) cannot be read: %s; answered as a placeholder", row.id, row.seq, reason)
    body = placeholder_task_body(row.id, row.session_id, row.state, row.updated_at, reason)
    refs = None if row.history_refs is None else "[]"
    return replace(row, body=body, history_refs=refs, unreadable=reason)


@dataclass(frozen=True)
class Intent:
    """A journal entry: work on ``session_id`` that touches ADK and the store."""

    id: str
    kind: str  # rewind | fork | delete
    session_id: str
    payload: dict[str, Any]
    created_at: str


@dataclass(frozen=True)
class TaskPage:
    tasks: list[TaskRow]
    total: int
    next_token: str  # "" on the last page


_SESSION_COLS = "id, user_id, name, agent_ref, created_at, updated_at, forked_from, forked_before_invocation_id"
#: Read with a session (``FROM sessions AS s``): the turn of the original a fork branched off at
#: (the turns it copied, plus one), and the rewound branches (rewinds that took turns away and
#: were not undone: a rewound task's ``rewound_by`` is the rewind that last took it away).
_SESSION_EXTRAS = (
    "CASE WHEN s.forked_from IS NULL THEN NULL ELSE (SELECT COUNT(DISTINCT m.invocation_id) + 1 "
    "FROM tasks AS t JOIN messages AS m ON m.task_id = t.id WHERE t.session_id = s.id AND t.kind = 'fork') END, "
    "(SELECT COUNT(DISTINCT t.rewound_by) FROM tasks AS t WHERE t.session_id = s.id "
    "AND t.kind IN ('turn', 'fork') AND t.rewound_by IS NOT NULL)"
)
_TASK_COLS = (
    "seq, id, session_id, user_id, kind, invocation_id, state, created_at, updated_at, "
    "rewound_by, rewound_at, history_refs, body"
)
_INSERT_TASK = (
    "INSERT INTO tasks (id, session_id, user_id, kind, invocation_id, state, created_at, updated_at, "
    "history_refs, body) VALUES (?,?,?,?,?,?,?,?,?,?)"
)
_INSERT_MESSAGE = (
    "INSERT INTO messages (session_id, task_id, message_id, invocation_id, role, body, body_v1, render_version) "
    "VALUES (?,?,?,?,?,?,?,?)"
)
Statement = tuple[str, Sequence[Any]]


def message_row(session_id: str, task_id: str, message: dict[str, Any], v1_text: str | None = None) -> tuple[Any, ...]:
    """A messages row; ``v1_text``: the message's 1.0 JSON when already known (else rendered)."""
    return (
        session_id,
        task_id,
        message["messageId"],
        (message.get("metadata") or {}).get("kagent_invocation_id"),
        message["role"],
        dumps(message),
        message_v1_text(message) if v1_text is None else v1_text,
        RENDER_VERSION,
    )


def _task_body(task: dict[str, Any]) -> str:
    return dumps({k: v for k, v in task.items() if k != "history"})


def _insert_session(row: SessionRow) -> Statement:
    return (
        f"INSERT INTO sessions ({_SESSION_COLS}) VALUES (?,?,?,?,?,?,?,?)",
        (
            row.id,
            row.user_id,
            row.name,
            row.agent_ref,
            row.created_at,
            row.updated_at,
            row.forked_from,
            row.forked_before_invocation_id,
        ),
    )


def _encode_cursor(updated_at: str, seq: int) -> str:
    raw = dumps({"u": updated_at, "s": seq}).encode()
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


def _decode_cursor(token: str) -> tuple[str, int]:
    try:
        data = json.loads(base64.urlsafe_b64decode(token + "=" * (-len(token) % 4)))
        updated_at, seq = data["u"], data["s"]
    except (binascii.Error, ValueError, TypeError, KeyError):
        raise InvalidPageToken(
            f"invalid pageToken {token[:40]!r}: use the nextPageToken of a ListTasks answer"
        ) from None
    if not isinstance(updated_at, str) or isinstance(seq, bool) or not isinstance(seq, int):
        raise InvalidPageToken(f"invalid pageToken {token[:40]!r}: use the nextPageToken of a ListTasks answer")
    return updated_at, seq


def task_json(task: TaskRow, history_bodies: Sequence[str], *, mark_rewound: bool = True) -> str:
    """The task as 0.3 JSON text (history spliced in from raw message bodies)."""
    body = task.body.rstrip()  # a JSON object (else the row reads as a placeholder, task_row)
    if mark_rewound and task.rewound_by is not None:
        data = json.loads(body)
        meta = dict(data.get("metadata") or {})
        meta[contract.REWOUND_KEY] = True
        meta[contract.REWOUND_BY_TASK_KEY] = task.rewound_by
        meta[contract.REWOUND_AT_KEY] = task.rewound_at
        data["metadata"] = meta
        body = dumps(data)
    if task.unreadable:
        history_bodies = [*history_bodies, task_note(task.id, task.seq, task.unreadable)]
    return body[:-1] + ',"history":[' + ",".join(history_bodies) + "]}"
