"""Errors the embedded server raises (the service and storage alike), each with its HTTP status.

REST turns them into ``{"error": "<text>"}`` with ``status``; the A2A stream
turns them into a final ``failed`` status whose message carries the text and
whose ``metadata.rewindtui_error`` carries ``code`` (one of the contract's ``CODE_*``).
"""

from __future__ import annotations

import sqlite3

from rewindtui.a2a import contract


class ServiceError(Exception):
    status = 500
    code = contract.CODE_INTERNAL

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


class BadRequest(ServiceError):
    status = 400
    code = contract.CODE_BAD_REQUEST


class InvalidInvocation(BadRequest):
    """The rewind/fork target is not an invocation in the session's current history."""

    code = contract.CODE_INVALID_INVOCATION


class NotFound(ServiceError):
    status = 404
    code = contract.CODE_NOT_FOUND


class Busy(ServiceError):
    """A turn (or another rewind/fork) is running on the session."""

    status = 409
    code = contract.CODE_BUSY


class Conflict(ServiceError):
    status = 409
    code = contract.CODE_CONFLICT


class ShuttingDown(ServiceError):
    status = 503
    code = contract.CODE_SHUTTING_DOWN


class StorageError(ServiceError):
    """The data directory cannot take a write (locked, full, read-only, or failing)."""

    status = 503
    code = contract.CODE_STORAGE_UNAVAILABLE


class StorageFull(StorageError):
    status = 507
    code = contract.CODE_STORAGE_FULL


class RecoveryPending(StorageError):
    """A rewind/fork/turn reached the agent but not the store; it is finished before new work."""

    code = contract.CODE_RECOVERY_PENDING


def storage_error(exc: BaseException, doing: str) -> StorageError:
    """``exc`` (a SQLite/SQLAlchemy failure) as a one-line, actionable :class:`StorageError`."""
    text = str(getattr(exc, "orig", None) or exc).strip() or type(exc).__name__
    lowered = text.lower()
    if "locked" in lowered or "busy" in lowered:
        return StorageError(f"could not {doing}: the data directory's database is locked by another process ({text})")
    if "full" in lowered:
        return StorageFull(f"could not {doing}: the data directory is full ({text}); free some space")
    if "readonly" in lowered or "read-only" in lowered or "read only" in lowered:
        return StorageError(f"could not {doing}: the data directory is read-only ({text})")
    return StorageError(f"could not {doing}: the data directory failed ({text})")


def is_storage_failure(exc: BaseException) -> bool:
    """True for errors of the databases themselves (as opposed to bugs or bad input)."""
    if isinstance(exc, sqlite3.Error | OSError):
        return True
    orig = getattr(exc, "orig", None)  # SQLAlchemy wraps the driver's error
    return isinstance(orig, sqlite3.Error | OSError)
