"""``rewindtui repair``: make a data directory's sessions readable and its two stores agree again.

Run with the server stopped (it takes the data directory's lock, as ``restore`` does). For each
session (or the ones named):

* **A state that cannot be read** (``sessions.state`` in ``adk_sessions.db`` not UTF-8, not JSON,
  not an object): rebuilt from the session's events -- the session-scoped ``state_delta`` of
  every readable event that survives ADK's rewinds, in order (what ADK itself applied; an
  ``app:``/``user:``/``temp:`` key is not session state). The app's or user's shared state
  that cannot be read is set to ``{}`` (no events say what it was).
* **The view shows turns the agent lacks** (:mod:`..storage.crosscheck`; e.g. ``adk_sessions.db`` lost its
  newest transactions with its write-ahead log): the task store is rewound to just before the
  first of them -- a rewind task like any other, so those turns stay, shown as rewound, and a
  redo brings them back. ADK is not touched.
* Anything else (turns the agent has that the view lacks, or a session missing from the
  agent's file) is said and left alone: only a restore of both files from one backup brings
  those back. (A turn is refused only while the view shows turns the agent lacks.)

Every value it replaces is first copied to ``DIR/repaired-<date>-<time>/``: nothing is deleted.
It says what it did, one line per change.
"""

from __future__ import annotations

import json
import sqlite3
import time
from pathlib import Path
from types import SimpleNamespace
from typing import Any

from rewindtui.a2a import contract
from rewindtui.server.service.rewinds import rewind_task
from rewindtui.server.shared.paths import ADK_FILE, APP_NAME, STORE_FILE
from rewindtui.server.shared.wire import effective_events, new_id
from rewindtui.server.storage.adk_damage import decode_json, state_problem
from rewindtui.server.storage.crosscheck import crosscheck
from rewindtui.server.storage.store import Store

#: metadata key on the rewind task a repair stores (the turns the agent lacked)
REPAIR_KEY = "rewindtui_repair"
_SHARED = ("app:", "user:", "temp:")


class RepairError(RuntimeError):
    """One line: why nothing was repaired."""


class _Kept:
    """``DIR/repaired-<time>/``, made on first use: the values a repair replaced."""

    def __init__(self, data_dir: Path) -> None:
        self.path = data_dir / time.strftime("repaired-%Y%m%d-%H%M%S")

    def keep(self, name: str, value: Any) -> Path:
        self.path.mkdir(mode=0o700, exist_ok=True)
        target = self.path / name
        data = value if isinstance(value, bytes) else str(value if value is not None else "").encode("utf-8", "replace")
        target.write_bytes(data)
        target.chmod(0o600)
        return target


async def repair(data_dir: Path, session_ids: list[str] | None = None) -> list[str]:
    """Repair ``data_dir`` (the server stopped: the caller holds its lock); the lines saying what
    was done (one per change, or one saying there was nothing to do)."""
    adk_path, store_path = data_dir / ADK_FILE, data_dir / STORE_FILE
    if not adk_path.is_file() or not store_path.is_file():
        raise RepairError(f"{data_dir} holds no server data ({STORE_FILE} and {ADK_FILE} are needed)")
    kept = _Kept(data_dir)
    lines = repair_states(adk_path, kept, session_ids)
    store = Store(store_path)
    await store.open()
    try:
        for mismatch in await crosscheck(store, adk_path, APP_NAME, session_ids=session_ids):
            if mismatch.store_only and not mismatch.agent_lacks_session:
                lines.append(await _rewind_past(store, mismatch))
                if mismatch.agent_only:
                    lines.append(
                        f"session {mismatch.session_id!r}: the agent also has {len(mismatch.agent_only)} turn(s) the "
                        "view does not show (lost from the task store); not changed: only a restore of both files "
                        "from one backup brings them back into the view"
                    )
            else:
                lines.append(mismatch.sentence(data_dir) + " (not changed: repair cannot bring back lost turns)")
    finally:
        await store.close()
    if not lines:
        scope = "the named session" if session_ids else "every session"
        lines.append(f"nothing to repair: {scope} reads and the two stores agree")
    return lines


