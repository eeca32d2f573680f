"""What several headless commands do: open a session by a prefix of its id, resolve a turn's
invocation id, refuse what the server cannot do, find a turn's items and why it failed, save parts."""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from rewindtui.cli.output import CommandFailed, say

_FAILED_STATES = ("failed", "rejected", "canceled")


async def open_session(chat: Any, session_id: str) -> None:
    """Open an existing session (any unique prefix of its id). An unknown one is a clear error
    (SessionNotFound); a server that cannot give the history back says so on stderr."""
    await chat.open(session_id)
    if chat.history_note:
        say(chat.history_note, kind="note")


def unique(prefix: str, ids: Sequence[str], what: str) -> str | None:
    """The one id of ``ids`` that is ``prefix`` or starts with it (``e-`` may be left out of an
    invocation id); None when none does. Ambiguous: a CommandFailed naming the candidates. An
    empty or blank prefix is refused (it would start every id)."""
    if not prefix.strip():
        raise CommandFailed(f"the {what} id is empty: give the id, or a unique start of it", code="usage")
    if prefix in ids:
        return prefix
    found = sorted({i for i in ids if i.startswith(prefix) or (what == "invocation" and i.startswith("e-" + prefix))})
    if len(found) > 1:
        shown = ", ".join(found[:4]) + (", …" if len(found) > 4 else "")
        raise CommandFailed(f"{what} {prefix!r} is ambiguous: it starts {shown}; give more of it", code="usage")
    return found[0] if found else None


def resolve_invocation(chat: Any, prefix: str) -> str:
    """``--before``: a turn's invocation id, or any unique prefix of one (as ``--session``). What
    reads as a turn number (up to six digits) is refused: ``--before 2`` meant turn 2 and matched
    the id of whichever turn starts with ``e-2`` (ids are hex), and a rewind is not to be guessed."""
    if re.fullmatch(r"\s*[-+]?\d{1,6}\s*", prefix):
        number = prefix.strip()
        raise CommandFailed(
            f"--before {number} is a number: --before takes a turn's invocation id (or a unique start of "
            f"it, such as e-2f47); for turn {number} give --turn {number} (MCP: turn)",
            code="usage",
        )
    return unique(prefix, chat.conversation.turn_invocations(), "invocation") or prefix


def resolve_before(chat: Any, args: Any) -> str:
    """The invocation a rewind or fork goes back before: ``--turn N`` (the turn-number rule,
    model/turn_numbers.py), else ``--before`` (an invocation id or a unique start of one)."""
    turn = getattr(args, "turn", None)
    if turn is None:
        return resolve_invocation(chat, args.before)
    from rewindtui.model import turn_numbers

    if not str(turn).strip():
        raise CommandFailed("--turn is empty: give a turn number", code="usage")
    items = chat.conversation.items
    try:
        return items[turn_numbers.item_index(items, turn_numbers.parse(str(turn)))].rewind_target or ""
    except turn_numbers.TurnNumberError as exc:
        raise CommandFailed(str(exc), code="usage") from None


def require_invocation(chat: Any, invocation_id: str) -> None:
    session_id = chat.session_id
    if chat.conversation.index_of_invocation(invocation_id) is None:
        if not chat.conversation.items and chat.history_note:
            raise CommandFailed(f"cannot check invocation {invocation_id!r}: {chat.history_note}")
        turns = chat.conversation.turn_invocations()
        known = f"its turns are {', '.join(turns[:3])}{', …' if len(turns) > 3 else ''}" if turns else "it has no turns"
        raise CommandFailed(
            f"no invocation {invocation_id!r} in session {session_id} ({known}); see `rewindtui history --session "
            f"{session_id}`"
        )


def require(chat: Any, what: str) -> None:
    """Refuse before touching anything when the server cannot do ``what`` (the reason says why)."""
    from rewindtui.chat import Action

    reason = chat.permissions().why_not(Action(what))
    if reason:
        raise CommandFailed(reason)


def turn_items(chat: Any, message_id: str | None) -> list[Any]:
    """The items of the turn that opened with message ``message_id`` (none if it is not shown)."""
    items = chat.conversation.items
    for i, item in enumerate(items):
        if message_id and message_id in item.message_ids:
            return items[i:]
    return []


def turn_failure(chat: Any) -> str | None:
    """``the turn failed: <why>`` if the last turn ended failed/rejected/canceled. The reason is
    the turn's last error, else its last agent message (first line)."""
    state = chat.conversation.turn_state
    if state not in _FAILED_STATES:
        return None
    reason = ""
    for item in reversed(chat.conversation.items):
        if item.role == "user":
            break
        if item.text.strip() and (not reason or item.kind.value == "error"):
            reason = item.text
            if item.kind.value == "error":
                break
    reason = reason.strip().split("\n", 1)[0]
    return f"the turn {state}" + (f": {reason}" if reason else "")


async def show_rewound(chat: Any) -> None:
    reason = chat.why_not_rewound()
    if reason:
        raise CommandFailed(f"cannot list rewound turns: {reason}")
    await chat.show_rewound()


async def save_item_parts(
    chat: Any, items: Sequence[Any], directory: str | None, *, users: bool = False
) -> dict[int, str]:
    """Save the file and data parts of ``items`` into ``directory``: {id(part): path}. What could not
    be saved is said on stderr (a note; the command still succeeds)."""
    if not directory:
        return {}
    from pathlib import Path

    from rewindtui.client.attachments import savable, save_parts

    saved: dict[int, str] = {}
    for item in items:
        parts = savable(item.other_parts) if item.raw is not None else []
        if not parts or (item.role == "user" and not users):
            continue
        result = await save_parts(parts, Path(directory), http=chat.client.http)
        saved.update({key: str(path) for key, path in result.where.items()})
        for reason in result.skipped:
            say(f"not saved: {reason}", kind="note")
    return saved
