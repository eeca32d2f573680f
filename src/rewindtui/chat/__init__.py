"""The operations a user performs on a session — open, send, stop, answer, rewind,
edit-and-resend, fork, redo, restore, undo — as plain asyncio over the client and the
conversation model. The app and the headless commands both drive this; it knows nothing about
terminals. The API is described in docs/chat-core.md.

Every change to the conversation is passed to ``listener`` (a :class:`~rewindtui.model.Change`)
as it happens, so a view can redraw incrementally.

The view is the server's truth:

- A send the server refuses (an HTTP error, a JSON-RPC error, or a failed status before the server
  took the message) leaves no trace in the view and raises :class:`TurnRefused`: the caller keeps
  the draft.
- A stream that is cut, ends without a final status, or carries an error after the server took the
  message is never shown as a finished turn: the stream is resumed where the server offers it
  (``SubscribeToTask`` / ``tasks/resubscribe``), else the turn is re-read from the server; if
  it was not resumed, :class:`TurnInterrupted` says what the server holds. The turn is marked
  ``interrupted`` unless the server says how it ended.
- A rewind the server clearly refuses is rolled back exactly (:class:`RewindFailed`); one whose
  outcome is unknown (connection lost after sending, timeout, 5xx, no answer) re-reads the
  server's view and shows that (:class:`RewindOutcomeUnknown`).

What may be done at all is decided in one place, :meth:`Chat.permissions` (:class:`Permissions`,
``why_not(Action)``).
"""

from rewindtui.chat.base import Listener, PendingEdit
from rewindtui.chat.core import QUESTION_FIRST, Chat
from rewindtui.chat.errors import (
    AnsweredElsewhere,
    Busy,
    QuestionWaiting,
    RedoFailed,
    RewindFailed,
    RewindOutcomeUnknown,
    StoppedBeforeSending,
    TurnInterrupted,
    TurnRefused,
    UndoFailed,
)
from rewindtui.chat.history import SessionNotFound
from rewindtui.chat.limits import (
    ANSWER_TAIL,
    FREEZE_AFTER_OBJECTS,
    LONG_SESSION_ITEMS,
    OPEN_PAGE_TASKS,
    POLL_INTERVAL,
    STOP_GRACE,
    derive_title,
    gc_paused,
)
from rewindtui.chat.outcome import Outcome
from rewindtui.chat.permissions import Action, Permissions
from rewindtui.chat.status import TurnStatus, turn_status
from rewindtui.chat.undo import EDIT_OF_KEY, UndoPoint
from rewindtui.model import Confirmation

__all__ = [
    "ANSWER_TAIL",
    "EDIT_OF_KEY",
    "FREEZE_AFTER_OBJECTS",
    "LONG_SESSION_ITEMS",
    "OPEN_PAGE_TASKS",
    "POLL_INTERVAL",
    "QUESTION_FIRST",
    "STOP_GRACE",
    "Action",
    "AnsweredElsewhere",
    "Busy",
    "Chat",
    "Confirmation",
    "Listener",
    "Outcome",
    "PendingEdit",
    "Permissions",
    "QuestionWaiting",
    "StoppedBeforeSending",
    "RedoFailed",
    "RewindFailed",
    "RewindOutcomeUnknown",
    "SessionNotFound",
    "TurnInterrupted",
    "TurnRefused",
    "TurnStatus",
    "UndoFailed",
    "UndoPoint",
    "derive_title",
    "gc_paused",
    "turn_status",
]
