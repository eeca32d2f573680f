"""Tasks as the client reads them: one page of a session's tasks (:class:`TaskPage`), the check
that pages advance (:class:`PageProgress`, :class:`PagingStalled`), and a task out of an answer."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from rewindtui.a2a.classify import classify
from rewindtui.a2a.stored_partials import drop_stored_partials
from rewindtui.client.bounded_json import bound_task
from rewindtui.client.errors import MalformedFrame, excerpt
from rewindtui.client.limits import MAX_PAGES


@dataclass
class TaskPage:
    tasks: list[dict[str, Any]]
    next_page_token: str | None


class PagingStalled(MalformedFrame):
    """The server's pages do not advance (a token seen before, a page that adds nothing, or more
    than ``limits.MAX_PAGES`` pages): loading stops there instead of asking forever."""

    category = "paging"


class PageProgress:
    """Pages read for one session, so a server whose page token never advances is caught: a token
    seen before, a page with no task not already read (while it still names a next page), or more
    than MAX_PAGES pages -> PagingStalled."""

    def __init__(self, what: str) -> None:
        self.what = what
        self.tokens: set[str] = set()
        self.task_ids: set[str] = set()
        self.pages = 0

    def check(self, asked: str | None, page: TaskPage) -> TaskPage:
        self.pages += 1
        if asked:
            self.tokens.add(asked)
        ids = {t["id"] for t in page.tasks if isinstance(t.get("id"), str)}
        new = ids - self.task_ids
        self.task_ids |= ids
        token = page.next_page_token
        stop = ""
        if token and token in self.tokens:
            stop = f"the server answered page token {excerpt(token, 40)!r} again"
        elif token and asked and not new:
            stop = "a page added no task not already read and still named a next page"
        elif token and self.pages >= MAX_PAGES:
            stop = f"more than {MAX_PAGES:,} pages"
        if stop:
            raise PagingStalled(
                f"{self.what}: {stop}: its pages do not advance, so loading stopped after {len(self.task_ids):,} tasks"
            )
        return page


def task_list(data: Any, session_id: str) -> list[dict[str, Any]]:
    if data is None:
        return []  # kagent omits an empty list
    if not isinstance(data, list):
        raise MalformedFrame(f"tasks of {session_id}: expected a list")
    for task in data:
        bound_task(task)
    return drop_stored_partials(data)


def excerpt_of(value: Any) -> str:
    """A short excerpt of any parsed value (never a RecursionError: its depth is bounded)."""
    try:
        return excerpt(json.dumps(value, default=str)[:1000])
    except (ValueError, RecursionError):
        return f"({type(value).__name__})"


def task_of(result: Any, what: str) -> dict[str, Any]:
    """A task from a JSON-RPC result: bare, 0.3 ``kind: task``, or a 1.0 ``{"task": ...}`` wrapper."""
    event = classify(result)
    if not event.is_task or not isinstance(event.body, dict):
        if isinstance(result, dict) and isinstance(result.get("id"), str) and "status" in result:
            return bound_task(result)
        raise MalformedFrame(f"{what}: not a task: {excerpt_of(result)!r}")
    return bound_task(event.body)
