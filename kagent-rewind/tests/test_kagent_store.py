"""Listing a session's tasks through kagent's controller store (``KAgentTaskStore``).

The controller here is a test double of kagent's REST API (kagent-dev/kagent @ae5a948, the last
commit with these routes in REST), served through httpx's MockTransport; each route says which
Go handler it mirrors. The store and its user header hook are kagent's own.
"""

from __future__ import annotations

import json
from typing import Any

import httpx
import pytest
from a2a.server.context import ServerCallContext
from a2a.types import Message, Part, Role, Task, TaskState, TaskStatus, TextPart
from kagent.adk._token import KAgentTokenService
from kagent.core.a2a import KAgentTaskStore

from kagent_rewind.history import Refused, cut_history, merged_history, rewrite_task
from kagent_rewind.tasks import RefusalAwareTaskStore, session_tasks


class Controller:
    def __init__(self) -> None:
        self.tasks: dict[str, dict[str, Any]] = {}  # insertion order = created_at order
        self.sessions = {"s1"}
        self.users: list[str | None] = []
        self.fail = False

    def handle(self, request: httpx.Request) -> httpx.Response:
        self.users.append(request.headers.get("x-user-id"))
        path = request.url.path
        if self.fail:
            return httpx.Response(500, json={"error": True, "message": "database is down"})
        if request.method == "POST" and path == "/api/tasks":
            # handlers/tasks.go HandleCreateTask: upsert by id (database UpsertTask keeps created_at)
            task = json.loads(request.content)
            self.tasks[task["id"]] = task
            return httpx.Response(201, json={"error": False, "data": task, "message": "Successfully created task"})
        if request.method == "GET" and path.startswith("/api/sessions/") and path.endswith("/tasks"):
            # handlers/sessions.go HandleListTasksForSession: 404 for an unknown session, else the
            # session's tasks ORDER BY created_at ASC in the StandardResponse envelope
            sid = path.split("/")[3]
            if sid not in self.sessions:
                return httpx.Response(404, json={"error": "Session not found for given ID"})
            data = [t for t in self.tasks.values() if (t.get("context_id") or t.get("contextId")) == sid]
            return httpx.Response(200, json={"error": False, "data": data, "message": "Successfully retrieved session tasks"})
        return httpx.Response(404, json={"error": "not found"})


def task(task_id: str, *texts: tuple[str, str | None]) -> Task:
    history = [
        Message(
            message_id=f"{task_id}-{i}",
            role=Role.user if inv is None else Role.agent,
            parts=[Part(root=TextPart(text=text))],
            metadata={"kagent_invocation_id": inv} if inv else None,
        )
        for i, (text, inv) in enumerate(texts)
    ]
    return Task(
        id=task_id,
        context_id="s1",
        status=TaskStatus(state=TaskState.completed),
        history=history,
        metadata={"kagent_invocation_id": next(inv for _, inv in texts if inv)},
    )


@pytest.fixture
def controller() -> Controller:
    return Controller()


@pytest.fixture
def store(controller: Controller) -> KAgentTaskStore:
    client = httpx.AsyncClient(
        base_url="http://controller",
        transport=httpx.MockTransport(controller.handle),
        event_hooks=KAgentTokenService("test__NS__echo_agent").event_hooks(),
    )
    return KAgentTaskStore(client)


ALICE = ServerCallContext(state={"headers": {"x-user-id": "alice"}})


async def test_session_tasks_come_from_the_controller_oldest_first(controller: Controller, store: KAgentTaskStore) -> None:
    await store.save(task("t1", ("first", None), ("answer 1", "e-1")), ALICE)
    await store.save(task("t2", ("second", None), ("answer 2", "e-2")), ALICE)
    wrapped = RefusalAwareTaskStore(store)
    tasks = await session_tasks(wrapped, "s1", ALICE)
    assert [t.id for t in tasks] == ["t1", "t2"]
    assert controller.users[-1] == "alice"  # the caller's user, as kagent's store sends it

    # the rewrite is an upsert: the task keeps its place, without the rewound messages
    cut = cut_history(merged_history(tasks), ["e-2"])
    for t in tasks:
        rewritten = rewrite_task(t, cut, "r1")
        if rewritten is not None:
            await wrapped.inner.save(rewritten, ALICE)
    again = await session_tasks(wrapped, "s1", ALICE)
    assert [t.id for t in again] == ["t1", "t2"] and again[1].history == []
    assert [m.message_id for m in again[0].history] == ["t1-0", "t1-1"]


async def test_unknown_session_has_no_tasks_and_errors_refuse(controller: Controller, store: KAgentTaskStore) -> None:
    assert await session_tasks(store, "nope", None) == []
    controller.fail = True
    with pytest.raises(Refused, match="HTTP 500"):
        await session_tasks(store, "s1", None)


async def test_a_refused_request_leaves_no_task(controller: Controller, store: KAgentTaskStore) -> None:
    wrapped = RefusalAwareTaskStore(store)
    wrapped.refused.add("t9")
    submitted = task("t9", ("", None), ("x", "e-9"))
    submitted.status = TaskStatus(state=TaskState.submitted)
    await wrapped.save(submitted)
    submitted.status = TaskStatus(state=TaskState.failed)
    await wrapped.save(submitted)
    assert "t9" not in controller.tasks and wrapped.refused == set()
    await wrapped.save(task("t3", ("hi", None), ("a", "e-3")))
    assert "t3" in controller.tasks
