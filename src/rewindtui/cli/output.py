"""Where a headless command writes: readable text or JSON lines on stdout, notes and errors as one
line on stderr (with ``--json``, an error is one JSON object on stdout), and the exit statuses."""

from __future__ import annotations

import sys
from collections.abc import Sequence
from typing import Any

from rewindtui.base.textsafe import sanitize_line
from rewindtui.client.a2a_client import ClientError
from rewindtui.client.attachments import AttachmentError
from rewindtui.client.auth import redact
from rewindtui.client.errors import CLI, user_message
from rewindtui.config.settings import SettingsError

PROG = "rewindtui"
EXIT_FAILED = 1
EXIT_USAGE = 2
EXIT_INTERRUPTED = 130


class UsageError(Exception):
    """Bad arguments (argparse's complaint), exit 2; printed once, as JSON with --json."""

    def __init__(self, message: str, usage: str) -> None:
        super().__init__(message)
        self.usage = usage


class Output:
    """Where a command writes: text or JSON lines on stdout, flushed line by line."""

    def __init__(self, as_json: bool, stream: Any = None) -> None:
        self.as_json = as_json
        self.stream = stream or sys.stdout

    def line(self, text: str) -> None:
        self.stream.write(redact(text) + "\n")
        self.stream.flush()

    def header(self, text: str, record: dict[str, Any]) -> None:
        from rewindtui.output.render_text import json_line

        self.line(json_line(record) if self.as_json else text)

    def items(self, items: Sequence[Any], current: str | None = None, saved: dict[int, str] | None = None) -> None:
        """The whole conversation: each record (``--json``) carries its turn number, each turn's
        header line names it (model/turn_numbers.py)."""
        from rewindtui.model import turn_numbers
        from rewindtui.output.render_text import format_items, item_record, json_line

        if self.as_json:
            for item, number in zip(items, turn_numbers.item_numbers(items), strict=True):
                self.line(json_line(item_record(item, saved, number)))
        else:
            numbers = turn_numbers.numbers_by_target(items)
            for text in format_items(items, current=current, saved=saved, numbers=numbers):
                self.line(text)


def say(message: str, kind: str = "error") -> None:
    sys.stderr.write(f"{PROG}: {kind}: {sanitize_line(redact(message))}\n")
    sys.stderr.flush()


def _json_error(code: str, message: str, hint: str = "") -> None:
    from rewindtui.output.render_text import json_line

    record = {"error": {"code": code, "message": sanitize_line(redact(message)), "hint": sanitize_line(redact(hint))}}
    sys.stdout.write(json_line(record) + "\n")  # with --json, the error is the JSON object on stdout
    sys.stdout.flush()


#: The error code of a failure (``--json`` errors), by class name where the class is not ours here.
_CODES = {
    "SessionNotFound": "not-found",
    "TurnRefused": "refused",
    "TurnInterrupted": "interrupted",
    "RewindFailed": "rewind-failed",
    "RewindOutcomeUnknown": "rewind-unknown",
    "Busy": "busy",
    "QuestionWaiting": "question-waiting",
    "RedoFailed": "redo-failed",
    "UndoFailed": "nothing-to-undo",
}


def report(exc: BaseException, as_json: bool) -> None:
    """Print a failure once: one line, or one JSON object."""
    if isinstance(exc, ClientError):
        code, message, hint = _CODES.get(type(exc).__name__, exc.category), exc.message, exc.hint
        said = user_message(exc, CLI)
        if said != str(exc):  # a known refusal, in the app's words
            message, hint = said, ""
    elif isinstance(exc, CommandFailed):
        code, message, hint = exc.code, str(exc), exc.hint
    elif isinstance(exc, AttachmentError):
        code, message, hint = "attachment", str(exc), ""
    elif isinstance(exc, SettingsError):
        code, message, hint = "settings", str(exc), ""
    elif isinstance(exc, UsageError):
        code, message, hint = "usage", str(exc), exc.usage.strip()
    else:
        code, message, hint = (
            "unexpected",
            f"unexpected {type(exc).__name__}: {exc}",
            "set REWINDTUI_DEBUG=1 for the traceback",
        )
    if as_json:
        _json_error(code, message, hint)
        return
    if isinstance(exc, UsageError):
        sys.stderr.write(exc.usage)
        say(message)
    elif code == "unexpected":
        say(f"{message} ({hint})")
    else:
        say(f"{message}; {hint}" if hint else message)


class CommandFailed(Exception):
    """A command's own failure (e.g. the turn failed); one line, exit 1."""

    def __init__(self, message: str, *, code: str = "failed", hint: str = "") -> None:
        super().__init__(message)
        self.code = code
        self.hint = hint
