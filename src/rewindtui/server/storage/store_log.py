"""The store's session log and the statements of rewind, redo and fork: what a rewind reads
(every task and message owner, from covering indexes) and writes."""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from typing import Any

from rewindtui.a2a import contract
from rewindtui.server.shared.wire import RENDER_VERSION, dumps, now_iso
from rewindtui.server.storage.session_log import UNREAD, LogMessage, LogTask, Plan, SessionLog
from rewindtui.server.storage.store_conn import StoreBase, Tx
from rewindtui.server.storage.store_rows import (
    _INSERT_MESSAGE,
    _INSERT_TASK,
    SessionRow,
    Statement,
    _insert_session,
    _task_body,
    message_row,
)


class LogStore(StoreBase):
    """The session log, rewind and fork (a part of :class:`~rewindtui.server.storage.store.Store`)."""

    async def session_log(self, session_id: str, tx: Tx | None = None, *, lazy: bool = False) -> SessionLog:
        """The session's task log: every task (rewound ones too) and every message's owner.

        Index range reads in one trip to the database thread, from the log's covering indexes
        (``tasks_log``, ``messages_log``: the rows, with their bodies, are not read); only rewind
        tasks' rows are (for the invocation they went back before, and their stored history).
        ``lazy``: those histories are left unread (``session_log.UNREAD``; :meth:`_read_refs`
        reads the ones needed) -- each holds a whole effective history."""
        tasks_sql = (
            "SELECT seq, id, kind, invocation_id, rewound_by, created_at FROM tasks WHERE session_id = ? ORDER BY seq"
        )
        refs = f"CASE WHEN history_refs IS NULL THEN NULL ELSE '{UNREAD}' END" if lazy else "history_refs"
        rewinds_sql = (
            f"SELECT seq, CASE WHEN json_valid(body) THEN json_extract(body, ?) END, {refs} "
            "FROM tasks WHERE session_id = ? AND kind IN ('rewind', 'redo')"
        )
        rewinds_params = (f"$.metadata.{contract.REWOUND_BEFORE_KEY}", session_id)
        messages_sql = "SELECT seq, task_id, invocation_id FROM messages WHERE session_id = ? ORDER BY seq"

        def read(conn: sqlite3.Connection) -> tuple[list[Any], list[Any], list[Any]]:
            return (
                conn.execute(tasks_sql, (session_id,)).fetchall(),
                conn.execute(rewinds_sql, rewinds_params).fetchall(),
                conn.execute(messages_sql, (session_id,)).fetchall(),
            )

        if tx is not None:
            tasks, rewinds, messages = (
                await tx.fetchall(tasks_sql, (session_id,)),
                await tx.fetchall(rewinds_sql, rewinds_params),
                await tx.fetchall(messages_sql, (session_id,)),
            )
        else:
            tasks, rewinds, messages = await self._reader.run(read)
        went_back = {seq: (before, refs_json) for seq, before, refs_json in rewinds}
        none = (None, None)
        task_seq = {r[1]: r[0] for r in tasks}
        return SessionLog(
            [
                LogTask(seq, tid, kind, inv, went_back.get(seq, none)[0], rewound, went_back.get(seq, none)[1], created)
                for seq, tid, kind, inv, rewound, created in tasks
            ],
            (LogMessage(seq, task_seq[task_id], task_id, inv) for seq, task_id, inv in messages if task_id in task_seq),
        )

    async def _read_refs(self, log: SessionLog, invocation_id: str | None = None, tx: Tx | None = None) -> SessionLog:
        """``log`` with the stored histories its current conversation (and a plan of
        ``invocation_id``) reads."""
        sql = "SELECT t.seq, t.history_refs FROM json_each(?) AS j JOIN tasks AS t ON t.seq = j.value"
        while needed := log.refs_needed(invocation_id):  # again if one turns out to hold none
            rows = await (
                tx.fetchall(sql, (dumps(needed),)) if tx is not None else self._fetchall(sql, (dumps(needed),))
            )
            log.give_refs({seq: refs for seq, refs in rows})
        return log

    async def session_invocations(self, session_id: str) -> list[str]:
        """The invocation ids of the session's effective history, in order (each once)."""
        log = await self._read_refs(await self.session_log(session_id, lazy=True))
        return log.current_invocations()

    async def message_ids(self, session_id: str) -> set[str]:
        rows = await self._fetchall("SELECT message_id FROM messages WHERE session_id = ?", (session_id,))
        return {r[0] for r in rows}

    async def plan_rewind(
        self,
        session_id: str,
        invocation_id: str,
        tx: Tx | None = None,
        *,
        current_only: bool = True,
        log: SessionLog | None = None,
    ) -> Plan:
        """Going back to just before ``invocation_id``: the effective history then, and the tasks
        whose rewound mark changes.

        With ``current_only`` (a rewind) the invocation must be in the session's effective history;
        otherwise (redo, fork) it may be any invocation of the session, a rewound one or a rewind's
        own. Raises :class:`~.session_log.NotInLog` when it is not one (unknown, or rewound).
        ``log``: the session's log as :meth:`session_log` (``lazy``) just read it, not read again.
        """
        if log is None:
            log = await self.session_log(session_id, tx, lazy=True)
        log = await self._read_refs(log, invocation_id, tx)
        return log.plan(invocation_id, current_only=current_only)

    @staticmethod
    def rewind_statements(
        *, session_id: str, rewind_task: dict[str, Any], plan: Plan, user_id: str, invocation_id: str | None
    ) -> list[Statement]:
        """Store the rewind (or redo) task; mark the tasks it takes away rewound by it, and clear the
        mark of those it brings back."""
        ts = now_iso()
        refs = dumps([m.seq for m in plan.effective])
        kind = "redo" if (rewind_task.get("metadata") or {}).get(contract.REDO_OF_KEY) else "rewind"
        statements: list[Statement] = []
        if plan.hide:
            statements.append(
                (
                    "UPDATE tasks SET rewound_by = ?, rewound_at = ? WHERE seq IN (SELECT value FROM json_each(?))",
                    (rewind_task["id"], ts, dumps(plan.hide)),
                )
            )
        if plan.restore:
            statements.append(
                (
                    "UPDATE tasks SET rewound_by = NULL, rewound_at = NULL "
                    "WHERE seq IN (SELECT value FROM json_each(?))",
                    (dumps(plan.restore),),
                )
            )
        return [
            *statements,
            (
                _INSERT_TASK,
                (
                    rewind_task["id"],
                    session_id,
                    user_id,
                    kind,
                    invocation_id,
                    rewind_task["status"]["state"],
                    ts,
                    ts,
                    refs,
                    _task_body(rewind_task),
                ),
            ),
            ("UPDATE sessions SET updated_at = ? WHERE id = ?", (ts, session_id)),
        ]

    async def message_pairs(self, seqs: Sequence[int]) -> list[tuple[str, str | None]]:
        """(0.3 JSON, 1.0 JSON or None when another a2a-sdk rendered it) of the messages ``seqs``."""
        if not seqs:
            return []
        rows = await self._fetchall(
            "SELECT m.body, m.body_v1, m.render_version FROM json_each(?) AS j JOIN messages AS m ON m.seq = j.value "
            "ORDER BY j.key",
            (dumps(list(seqs)),),
        )
        return [(body, v1 if version == RENDER_VERSION else None) for body, v1, version in rows]

    @staticmethod
    def fork_statements(
        *,
        session: SessionRow,
        fork_task: dict[str, Any],
        messages: Sequence[dict[str, Any]],
        v1_texts: Sequence[str | None] | None = None,
    ) -> list[Statement]:
        """A forked session holding one task (kind ``fork``) with ``messages`` (and their 1.0 JSON,
        None where it must be rendered)."""
        ts = now_iso()
        statements: list[Statement] = [
            _insert_session(session),
            (
                _INSERT_TASK,
                (
                    fork_task["id"],
                    session.id,
                    session.user_id,
                    "fork",
                    None,
                    "completed",
                    ts,
                    ts,
                    None,
                    _task_body(fork_task),
                ),
            ),
        ]
        texts = v1_texts if v1_texts is not None else [None] * len(messages)
        statements += [
            (_INSERT_MESSAGE, message_row(session.id, fork_task["id"], m, v1))
            for m, v1 in zip(messages, texts, strict=True)
        ]
        return statements
