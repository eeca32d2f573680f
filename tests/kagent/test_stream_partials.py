"""Stream mode (kagent-adk ``STREAM=1``): the text deltas stock kagent-adk stores in a task's history
(``kagent_adk_partial: true``) are dropped when history is built; the full message stays.

The stored task is built from the real captures (kagent-adk 0.10.4, ``05_*`` and ``06_*``) the way
a2a-sdk 0.3's ``TaskManager.save_task_event`` (a2a/server/tasks/task_manager.py) stores a stream:
the user message opens the history, and each status update moves the previous status message into
the history. It is served as kagent's ``GET /api/sessions/{id}/tasks`` answers it
(``HandleListTasksForSession``, handlers/sessions.go at 41279fd56 on release/v0.10.x: the envelope,
A2A 0.3 shapes without ``A2A-Version: 1.0``).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from asgi_thread import ServeInThread
from captures import load
from rewindtui.a2a.metadata import is_partial
from rewindtui.client.a2a_client import A2AClient, ServerConfig
from rewindtui.model import extract_messages_from_tasks


def stored_task(capture: str) -> dict[str, Any]:
    """The task a2a-sdk 0.3's task manager keeps after the captured stream."""
    cap = load(capture)
    user = cap.request["params"]["message"] if cap.request else None
    task: dict[str, Any] = {"kind": "task", "history": [], "artifacts": [], "metadata": {}}
    for line in cap.data_lines:
        event = json.loads(line).get("result") or {}
        task.setdefault("id", event.get("taskId"))
        task.setdefault("contextId", event.get("contextId"))
        if event.get("kind") == "status-update":
            previous = (task.get("status") or {}).get("message")
            if previous:
                task["history"].append(previous)
            task["status"] = event["status"]
            task["metadata"].update(event.get("metadata") or {})
        elif event.get("kind") == "artifact-update":
            task["artifacts"].append(event["artifact"])
    if user is not None:
        # the submitted status echoes the user message (first in the history already)
        assert task["history"][0]["messageId"] == user["messageId"]
    return task


@pytest.fixture(scope="module")
def controller() -> Iterator[tuple[str, dict[str, list[dict[str, Any]]]]]:
    tasks: dict[str, list[dict[str, Any]]] = {}

    async def list_tasks(request: Request) -> JSONResponse:
        data = tasks.get(request.path_params["sid"], [])
        return JSONResponse({"error": False, "data": data, "message": "Successfully retrieved session tasks"})

    app = Starlette(routes=[Route("/api/sessions/{sid}/tasks", list_tasks)])
    with ServeInThread(app) as served:
        yield served.url, tasks


@pytest.mark.parametrize(
    "capture", ["kagent-0.10.4/05_turn_streaming_partials.txt", "kagent-0.10.4/06_turn_streaming_with_tool.txt"]
)
async def test_stored_deltas_are_dropped_when_history_is_built(controller, capture):
    base, tasks = controller
    task = stored_task(capture)
    deltas = [m for m in task["history"] if is_partial(m)]
    assert len(deltas) >= 2  # the capture's stored history does hold the deltas
    full = [
        m
        for m in task["history"]
        if m["role"] == "agent" and not is_partial(m) and any(p.get("kind") == "text" for p in m["parts"])
    ]
    tasks["s1"] = [task]
    async with A2AClient(ServerConfig(url=base + "/api/a2a/ns/a/", api=base + "/api")) as client:
        read = await client.session_tasks("s1")
    agent_texts = [i.text for i in extract_messages_from_tasks(read) if i.role == "agent" and i.text]
    # each full agent message once, and no delta as a message of its own
    assert agent_texts == ["".join(p["text"] for p in m["parts"] if p.get("kind") == "text") for m in full]
    assert not any(is_partial(m) for t in read for m in t["history"])
    # what the view would have shown without the drop: every chunk, then the full text
    shown_raw = [i.text for i in extract_messages_from_tasks([task]) if i.role == "agent" and i.text]
    assert len(shown_raw) > len(agent_texts)
