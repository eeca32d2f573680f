"""What the client reads for the chat's freshness check (:mod:`rewindtui.chat.freshness`): the
session's newest task id, as cheaply as the server can say it.

- :func:`newest_task_id`: one REST page of one task (``GET {api}/sessions/{id}/tasks?limit=1``), on
  a server whose card says that this is a revision (the rewind extension's ``newest_task`` param);
- :func:`newest_listed_task_id`: A2A 1.0 ``ListTasks`` of the session, one task, without history or
  artifacts (the spec orders tasks by last update, newest first); a server that answers "not
  offered" is not asked again (remembered per client).

Both answer None when the server cannot say (the check is then skipped, never failed). The REST
read raises :class:`SessionGone` when the server says the session is not there (404 on the
session's own route: deleted by another client), so nothing acts on it as if it were.
:func:`newest_mark` reads the same task with its state, for the live view
(:mod:`rewindtui.chat.live`): another client answering a question changes a task in place.
"""

from __future__ import annotations

import logging
from typing import Any
from weakref import WeakKeyDictionary

from rewindtui.a2a.dialect import norm_state
from rewindtui.client.a2a_client import A2AClient, ClientError, HTTPStatusFailed, RpcError

log = logging.getLogger(__name__)

#: clients whose server answered that it does not offer ListTasks: not asked again
_unlisted: WeakKeyDictionary[Any, bool] = WeakKeyDictionary()


class SessionGone(ClientError):
    """The server has no such session (any more): another client deleted it."""

    category = "not-found"


def _gone(exc: ClientError, session_id: str) -> SessionGone | None:
    if isinstance(exc, HTTPStatusFailed) and exc.status == 404:
        return SessionGone(f"session {session_id} is no longer on the server (deleted elsewhere)")
    return None


async def newest_task_id(client: A2AClient, session_id: str) -> str | None:
    """The session's newest task id as the server has it now (None: it cannot say).
    SessionGone: the server has no such session."""
    try:
        return await client.newest_task_id(session_id)
    except ClientError as exc:
        gone = _gone(exc, session_id)
        if gone is not None:
            raise gone from exc
        log.info("freshness check of session %s not possible: %s", session_id, exc)
        return None


async def newest_mark(client: A2AClient, session_id: str, *, listed: bool) -> tuple[str, str] | None:
    """The session's newest task as ``(id, state)`` (state in the 0.3 spelling), read as
    :func:`newest_task_id` does (``listed``: as :func:`newest_listed_task_id` does); None when the
    server cannot say. SessionGone: the server has no such session."""
    if listed:
        task = await _newest_listed(client, session_id)
    else:
        try:
            task = await client.newest_task(session_id)
        except ClientError as exc:
            gone = _gone(exc, session_id)
            if gone is not None:
                raise gone from exc
            log.info("live check of session %s not possible: %s", session_id, exc)
            return None
    if task is None or not isinstance(task.get("id"), str):
        return None
    status = task.get("status")
    return task["id"], norm_state(status.get("state") if isinstance(status, dict) else None)


async def newest_listed_task_id(client: A2AClient, session_id: str) -> str | None:
    """The session's most recently updated task by A2A 1.0 ``ListTasks`` (one task, no history,
    no artifacts: one small answer); None when the server does not list it (remembered) or the
    check fails."""
    first = await _newest_listed(client, session_id)
    newest = first.get("id") if first is not None else None
    return newest if isinstance(newest, str) else None


async def _newest_listed(client: A2AClient, session_id: str) -> dict[str, Any] | None:
    if _unlisted.get(client):
        return None
    params = {"contextId": session_id, "pageSize": 1, "historyLength": 0, "includeArtifacts": False}
    try:
        result = await client.rpc("list_tasks", params)
    except RpcError as exc:
        if exc.not_offered:
            _unlisted[client] = True
        log.info("freshness check of session %s not possible: %s", session_id, exc)
        return None
    except ClientError as exc:
        log.info("freshness check of session %s not possible: %s", session_id, exc)
        return None
    tasks = result.get("tasks") if isinstance(result, dict) else None
    first = tasks[0] if isinstance(tasks, list) and tasks and isinstance(tasks[0], dict) else None
    return first
