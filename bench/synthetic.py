"""Synthetic sessions for benchmarks and large-session tests: kagent-shaped tasks (A2A 0.3 JSON),
one task per turn, a user message and agent messages with realistic metadata, some tool calls."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from typing import Any


def _meta(invocation: str, session: str) -> dict[str, Any]:
    return {
        "kagent_adk_partial": False,
        "kagent_app_name": "local__NS__demo",
        "kagent_user_id": "local",
        "kagent_session_id": session,
        "kagent_invocation_id": invocation,
        "kagent_author": "demo",
    }


def make_tasks(
    messages: int, *, session: str = "bench-session", per_turn: int = 2, tool_every: int = 10
) -> list[dict[str, Any]]:
    """About ``messages`` messages in turns of ``per_turn`` (user + agent replies)."""
    turns = -(-messages // per_turn)
    return [
        make_turn(t, min(per_turn, messages - (t - 1) * per_turn), session, tool_every, per_turn)
        for t in range(1, turns + 1)
    ]


def task_pages(
    messages: int, page: int, *, session: str = "bench-session", per_turn: int = 2, tool_every: int = 10
) -> Iterator[list[dict[str, Any]]]:
    """The tasks of ``make_tasks(messages)`` a page of ``page`` tasks at a time, newest page first
    (each oldest first), as a server pages them -- made a page at a time."""
    turns = -(-messages // per_turn)
    for last in range(turns, 0, -page):
        first = max(1, last - page + 1)
        yield [
            make_turn(t, min(per_turn, messages - (t - 1) * per_turn), session, tool_every, per_turn)
            for t in range(first, last + 1)
        ]


def make_turn(
    turn: int, count: int, session: str = "bench-session", tool_every: int = 10, per_turn: int = 2
) -> dict[str, Any]:
    """Turn ``turn`` (1-based) of a synthetic session: a task with ``count`` messages."""
    made = 0
    task_id = f"task-{turn}"
    invocation = f"e-{uuid.UUID(int=turn)}"
    history = [
        {
            "kind": "message",
            "messageId": f"u-{turn}",
            "role": "user",
            "contextId": session,
            "taskId": task_id,
            "parts": [{"kind": "text", "text": f"message number {turn}: tell me about item {turn}"}],
            "metadata": _meta(invocation, session) | {"kagent_author": "user"},
        }
    ]
    made += 1
    for j in range(count - 1):
        if made >= count:
            break
        if tool_every and turn % tool_every == 0 and j == 0:
            call_id = f"call-{turn}"
            history.append(
                {
                    "kind": "message",
                    "messageId": f"c-{turn}",
                    "role": "agent",
                    "contextId": session,
                    "taskId": task_id,
                    "metadata": _meta(invocation, session),
                    "parts": [
                        {
                            "kind": "data",
                            "data": {"id": call_id, "name": "get_weather", "args": {"city": f"City {turn}"}},
                            "metadata": {"kagent_type": "function_call"},
                        }
                    ],
                }
            )
            made += 1
            continue
        text = (
            f"You said: message number {turn} (turn {turn}). Here is a paragraph of **markdown** with a "
            f"list:\n\n- first point about item {turn}\n- second point\n\nAnd `some code` too."
        )
        history.append(
            {
                "kind": "message",
                "messageId": f"a-{turn}-{j}",
                "role": "agent",
                "contextId": session,
                "taskId": task_id,
                "metadata": _meta(invocation, session),
                "parts": [{"kind": "text", "text": text}],
            }
        )
        made += 1
    return {
        "kind": "task",
        "id": task_id,
        "contextId": session,
        "status": {"state": "completed"},
        "history": history,
        "metadata": _meta(invocation, session),
    }
