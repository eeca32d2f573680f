"""The two stores checked against each other: per session, the turns the task store shows
(``rewindtui.db``) must be the turns the agent has (``adk_sessions.db``).

The two are separate SQLite files; work that writes both is journaled (:mod:`.recovery`), but a
file can still lose its newest transactions on its own -- a write-ahead log cut short or removed
after a crash, a file restored from another backup than the other. SQLite then opens each file
without a word (a WAL's frames are checksummed: a cut log is read up to its last whole commit),
and the view would show turns the agent no longer has.

:func:`crosscheck` compares every session at start (before the server serves): the effective
invocations of the store's session log against those of ADK's events after its rewinds, read
with one SQL query over ``events`` (``json_extract`` of the rewind target of the events that name
one -- no event is decoded in Python: 20,000 events, 10,000 turns, take ~0.4 s on a small
machine). Each difference is a
:class:`Mismatch`, said in one sentence (:meth:`Mismatch.sentence`): which turns the view shows
that the agent lacks (their first words), or which the agent has that the view does not, where
the files are, and what to do (``rewindtui repair``, :mod:`.repair`, or a restore).
"""

from __future__ import annotations

import asyncio
import json
import sqlite3
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rewindtui.a2a import contract
from rewindtui.server.shared.paths import ADK_FILE, STORE_FILE
from rewindtui.server.shared.wire import effective_events
from rewindtui.server.storage.store import Store


@dataclass
class Mismatch:
    session_id: str
    user_id: str
    name: str
    #: invocations the store shows (in its order) that the agent does not have
    store_only: list[str] = field(default_factory=list)
    #: invocations the agent has that the store does not show
    agent_only: list[str] = field(default_factory=list)
    #: the session is missing from ADK's database altogether
    agent_lacks_session: bool = False
    #: the first words of the store's turns, by invocation
    words: dict[str, str] = field(default_factory=dict)
    #: the store's turns in order (to say which numbers are missing)
    store_turns: list[str] = field(default_factory=list)

    def sentence(self, data_dir: Path) -> str:
        """One sentence: what differs, where the files are, and what to do."""
        who = f"session {self.session_id!r}" + (f" ({self.name!r})" if self.name else "")
        files = f"{data_dir / STORE_FILE} and {data_dir / ADK_FILE}"
        parts = []
        if self.store_only:
            numbers = [self.store_turns.index(inv) + 1 for inv in self.store_only if inv in self.store_turns]
            shown = ", ".join(
                f"turn {n} ({self.words[inv]!r})" if self.words.get(inv) else f"turn {n}"
                for n, inv in zip(numbers, self.store_only, strict=False)
            )
            lost = "the whole session" if self.agent_lacks_session else f"{len(self.store_only)} turn(s) ({shown})"
            parts.append(
                f"the view shows {lost} that the agent's database no longer has, so the agent would answer without them"
            )
        if self.agent_only:
            parts.append(
                f"the agent has {len(self.agent_only)} turn(s) the view does not show (lost from the task store)"
            )
        if self.store_only and not self.agent_lacks_session:
            todo = (
                f"stop the server and run `rewindtui repair --data-dir {data_dir} {self.session_id}` to rewind the "
                "view past what the "
                "agent lacks (nothing is deleted: those turns stay as rewound)"
            )
            if self.agent_only:
                todo += (
                    "; the turns only the agent has come back into the view only with a restore of both files "
                    "from one backup (rewindtui restore)"
                )
        else:
            todo = "restore both files from one backup (rewindtui restore)"
        return f"{who}: {' and '.join(parts)}; the files are {files}; to make them agree, {todo}"


