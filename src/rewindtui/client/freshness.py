"""The view follows the server: before a send, a rewind or an edit, a cheap check that the session
was not changed under the view (another client, the CLI, another tab rewound or sent).

The check reads the session's newest task id -- one REST page of one task
(``GET {api}/sessions/{id}/tasks?limit=1``), on a server whose card says that this is a revision
(the rewind extension's ``newest_task`` param; the embedded server does) -- and compares it with the newest task the view holds (``Conversation.current_task_id``). Every turn
and every rewind makes a new task, so a different id means the session moved on. Then the view is
re-read from the server and the operation is refused with "this session was changed elsewhere:
reloaded" instead of acting on a stale view (nothing was sent). A server that does not say it (or
the check itself failing) is not checked: the operation goes on as before, and the server's own
refusals (a stale rewind target, a turn running elsewhere) still hold. The
A2A 1.1 draft's ``Task.generation`` is the direction for a revision number.

Chat calls :func:`ensure_fresh` with one line per operation.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any
from weakref import WeakKeyDictionary

from rewindtui.client.a2a_client import A2AClient, ClientError

log = logging.getLogger(__name__)

#: one check at a time per chat: a second operation waits, then sees the first one under way
_locks: WeakKeyDictionary[Any, asyncio.Lock] = WeakKeyDictionary()

CHANGED = "this session was changed elsewhere: reloaded (nothing was sent; look, then try again)"


async def newest_task_id(client: A2AClient, session_id: str) -> str | None:
    """The session's newest task id as the server has it now (None: it cannot say)."""
    try:
        return await client.newest_task_id(session_id)
    except ClientError as exc:
        log.info("freshness check of session %s not possible: %s", session_id, exc)
        return None


async def ensure_fresh(chat: Any, error: type[ClientError]) -> None:
    """Raise ``error`` (after re-reading the session) when the server's newest task is not the
    view's. Nothing happens for a new session, or when the server cannot say."""
    lock = _locks.setdefault(chat, asyncio.Lock())
    async with lock:
        sid = chat.session_id
        caps = chat.client.capabilities
        if sid is None or chat.sending or chat.rewinding or caps is None or not caps.newest_task:
            return
        newest = await newest_task_id(chat.client, sid)
        if newest is None or newest == chat.conversation.current_task_id or sid != chat.session_id:
            return
        log.info("session %s changed under the view (newest task %s, view %s)", sid, newest, chat.conversation.current_task_id)
        await chat.open(sid)
    raise error(CHANGED)
