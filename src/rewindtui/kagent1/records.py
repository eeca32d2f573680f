"""kagent 1.0's checkpoints and shares as plain records (what the commands print and the app
lists): ids, names, states in words, times."""

from __future__ import annotations

from typing import Any

from rewindtui.kagent1.client import stamp
from rewindtui.kagent1.gen import kagent1_pb2 as pb


def checkpoint_record(c: Any) -> dict[str, Any]:
    return {
        "id": c.id,
        "name": c.name,
        "after_turn": int(c.history_sequence),
        "head_task": c.head_task_id,
        "state": _enum(pb.CheckpointState, c.state, "CHECKPOINT_STATE_"),
        "created_at": stamp(c.created_at),
    }


def share_record(s: Any) -> dict[str, Any]:
    return {
        "id": s.id,
        "session": s.session_id,
        "permission": _enum(pb.SessionSharePermission, s.permission, "SESSION_SHARE_PERMISSION_"),
        "created_at": stamp(s.created_at),
    }


def _enum(enum: Any, value: int, prefix: str) -> str:
    try:
        return str(enum.Name(value)).removeprefix(prefix).lower().replace("_", "-")
    except ValueError:
        return f"unknown ({value})"
