"""The errors a chat operation raises (all :class:`~rewindtui.client.a2a_client.ClientError`: one line a
person can act on)."""

from __future__ import annotations

import logging

from rewindtui.client.a2a_client import ClientError

log = logging.getLogger(__name__)


# -- errors ------------------------------------------------------------------------------------
class Busy(ClientError):
    """Another turn or rewind is in flight."""


class TurnRefused(ClientError):
    """The server did not take the message; the view shows no trace of it (keep the draft)."""


class StoppedBeforeSending(TurnRefused):
    """A stop came while the send was still being prepared (the freshness check, a new session):
    the message never left, the server has nothing of it (keep the draft)."""

    def __init__(self, message: str = "Stopped before it was sent: the server never got it.") -> None:
        super().__init__(message)


class AnsweredElsewhere(TurnRefused):
    """The question was answered already (by another client): the server refused this answer, and
    the view now shows the session as the server has it."""


class TurnInterrupted(ClientError):
    """The stream stopped before the turn's end and could not be resumed. The view shows what the
    server holds; ``server_state`` is its state of the turn (None: it could not say)."""

    def __init__(self, message: str, server_state: str | None = None) -> None:
        super().__init__(message)
        self.server_state = server_state


class RewindFailed(ClientError):
    """The server refused the rewind (or it was not sent); the view was rolled back exactly."""


class RewindOutcomeUnknown(ClientError):
    """The rewind's answer was lost; the view shows the server's view, re-read afterwards
    (``reread``; False: the server could not give it back, and the view is as before)."""

    def __init__(self, message: str, reread: bool = True) -> None:
        super().__init__(message)
        self.reread = reread


class RedoFailed(ClientError):
    """The server refused the redo (or it was not sent); nothing changed."""


class QuestionWaiting(TurnRefused):
    """A question waits for its answer (approve or reject): nothing was sent (keep the draft)."""


class UndoFailed(ClientError):
    """Nothing to undo, or the session changed on the server since the undo was offered: nothing
    was undone."""