async def crosscheck(
    store: Store, adk_path: Path, app_name: str, *, session_ids: Iterable[str] | None = None
) -> list[Mismatch]:
    """Every session (or ``session_ids``) whose turns differ between the two stores."""
    agent, agent_sessions = await asyncio.to_thread(agent_invocations, adk_path, app_name)
    wanted = set(session_ids) if session_ids is not None else None
    rows = await store._fetchall("SELECT id, user_id, name FROM sessions ORDER BY created_at")
    found: list[Mismatch] = []
    seen: set[str] = set()
    for session_id, user_id, name in rows:
        if wanted is not None and session_id not in wanted:
            continue
        seen.add(session_id)
        stored = await store.session_invocations(session_id)
        key = (user_id, session_id)
        has = agent.get(key, [])
        if stored == has:
            continue
        if key not in agent_sessions and not stored:
            continue  # a session with no turn yet (its ADK session was never made, or lost empty)
        mismatch = Mismatch(
            session_id=session_id,
            user_id=user_id,
            name=str(name or ""),
            store_only=[i for i in stored if i not in set(has)],
            agent_only=[i for i in has if i not in set(stored)],
            agent_lacks_session=key not in agent_sessions,
            store_turns=list(stored),
        )
        if not mismatch.store_only and not mismatch.agent_only:  # the same turns in another order
            mismatch.agent_only = list(has)
        mismatch.words = await _first_words(store, session_id, mismatch.store_only)
        found.append(mismatch)
    for user_id, session_id in agent_sessions:
        if session_id in seen or (wanted is not None and session_id not in wanted):
            continue
        has = agent.get((user_id, session_id), [])
        if has:
            found.append(Mismatch(session_id=session_id, user_id=user_id, name="", agent_only=list(has)))
    return found


def agent_invocations(adk_path: Path, app_name: str) -> tuple[dict[tuple[str, str], list[str]], set[tuple[str, str]]]:
    """Per (user, session) of ``app_name``: the invocations of ADK's effective history (after its
    rewinds, as :func:`~rewindtui.server.shared.wire.effective_events` walks them), and the set
    of sessions ADK has. Read-only; a damaged ``event_data`` counts as an event without a rewind."""
    if not adk_path.exists() or adk_path.stat().st_size == 0:
        return {}, set()
    conn = sqlite3.connect(f"file:{adk_path}?mode=ro", uri=True)
    try:
        tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
        if not {"sessions", "events"} <= tables:
            return {}, set()
        sessions = {
            (str(u), str(s))
            for u, s in conn.execute("SELECT user_id, id FROM sessions WHERE app_name = ?", (app_name,))
        }
        rows = conn.execute(
            # only a rewind's own event names a target: the others are not parsed at all
            "SELECT user_id, session_id, invocation_id, CASE WHEN instr(event_data, 'rewind_before_invocation_id') "
            "AND json_valid(event_data) THEN json_extract(event_data, '$.actions.rewind_before_invocation_id') END "
            "FROM events WHERE app_name = ? ORDER BY user_id, session_id, timestamp, id",
            (app_name,),
        ).fetchall()
    finally:
        conn.close()
    events: dict[tuple[str, str], list[Any]] = {}
    plain = _Actions(None)  # shared by every event that names no rewind target
    for user_id, session_id, invocation_id, rewind_before in rows:
        actions = _Actions(rewind_before) if isinstance(rewind_before, str) else plain
        events.setdefault((user_id, session_id), []).append(_Event(invocation_id, actions))
    return {key: invocations(effective_events(evs)) for key, evs in events.items()}, sessions


class _Actions:
    __slots__ = (contract.ADK_REWIND_ACTION,)

    def __init__(self, target: str | None) -> None:
        self.rewind_before_invocation_id = target


class _Event:
    """What :func:`~rewindtui.server.shared.wire.effective_events` reads of an event."""

    __slots__ = ("actions", "invocation_id")

    def __init__(self, invocation_id: str | None, actions: _Actions) -> None:
        self.invocation_id = invocation_id
        self.actions = actions


def invocations(events: Iterable[Any]) -> list[str]:
    """The invocation ids of ``events`` in order, each once (ADK's header-update events left out)."""
    return list(
        dict.fromkeys(
            e.invocation_id for e in events if e.invocation_id and e.invocation_id != contract.HEADER_UPDATE_INVOCATION
        )
    )


async def _first_words(store: Store, session_id: str, wanted: Sequence[str]) -> dict[str, str]:
    """The first words of the user's message of each invocation in ``wanted``."""
    if not wanted:
        return {}
    rows = await store._fetchall(
        "SELECT invocation_id, body FROM messages WHERE session_id = ? AND role = 'user' AND invocation_id IN "
        "(SELECT value FROM json_each(?)) ORDER BY seq",
        (session_id, json.dumps(list(wanted))),
    )
    words: dict[str, str] = {}
    for invocation_id, body in rows:
        if invocation_id in words:
            continue
        try:
            parts = json.loads(body).get("parts") or []
            text = str(next((p["text"] for p in parts if isinstance(p, dict) and isinstance(p.get("text"), str)), ""))
        except (ValueError, AttributeError, TypeError):
            text = ""
        words[invocation_id] = " ".join(text.split())[:30]
    return words
