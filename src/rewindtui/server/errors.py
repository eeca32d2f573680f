"""Errors of the embedded server's service layer, each with its HTTP status.

REST turns them into ``{"error": "<text>"}`` with ``status``; the A2A stream
turns them into a final ``failed`` status whose message carries the text and
whose ``metadata.rewindtui_error`` carries ``code``.
"""

from __future__ import annotations


class ServiceError(Exception):
    status = 500
    code = "internal"

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


class BadRequest(ServiceError):
    status = 400
    code = "bad_request"


class InvalidInvocation(BadRequest):
    """The rewind/fork target is not an invocation in the session's current history."""

    code = "invalid_invocation"


class NotFound(ServiceError):
    status = 404
    code = "not_found"


class Busy(ServiceError):
    """A turn (or another rewind/fork) is running on the session."""

    status = 409
    code = "session_busy"


class Conflict(ServiceError):
    status = 409
    code = "conflict"
