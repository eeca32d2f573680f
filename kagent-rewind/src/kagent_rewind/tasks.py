"""kagent's task stores, as a rewind needs them: list a session's tasks, and keep refused
requests out of the store.

kagent-adk builds one of two stores (``kagent.adk._a2a.KAgentApp.build``):

* local mode (``build(local=True)``): a2a-sdk's ``InMemoryTaskStore``, a dict of Task objects in
  the order they were first saved; it has no "tasks of a session" query, so the session's tasks
  are picked from that dict by ``contextId``.
* with a controller: ``kagent.core.a2a.KAgentTaskStore``, which saves with ``POST /api/tasks``
  (an upsert by id that keeps the row's creation time) and reads ``GET /api/tasks/{id}``. The
  controller lists a session's tasks at ``GET /api/sessions/{id}/tasks``, oldest first, in its
  ``{"error", "data", "message"}`` envelope (kagent ``go/core/internal/httpserver/handlers/
  sessions.go``, ``HandleListTasksForSession``); that is what a kagent UI reloads, and what is
  read here, with the store's own HTTP client and user scoping.
"""

from __future__ import annotations

from typing import Any

from a2a.server.context import ServerCallContext
from a2a.server.tasks import InMemoryTaskStore, TaskStore
from a2a.types import Task, TaskState
from kagent.core.a2a import KAgentTaskStore
from kagent.core.a2a._context import get_call_context_user_id, scoped_request_user_id

from kagent_rewind import contract
from kagent_rewind.history import Refused


async def session_tasks(store: TaskStore, context_id: str, context: ServerCallContext | None) -> list[Task]:
    """The stored tasks of session ``context_id``, oldest first."""
    store = getattr(store, "inner", store)
    if isinstance(store, InMemoryTaskStore):
        async with store.lock:
            return [task for task in store.tasks.values() if task.context_id == context_id]
    if isinstance(store, KAgentTaskStore):
        with scoped_request_user_id(get_call_context_user_id(context)):
            response = await store.client.get(f"/api/sessions/{context_id}/tasks")
        if response.status_code == 404:
            return []
        if response.is_error:
            raise Refused(contract.CODE_INTERNAL, f"could not list the session's tasks: HTTP {response.status_code}")
        body: Any = response.json()
        data = body.get("data") if isinstance(body, dict) else None
        return [Task.model_validate(item) for item in data or []]
    raise Refused(
        contract.CODE_INTERNAL,
        f"rewind cannot list the tasks of a {type(store).__name__}; it supports kagent's stores "
        "(InMemoryTaskStore, KAgentTaskStore)",
    )


class RefusalAwareTaskStore(TaskStore):
    """The app's task store, except that a refused rewind request leaves no task behind.

    a2a-sdk saves every request's task as its events go by; for a refused rewind that would be a
    new failed task holding the control message. The executor names those tasks in ``refused``;
    the store is not asked about them, and their saves are skipped (the final, failed one also
    forgets the id).
    """

    def __init__(self, inner: TaskStore) -> None:
        self.inner = inner
        self.refused: set[str] = set()

    async def save(self, task: Task, context: ServerCallContext | None = None) -> None:
        if task.id in self.refused:
            if task.status.state == TaskState.failed:
                self.refused.discard(task.id)
            return
        await self.inner.save(task, context)

    async def get(self, task_id: str, context: ServerCallContext | None = None) -> Task | None:
        if task_id in self.refused:  # never stored
            return None
        return await self.inner.get(task_id, context)

    async def delete(self, task_id: str, context: ServerCallContext | None = None) -> None:
        await self.inner.delete(task_id, context)

    def __getattr__(self, name: str) -> Any:  # e.g. KAgentTaskStore.wait_for_save
        return getattr(self.inner, name)
