"""Reading sessions and tasks from the store alone, as the REST GET routes answer them.

The agent service (:class:`~rewindtui.server.service.agent_service.AgentService`) answers with it, and so does
the server's front (:mod:`rewindtui.server.http.front`) before google-adk is loaded.
"""

from __future__ import annotations

from rewindtui.server.shared.errors import NotFound
from rewindtui.server.storage.store import SessionRow, Store, TaskRow, task_json


class StoreReader:
    """Sessions and tasks as the REST GET routes answer them, from the store alone."""

    def __init__(self, store: Store) -> None:
        self.store = store

    async def owned(self, user_id: str, session_id: str) -> SessionRow:
        row = await self.store.get_session(session_id)
        if row is None or row.user_id != user_id:
            raise NotFound(f"session {session_id!r} not found")
        return row

    async def list_sessions(self, user_id: str) -> list[SessionRow]:
        return await self.store.list_sessions(user_id)

    async def session_detail(self, user_id: str, session_id: str) -> SessionRow:
        session = await self.owned(user_id, session_id)
        return await self.store.get_session_detail(session.id) or session

    async def session_tasks_json(
        self,
        user_id: str,
        session_id: str,
        *,
        include_rewound: bool = False,
        limit: int | None = None,
        before: str = "",
        history_length: int | None = None,
    ) -> tuple[list[bytes], str]:
        session = await self.owned(user_id, session_id)
        return await self.tasks_pieces(
            session, include_rewound=include_rewound, limit=limit, before=before, history_length=history_length
        )

    async def tasks_pieces(
        self,
        session: SessionRow,
        *,
        include_rewound: bool = False,
        limit: int | None = None,
        before: str = "",
        history_length: int | None = None,
    ) -> tuple[list[bytes], str]:
        """The session's tasks, oldest first, as the pieces of a JSON array (0.3 task JSON,
        UTF-8), and the token of the next (older) page: every task, or with ``limit`` the newest
        ``limit`` before the page token ``before``; with ``history_length``, each task's history
        cut to its newest ``history_length`` messages (0: none, and none read -- a rewind's Task
        holds the whole effective history, megabytes in a long session)."""
        if limit is None:
            tasks, next_token = await self.store.session_tasks(session.id, include_rewound=include_rewound), ""
        else:
            page = await self.store.session_tasks_page(
                session.id, limit=limit, before=before, include_rewound=include_rewound
            )
            tasks, next_token = page.tasks, page.next_token
        if history_length == 0:
            histories: dict[str, list[str]] = {task.id: [] for task in tasks}
        else:
            histories = await self.store.tasks_history_bodies(tasks, newest=history_length)
            if history_length is not None:
                histories = {key: bodies[-history_length:] for key, bodies in histories.items()}  # > 0 here
        pieces = [b"["]
        for i, task in enumerate(tasks):
            if i:
                pieces.append(b",")
            pieces.append(task_json(task, histories[task.id]).encode())
        pieces.append(b"]")
        return pieces, next_token

    async def owned_task(self, user_id: str, task_id: str) -> TaskRow:
        row = await self.store.get_task(task_id)
        if row is None or row.user_id != user_id:
            raise NotFound(f"task {task_id!r} not found")
        return row

    async def task_json(self, user_id: str, task_id: str) -> str:
        row = await self.owned_task(user_id, task_id)
        return task_json(row, await self.store.task_history_bodies(row))
