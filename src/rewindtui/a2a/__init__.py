"""The A2A wire, both dialects: classification, raw accessors, metadata keys, outgoing messages,
the rewind contract and kagent's REST shapes.

Pure: no I/O, no Textual. Wire objects stay plain dicts from the JSON parser, read through
:mod:`rewindtui.a2a.raw`; loading thousands of messages costs little more than the parse.
"""

from rewindtui.a2a import outgoing, raw
from rewindtui.a2a.classify import EventKind, StreamEvent, classify, classify_frame, is_a2a_task, is_task_like
from rewindtui.a2a.dialect import TERMINAL_STATES, TURN_ENDING_STATES, Dialect, norm_role, norm_state

__all__ = [
    "Dialect",
    "EventKind",
    "StreamEvent",
    "TERMINAL_STATES",
    "TURN_ENDING_STATES",
    "classify",
    "classify_frame",
    "is_a2a_task",
    "is_task_like",
    "norm_role",
    "norm_state",
    "outgoing",
    "raw",
]
