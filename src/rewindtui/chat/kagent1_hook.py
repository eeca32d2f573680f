"""The Chat's rewind and undo on kagent 1.0 (the chat's client is a
:class:`rewindtui.kagent1.client.Kagent1Client` when this mode is on; kagent1/ is the layer below,
imported when needed), which has no in-place rewind: rewind to before a turn
is a fork from the checkpoint after the turn before it; the app moves to the fork and keeps the
original as the rewound branch; undo opens the original again.

The hook in ``Chat.rewind`` (one line, where it picks REST or A2A rewind)::

    if FORK_MODE in caps.rewind_modes:
        await fork_rewind(self, invocation_id, token)

and in ``Chat.redo`` (after its availability check)::

    if FORK_MODE in caps.rewind_modes:
        return await fork_undo(self)

With text (edit = fork then send), ``Chat.rewind`` sends it as the next turn of the session it is
now on (the fork), as it does after a REST rewind.

What the chat says about it, each through one function here that answers for every server (""
or None where the server rewinds in place): the preview's words (:func:`preview_for`), the
status line's rewind words with the checkpoints' costs (:func:`rewind_words`), why a session is
read-only (:func:`read_only_reason`), and the one undo after a rewind (:func:`undo_point_from`,
read from where the profile keeps which conversation a fork came from -- kagent cannot tell).
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, cast

from rewindtui.a2a import raw
from rewindtui.chat.undo import EDIT_OF_KEY, UndoPoint
from rewindtui.client.errors import ClientError, HTTPStatusFailed, Unsupported
from rewindtui.kagent1 import FORK_MODE
from rewindtui.model import Conversation

if TYPE_CHECKING:  # the chat imports this module; no cycle at run time
    from rewindtui.chat import Chat
    from rewindtui.kagent1.client import Kagent1Client

__all__ = ["FORK_MODE"]


def _kagent1(chat: Chat) -> Kagent1Client | None:
    """The chat's client when it is kagent 1.0's. Its module (protobuf, the generated messages) is
    loaded only by the kagent 1.0 profile: while it is not, no client can be one."""
    module = sys.modules.get("rewindtui.kagent1.client")
    if module is None:
        return None
    client = chat.client
    return cast("Kagent1Client", client) if isinstance(client, module.Kagent1Client) else None


PREVIEW = "kagent forks: a new session from turn {previous}; the original is kept"


def rewind_preview(turn: int) -> str:
    """The truth about a rewind to before turn ``turn`` (1-based) on kagent 1.0."""
    return PREVIEW.format(previous=turn - 1)


def _forks(chat: Chat) -> bool:
    caps = chat.client.capabilities
    return caps is not None and FORK_MODE in caps.rewind_modes


def preview_for(chat: Chat, before_turn: int) -> str:
    """The preview's words for a rewind to before turn ``before_turn`` when the server does not
    rewind in place ("" when it does: the preview then says which turns go): on kagent 1.0 a
    fork from the checkpoint after the turn before, or why there is none to fork from."""
    if not _forks(chat):
        return ""
    client = _kagent1(chat)  # it knows the session's checkpoints
    if client is None or chat.session_id is None:
        return rewind_preview(before_turn)
    turns = chat.conversation.turn_invocations()
    previous = turns[before_turn - 2] if 2 <= before_turn <= len(turns) + 1 else None
    head = next(
        (
            i.task_id
            for i in reversed(chat.conversation.items)
            if previous is not None and i.invocation_id == previous and i.task_id
        ),
        None,
    )
    return client.fork_preview(chat.session_id, before_turn, head)


def rewind_words(chat: Chat) -> str | None:
    """The status line's rewind words on kagent 1.0 ("fork", the checkpoints' count and time, a
    skipped checkpoint), None elsewhere."""
    if not _forks(chat):
        return None
    if read_only_reason(chat):
        return "fork · not on a read-only share"
    client = _kagent1(chat)
    return f"fork · {client.rewind_words()}" if client is not None else "fork"


def read_only_reason(chat: Chat) -> str:
    """Why the open session may be read but not written to ("" when it may be written to): a
    session opened from a read-only share."""
    client = _kagent1(chat)
    return client.read_only_reason if client is not None else ""


@dataclass(frozen=True)
class ForkUndo(UndoPoint):
    """The undo of a rewind that forked: go back to the original (``rewind_task_id`` holds its
    id); the fork stays a session of its own."""

    @property
    def label(self) -> str:
        what = "the edit" if self.kind == "edit" else "the rewind"
        return f"undo {what}: back to the original session"


def _edited(task: Any) -> bool:
    return isinstance(task, dict) and any(
        raw.metadata(m).get(EDIT_OF_KEY) for m in raw.history(task) if isinstance(m, dict) and raw.role(m) == "user"
    )


def undo_point_from(chat: Chat, session_id: str, tasks: Sequence[Any], *, whole: bool = True) -> UndoPoint | None:
    """The one undo in ``session_id`` when a rewind here made it (a fork) and nothing but the
    edit's own turn was sent on it since (a plain send ends a rewind's undo, as on servers that
    rewind in place); ``tasks``: the session's, oldest first (``whole``: all of them)."""
    client = _kagent1(chat)
    record = client.fork_of(session_id) if client is not None else None
    if record is None or not whole:
        return None
    listed = [t for t in tasks if isinstance(t, dict)]
    shown = Conversation(session_id)
    shown.load_tasks(listed)
    turns = len(shown.turn_invocations())  # a task may hold several turns (a fork's first one)
    if turns == record.fork_turns:
        return ForkUndo(session_id, record.original, "rewind", record.turns_gone)
    if turns == record.fork_turns + 1 and listed and _edited(listed[-1]):
        return ForkUndo(session_id, record.original, "edit", record.turns_gone)
    return None


async def read_undo_point(chat: Chat, session_id: str) -> UndoPoint | None:
    """:func:`undo_point_from`, reading the session's tasks (only when a rewind made it)."""
    client = _kagent1(chat)
    if client is None or client.fork_of(session_id) is None:
        return None
    try:
        tasks = await client.session_tasks(session_id)
    except ClientError:
        return None
    return undo_point_from(chat, session_id, tasks)


async def fork_rewind(chat: Chat, invocation_id: str, token: Any) -> None:
    """Fork from the checkpoint before ``invocation_id``'s turn and open the fork; on a refusal or
    a failed fork the view goes back exactly as it was and says why."""
    client = _kagent1(chat)  # its fork() forks from a checkpoint
    if client is None:
        raise Unsupported("rewind by fork needs a kagent 1.0 connection")
    original = chat.session_id
    if original is None:
        raise Unsupported("rewind by fork needs an open session")
    try:
        session = await client.fork(original, invocation_id)
    except HTTPStatusFailed as exc:
        raise await chat._refused(token, exc.detail or str(exc)) from None
    except ClientError as exc:
        raise await chat._refused(token, str(exc)) from None
    chat.history.remember(session.id, title=session.name, forked_from=original)
    await chat.open(session.id)


async def fork_undo(chat: Chat) -> None:
    """Go back to the original session of the rewind that made the open one (the fork stays, as
    a session)."""
    client = _kagent1(chat)
    if client is None:
        raise Unsupported("undo by going back needs a kagent 1.0 connection")
    fork = chat.session_id
    if fork is None:
        raise Unsupported("nothing to undo: no session is open")
    await chat.open(client.undo_target(fork))
    client.undone(fork)  # only once the original is open: a failed open keeps the undo
