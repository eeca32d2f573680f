"""Redo over A2A, for servers whose rewind is the A2A control message and that have no REST API
(the kagent-rewind add-on): undoing a rewind is the same control message naming the invocation of
the rewind's own event (``rewindtui_rewind_invocation_id`` in the rewind Task's metadata). The
server brings back what that rewind took (ADK's ``rewind_async`` before the rewind event, as the
embedded server's REST redo does) and answers with the effective history.

The hook in ``Chat.redo`` (after its availability check)::

    if not self.client.has_api and caps.rewind_mode == "a2a":
        return await redo_a2a(self, rewind_task_id)
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from rewindtui.a2a import contract, raw
from rewindtui.client.errors import ClientError

if TYPE_CHECKING:
    from rewindtui.chat import Chat
    from rewindtui.chat.undo import UndoPoint


async def undo_point_a2a(chat: Chat, session_id: str) -> UndoPoint | None:
    """What ctrl+z undoes on such a server: the rewind this view is at, when the server says it is
    one it can undo (read back from the server, so it holds after a restart too); None: nothing."""
    from rewindtui.chat.undo import UndoPoint

    target = chat.conversation.current_task_id
    if not target:
        return None
    try:
        task = await chat.client.get_task(target)
    except ClientError:
        return None
    metadata = raw.metadata(task)
    invocation = metadata.get(contract.REWIND_INVOCATION_KEY)
    if not isinstance(invocation, str) or not invocation or metadata.get(contract.REDO_OF_KEY):
        return None
    return UndoPoint(session_id, target, "rewind", None)  # how many turns it took: not kept there


async def redo_a2a(chat: Chat, rewind_task_id: str | None) -> None:
    """Undo the rewind Task ``rewind_task_id`` (None: the rewind this view is at)."""
    from rewindtui.chat import RedoFailed, RewindFailed

    target = rewind_task_id or chat.conversation.current_task_id
    if not target:
        raise RedoFailed("nothing to redo: this conversation shows no rewind")
    try:
        task = await chat.client.get_task(target)
    except ClientError as exc:
        raise RedoFailed(f"redo not sent: the rewind {target!r} could not be read ({exc})") from None
    metadata = raw.metadata(task)
    invocation = metadata.get(contract.REWIND_INVOCATION_KEY)
    if not isinstance(invocation, str) or not invocation or metadata.get(contract.REDO_OF_KEY):
        raise RedoFailed("nothing to redo: the last thing shown is not a rewind this server can undo; nothing was sent")
    chat.rewinding = True
    try:
        await chat._rewind_a2a(invocation, None, chat.conversation.checkpoint())
    except RewindFailed as exc:
        raise RedoFailed(str(exc).replace("rewind refused", "redo refused", 1)) from None
    finally:
        chat.rewinding = False
