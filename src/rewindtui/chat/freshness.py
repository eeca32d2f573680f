"""The view follows the server: before a send, a rewind or an edit, a cheap check that the session
was not changed under the view (another client, the CLI, another tab rewound or sent).

The check reads the session's newest task id -- one REST page of one task
(``GET {api}/sessions/{id}/tasks?limit=1``), on a server whose card says that this is a revision
(the rewind extension's ``newest_task`` param; the embedded server does) -- and compares it with the
newest task the view holds (``Conversation.current_task_id``). Every turn
and every rewind makes a new task, so a different id means the session moved on. Then the view is
re-read from the server and the operation is refused with "this session was changed elsewhere:
reloaded" instead of acting on a stale view (nothing was sent). A session the server says it no
longer has (another client deleted it) refuses the operation too: a send would start a session
of the same id afresh, without its turns.

Any other A2A 1.0 server (no revision of its own; the A2A 1.1 draft's ``Task.generation`` is the
direction) is checked with what A2A 1.0 has: ``ListTasks`` of the session, one task, without
history or artifacts -- the spec orders tasks by last update, newest first -- and the session
counts as changed when that task is one the view does not hold (another client's turn, or an
A2A rewind, makes a new task). A task the view holds that changed in place (another client
answering a waiting question) is not seen, and a server that orders its list otherwise is never
taken for changed. A server that does not offer ``ListTasks`` (an A2A 0.3 server; a 1.0 server
answering "not offered", remembered per client) is not checked, nor is anything when the check
itself fails: the operation goes on as before, and the server's own refusals (a stale rewind
target, a turn running elsewhere) still hold.

Chat calls :func:`ensure_fresh` with one line per operation; the reads themselves are the client's
(:mod:`rewindtui.client.freshness`).
"""

from __future__ import annotations

import asyncio
import logging
from typing import TYPE_CHECKING, Any
from weakref import WeakKeyDictionary

from rewindtui.a2a.dialect import Dialect
from rewindtui.client import freshness as reads
from rewindtui.client.errors import ClientError

if TYPE_CHECKING:
    from rewindtui.chat.core import Chat

log = logging.getLogger(__name__)

#: one check at a time per chat: a second operation waits, then sees the first one under way
_locks: WeakKeyDictionary[Any, asyncio.Lock] = WeakKeyDictionary()

CHANGED = "this session was changed elsewhere: reloaded (nothing was sent; look, then try again)"
GONE = (
    "this session is no longer on the server for you (another client deleted it, or it is no longer shared "
    "with you); nothing was sent: F2 opens another"
)


def _held_task_ids(conversation: Any) -> set[str]:
    """Every task id the view holds (its items', the times it noted, its current one)."""
    held = {item.task_id for item in conversation.items if isinstance(item.task_id, str)}
    held.update(t for t in getattr(conversation, "task_times", {}) if isinstance(t, str))
    if conversation.current_task_id:
        held.add(conversation.current_task_id)
    return held


async def _changed(chat: Chat, sid: str) -> str | None:
    """The newest task id when the session changed under the view, else None."""
    caps = chat.client.capabilities
    if caps is None:
        return None
    if caps.newest_task:
        newest = await reads.newest_task_id(chat.client, sid)
        return None if newest is None or newest == chat.conversation.current_task_id else newest
    if caps.dialect is Dialect.V10:
        newest = await reads.newest_listed_task_id(chat.client, sid)
        return None if newest is None or newest in _held_task_ids(chat.conversation) else newest
    return None  # A2A 0.3 has no cheap way to ask


async def ensure_fresh(chat: Chat, error: type[ClientError]) -> None:
    """Raise ``error`` (after re-reading the session) when the server's newest task is not the
    view's (one small request). Nothing happens for a new session, or when the server cannot say."""
    lock = _locks.setdefault(chat, asyncio.Lock())
    async with lock:
        sid = chat.session_id
        caps = chat.client.capabilities
        if sid is None or chat.sending or chat.rewinding or caps is None:
            return
        try:
            newest = await _changed(chat, sid)
        except reads.SessionGone:
            if sid != chat.session_id:
                return
            log.info("session %s is no longer on the server", sid)
            raise error(GONE) from None
        if newest is None or sid != chat.session_id:
            return
        log.info(
            "session %s changed under the view (newest task %s, view %s)",
            sid,
            newest,
            chat.conversation.current_task_id,
        )
        await chat.open(sid)
    raise error(CHANGED)
