"""Seed a long session fast: the ADK events and the store rows that real turns leave, in bulk.

A real turn on the demo model writes two ADK events (the user's message and the agent's answer,
one invocation) and, in the store, a ``turn`` task (completed, with an artifact) owning two
messages (0.3 JSON plus their 1.0 rendering). This writes exactly those, for ``turns`` turns,
through the server's own services, a transaction per 10,000 turns: the events with
``CachedDatabaseSessionService.import_events``
(one transaction) and the store rows with the store's own statements in one transaction -- seconds
for 10,000 turns where real turns would take an hour (ADK rebuilds the model's context from every
event on each turn). Used by ``bench_server_big.py`` and the large-session server tests.
"""

from __future__ import annotations

import uuid
from typing import Any

from google.adk.events.event import Event
from google.genai import types

from rewindtui.server.agent.demo_model import _history
from rewindtui.server.http.app import ServerParts
from rewindtui.server.shared.paths import APP_NAME
from rewindtui.server.shared.wire import kagent_metadata, now_iso
from rewindtui.server.storage.store import _INSERT_MESSAGE, _INSERT_TASK, Statement, _task_body, message_row

USER = "local"


BATCH = 10_000  # turns written per transaction (a 100,000-turn session is ten)


async def seed_session(parts: ServerParts, session_id: str, turns: int, *, user_id: str = USER) -> list[str]:
    """A new session ``session_id`` holding ``turns`` completed turns; returns their invocation ids."""
    service, store, sessions = parts.service, parts.store, parts.session_service
    await service.create_session(user_id, name=f"{turns} turns", session_id=session_id)
    adk = await sessions.get_session(app_name=APP_NAME, user_id=user_id, session_id=session_id)
    assert adk is not None
    base = {"app_name": APP_NAME, "user_id": user_id, "session_id": session_id}
    events: list[Event] = []
    statements: list[Statement] = []
    invocations: list[str] = []
    seen: list[str] = []
    for i in range(turns):
        if events and i % BATCH == 0:
            await _write(parts, adk, events, statements)
            events, statements = [], []
        inv = f"e-{uuid.uuid4()}"
        invocations.append(inv)
        text = f"message number {i}: some words to make it look like a chat line"
        seen.append(text)
        answer = f"You said: {text} (turn {i + 1}; history: {_history(seen)}; weather_calls=0)"
        user_event = Event(
            invocation_id=inv, author="user", content=types.Content(role="user", parts=[types.Part(text=text)])
        )
        agent_event = Event(
            invocation_id=inv, author="demo", content=types.Content(role="model", parts=[types.Part(text=answer)])
        )
        events += [user_event, agent_event]
        task_id = str(uuid.uuid4())
        ts = now_iso()
        user_message = {
            "kind": "message",
            "messageId": str(uuid.uuid4()),
            "role": "user",
            "parts": [{"kind": "text", "text": text}],
            "contextId": session_id,
            "taskId": task_id,
            "metadata": kagent_metadata(**base, invocation_id=inv, author="user", partial=False),
        }
        agent_message = {
            "kind": "message",
            "messageId": agent_event.id,
            "role": "agent",
            "parts": [{"kind": "text", "text": answer}],
            "contextId": session_id,
            "taskId": task_id,
            "metadata": kagent_metadata(**base, invocation_id=inv, author="demo", partial=False),
        }
        task: dict[str, Any] = {
            "kind": "task",
            "id": task_id,
            "contextId": session_id,
            "status": {"state": "completed", "timestamp": ts},
            "artifacts": [{"artifactId": str(uuid.uuid4()), "parts": [{"kind": "text", "text": answer}]}],
            "metadata": kagent_metadata(**base, invocation_id=inv, author="demo", partial=False),
        }
        statements += [
            (_INSERT_TASK, (task_id, session_id, user_id, "turn", inv, "completed", ts, ts, None, _task_body(task))),
            (_INSERT_MESSAGE, message_row(session_id, task_id, user_message)),
            (_INSERT_MESSAGE, message_row(session_id, task_id, agent_message)),
        ]
    await _write(parts, adk, events, statements)
    async with store.transaction() as tx:
        await tx.execute([("UPDATE sessions SET updated_at = ? WHERE id = ?", (now_iso(), session_id))])
    extend = getattr(sessions, "extend_checkpoints", None)
    if extend is not None:  # what the turns would have left (a checkpoint every 200 events)
        await extend(APP_NAME, user_id, session_id)
    sessions.forget(APP_NAME, user_id, session_id)
    return invocations


async def _write(parts: ServerParts, adk: Any, events: list[Event], statements: list[Statement]) -> None:
    await parts.session_service.import_events(adk, events)
    async with parts.store.transaction() as tx:
        await tx.execute(statements)
