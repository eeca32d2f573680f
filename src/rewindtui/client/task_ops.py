"""Tasks and push-notification configs by id, on whichever binding and dialect the client speaks
(the transports route each operation: :mod:`rewindtui.client.transport`,
:mod:`rewindtui.client.grpc_transport`). What ``rewindtui task ...``, ``rewindtui push ...`` and
their MCP tools call.

* :func:`get_task`, :func:`list_tasks` (A2A 1.0 only: 0.3 has no ``ListTasks``; Unsupported says
  so), :func:`cancel_task`, :func:`resubscribe` (the task's events until its turn ends);
* :func:`set_push`, :func:`get_push`, :func:`list_push`, :func:`delete_push`: the configs in
  one flat shape (:func:`rewindtui.a2a.push_wire.flat_config`).
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import TYPE_CHECKING, Any

from rewindtui.a2a import push_wire
from rewindtui.a2a.classify import StreamEvent
from rewindtui.a2a.dialect import Dialect
from rewindtui.client.errors import MalformedFrame, Unsupported
from rewindtui.client.limits import MAX_PAGES
from rewindtui.client.tasks import PageProgress, TaskPage, excerpt_of, task_of

if TYPE_CHECKING:
    from rewindtui.client.a2a_client import A2AClient

#: tasks one ``task list`` reads at most (pages of 100)
MAX_LISTED = 10_000


async def _dialect(client: A2AClient) -> Dialect:
    caps = await client.connect()
    return caps.dialect


async def get_task(client: A2AClient, task_id: str, history_length: int | None = None) -> dict[str, Any]:
    return await client.get_task(task_id, history_length)


async def list_tasks(client: A2AClient, context_id: str | None, *, limit: int = 100) -> list[dict[str, Any]]:
    """The tasks of ``context_id`` (every context the server lets us see when None), page by page,
    at most ``limit``. A 0.3 server: Unsupported (A2A 0.3 has no ListTasks)."""
    if await _dialect(client) is Dialect.V03:
        raise Unsupported(
            "A2A 0.3 has no tasks/list method (ListTasks is A2A 1.0): this agent speaks 0.3, so its tasks "
            "can be read only by id (`rewindtui task get ID`)"
        )
    out: list[dict[str, Any]] = []
    token: str | None = None
    progress = PageProgress(f"tasks of {context_id or 'every context'}")
    limit = max(1, min(limit, MAX_LISTED))
    for _ in range(MAX_PAGES):
        params: dict[str, Any] = {"pageSize": min(100, limit - len(out)), "includeArtifacts": True}
        if context_id:
            params["contextId"] = context_id
        if token:
            params["pageToken"] = token
        result = await client.rpc("list_tasks", params)
        if not isinstance(result, dict) or not isinstance(result.get("tasks", []), list):
            raise MalformedFrame(f"ListTasks: not a task list: {excerpt_of(result)!r}")
        page = TaskPage([task_of(t, "ListTasks") for t in result.get("tasks") or ()], None)
        raw_token = result.get("nextPageToken") or result.get("next_page_token")
        page.next_page_token = raw_token if isinstance(raw_token, str) and raw_token else None
        progress.check(token, page)
        out.extend(page.tasks)
        token = page.next_page_token
        if not token or len(out) >= limit:
            break
    return out[:limit]


async def cancel_task(client: A2AClient, task_id: str) -> dict[str, Any]:
    return await client.cancel_task(task_id)


def resubscribe(client: A2AClient, task_id: str) -> AsyncIterator[StreamEvent]:
    """The task's events (an async generator: close it, e.g. with ``contextlib.aclosing``, when
    leaving it early, so its stream is closed at once)."""
    return client.subscribe(task_id)


# -- push-notification configs -------------------------------------------------------------------
def _one(result: Any, what: str) -> dict[str, Any]:
    config = push_wire.flat_config(result)
    if config is None:
        raise MalformedFrame(f"{what}: not a push notification config: {excerpt_of(result)!r}")
    return config


async def set_push(
    client: A2AClient, task_id: str, url: str, token: str | None = None, config_id: str | None = None
) -> dict[str, Any]:
    params = push_wire.set_params(await _dialect(client), task_id, url, token, config_id)
    return _one(await client.rpc(push_wire.SET, params), "set push config")


async def get_push(client: A2AClient, task_id: str, config_id: str | None = None) -> dict[str, Any]:
    params = push_wire.get_params(await _dialect(client), task_id, config_id)
    return _one(await client.rpc(push_wire.GET, params), "get push config")


async def list_push(client: A2AClient, task_id: str) -> list[dict[str, Any]]:
    params = push_wire.list_params(await _dialect(client), task_id)
    result = await client.rpc(push_wire.LIST, params)
    configs = push_wire.config_list(result)
    if configs is None:
        raise MalformedFrame(f"list push configs: not a list: {excerpt_of(result)!r}")
    return configs


async def delete_push(client: A2AClient, task_id: str, config_id: str) -> None:
    await client.rpc(push_wire.DELETE, push_wire.delete_params(await _dialect(client), task_id, config_id))
