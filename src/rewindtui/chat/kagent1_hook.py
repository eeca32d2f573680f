"""The Chat's rewind and undo on kagent 1.0 (imports nothing of the profile: the chat's client is a
:class:`rewindtui.kagent1.client.Kagent1Client` when this mode is on), which has no in-place rewind: rewind to before a turn
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
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from rewindtui.client.errors import ClientError, HTTPStatusFailed, Unsupported

#: the rewind mode of the kagent 1.0 profile (``Capabilities.rewind_modes``): rewind is a fork
FORK_MODE = "fork"

if TYPE_CHECKING:  # the chat imports this module; no cycle at run time
    from rewindtui.chat import Chat

PREVIEW = "kagent forks: a new session from turn {previous}; the original is kept"


def rewind_preview(turn: int) -> str:
    """The truth about a rewind to before turn ``turn`` (1-based) on kagent 1.0."""
    return PREVIEW.format(previous=turn - 1)


async def fork_rewind(chat: Chat, invocation_id: str, token: Any) -> None:
    """Fork from the checkpoint before ``invocation_id``'s turn and open the fork; on a refusal or
    a failed fork the view goes back exactly as it was and says why."""
    client = chat.client  # a Kagent1Client (rewindtui.kagent1.client): its fork() forks from a checkpoint
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
    """Go back to the original session of the last rewind (the fork stays, as a session)."""
    undo_target = getattr(chat.client, "undo_target", None)  # Kagent1Client's
    if undo_target is None:
        raise Unsupported("undo by going back needs a kagent 1.0 connection")
    await chat.open(undo_target())
