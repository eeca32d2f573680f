"""The A2A wire, both dialects: models, classification, metadata keys, outgoing messages.

Pure: no I/O, no Textual.
"""

from rewindtui.a2a.classify import EventKind, StreamEvent, classify, classify_frame, is_a2a_task, is_task_like
from rewindtui.a2a.dialect import TERMINAL_STATES, TURN_ENDING_STATES, Dialect, norm_role, norm_state
from rewindtui.a2a.models import (
    Artifact,
    FileContent,
    JsonRpcError,
    Message,
    Part,
    Task,
    TaskArtifactUpdateEvent,
    TaskStatus,
    TaskStatusUpdateEvent,
)

__all__ = [
    "Artifact",
    "Dialect",
    "EventKind",
    "FileContent",
    "JsonRpcError",
    "Message",
    "Part",
    "StreamEvent",
    "TERMINAL_STATES",
    "TURN_ENDING_STATES",
    "Task",
    "TaskArtifactUpdateEvent",
    "TaskStatus",
    "TaskStatusUpdateEvent",
    "classify",
    "classify_frame",
    "is_a2a_task",
    "is_task_like",
    "norm_role",
    "norm_state",
]
