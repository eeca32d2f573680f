"""The conversation as pure state: what the user sees, built from tasks and stream events.

One source of truth for the transcript. It merges a session's tasks (``extract_messages_from_tasks``),
applies stream events (replace vs append, live partial text, tool call/result pairing), and does
the optimistic side of rewind (truncate, and roll back to the identical view). No I/O, no Textual.

Every mutation returns a :class:`Change` so a view can redraw only what changed: ``first`` is the
lowest index whose item identity changed (None if the list's structure is unchanged) and
``updated`` lists items whose content changed in place (their ``rev`` went up).
"""

from rewindtui.model.items import (
    CANCELED,
    CLIENT_STATES,
    EFFECTIVE_HISTORY_KEY,
    INTERRUPTED,
    Change,
    Confirmation,
    Item,
    ItemKind,
    RewindToken,
    ToolCall,
)
from rewindtui.model.stream import Conversation, extract_messages_from_tasks

__all__ = [
    "CANCELED",
    "CLIENT_STATES",
    "EFFECTIVE_HISTORY_KEY",
    "INTERRUPTED",
    "Change",
    "Confirmation",
    "Conversation",
    "Item",
    "ItemKind",
    "RewindToken",
    "ToolCall",
    "extract_messages_from_tasks",
]