def repair_states(adk_path: Path, kept: _Kept, session_ids: list[str] | None) -> list[str]:
    """Rebuild every session state that cannot be read (and reset shared states that cannot)."""
    lines: list[str] = []
    conn = sqlite3.connect(adk_path, isolation_level=None)
    try:
        conn.execute("BEGIN IMMEDIATE")
        rows = conn.execute(
            "SELECT app_name, user_id, id, CAST(state AS BLOB) FROM sessions WHERE app_name = ?", (APP_NAME,)
        ).fetchall()
        for app_name, user_id, session_id, raw in rows:
            if session_ids is not None and session_id not in session_ids:
                continue
            _, why = state_problem(raw)
            if why is None:
                continue
            state, used, unreadable = _state_from_events(conn, app_name, user_id, session_id)
            copy = kept.keep(f"adk_sessions-state-{_safe(session_id)}.txt", raw)
            conn.execute(
                "UPDATE sessions SET state = ? WHERE app_name = ? AND user_id = ? AND id = ?",
                (json.dumps(state), app_name, user_id, session_id),
            )
            skipped = f", {unreadable} unreadable event(s) skipped" if unreadable else ""
            lines.append(
                f"session {session_id!r}: its state in {adk_path} could not be read ({why}); rebuilt from its "
                f"{used} event(s){skipped}: {len(state)} key(s); the damaged value is kept in {copy}"
            )
        for table, key_cols in (("app_states", ("app_name",)), ("user_states", ("app_name", "user_id"))):
            cols = ", ".join(key_cols)
            for row in conn.execute(
                f"SELECT {cols}, CAST(state AS BLOB) FROM {table} WHERE app_name = ?", (APP_NAME,)
            ).fetchall():
                *keys, raw = row
                _, why = state_problem(raw)
                if why is None:
                    continue
                copy = kept.keep(f"adk_sessions-{table}-{_safe('-'.join(keys))}.txt", raw)
                where = " AND ".join(f"{c} = ?" for c in key_cols)
                conn.execute(f"UPDATE {table} SET state = '{{}}' WHERE {where}", keys)
                owner = "the app's" if table == "app_states" else f"user {keys[-1]!r}'s"
                lines.append(
                    f"{owner} shared state in {adk_path} could not be read ({why}); set to empty (no event "
                    f"records all of it); the damaged value is kept in {copy}"
                )
        conn.execute("COMMIT")
    except BaseException:
        if conn.in_transaction:
            conn.execute("ROLLBACK")
        raise
    finally:
        conn.close()
    return lines


def _state_from_events(
    conn: sqlite3.Connection, app_name: str, user_id: str, session_id: str
) -> tuple[dict[str, Any], int, int]:
    """The session state the effective events' deltas make; (state, events used, unreadable)."""
    rows = conn.execute(
        "SELECT invocation_id, CAST(event_data AS BLOB) FROM events WHERE app_name = ? AND user_id = ? AND "
        "session_id = ? ORDER BY timestamp, id",
        (app_name, user_id, session_id),
    ).fetchall()
    events = []
    unreadable = 0
    for invocation_id, raw in rows:
        data, why = decode_json(raw)
        if why is not None or not isinstance(data, dict):
            unreadable += 1
            data = {}
        found = data.get("actions")
        actions: dict[str, Any] = found if isinstance(found, dict) else {}
        target = actions.get(contract.ADK_REWIND_ACTION)
        delta = actions.get("state_delta")
        events.append(
            SimpleNamespace(
                invocation_id=invocation_id,
                actions=SimpleNamespace(rewind_before_invocation_id=target if isinstance(target, str) else None),
                delta=delta if isinstance(delta, dict) else {},
            )
        )
    state: dict[str, Any] = {}
    kept = effective_events(events)
    for event in kept:
        for key, value in event.delta.items():
            if not key.startswith(_SHARED):
                state[key] = value
    return state, len(kept), unreadable


async def _rewind_past(store: Store, mismatch: Any) -> str:
    """Rewind the store's session to just before the first turn the agent lacks."""
    first = mismatch.store_only[0]
    session = await store.get_session(mismatch.session_id)
    if session is None:
        return f"session {mismatch.session_id!r}: not in {store.path}; not changed"
    plan = await store.plan_rewind(session.id, first)
    task = rewind_task(
        task_id=new_id(),
        session=session,
        app_name=APP_NAME,
        before=first,
        total=len(plan.effective),
        turns=len(mismatch.store_only),
    )
    task["metadata"][REPAIR_KEY] = list(mismatch.store_only)
    async with store.transaction() as tx:
        await tx.execute(
            store.rewind_statements(
                session_id=session.id, rewind_task=task, plan=plan, user_id=session.user_id, invocation_id=None
            )
        )
    number = mismatch.store_turns.index(first) + 1 if first in mismatch.store_turns else 0
    words = mismatch.words.get(first)
    turn = f"turn {number}" + (f" ({words!r})" if words else "")
    return (
        f"session {session.id!r}: rewound the view to before {turn}: the {len(mismatch.store_only)} turn(s) the "
        "agent's database lacks are now shown as rewound (nothing deleted; the agent and the view agree)"
    )


def _safe(name: str) -> str:
    return "".join(c if c.isalnum() or c in "-_." else "_" for c in name)[:100]
