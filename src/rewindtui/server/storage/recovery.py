"""Making ADK's session database and the task store agree again, and checking that they do.

Run at startup (before the server takes requests) and before new work on a session a
failed write left behind (``needs``):

* **Journaled work** (``intents``, see :mod:`rewindtui.server.service.rewinds`): a rewind that ADK
  committed is completed in the store (its Task and the rewound marks); one ADK never got is
  dropped. A fork the store never recorded is removed from ADK. A delete is finished.
* **Turns that never finished** (a task left ``submitted``/``working``; one waiting for the
  user's approval, ``input-required``, is not running and keeps waiting): ADK is ahead of the
  store by at most the turn's own events (the store writes each right after ADK). The turn's
  invocation is looked up in ADK if the store never learnt it, the agent messages ADK has and
  the store lacks are stored, and the task is marked failed ("The server stopped before this
  turn finished.").
* **The check**: the invocations of the session's effective history must be the same on both
  sides (ADK's events after applying its rewinds, the store's non-rewound messages).
  :meth:`Recovery.check` reports any difference.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from google.adk.sessions.base_session_service import BaseSessionService

from rewindtui.a2a import contract
from rewindtui.server.shared.wire import agent_message, agent_text_message, effective_events, kagent_metadata, now_iso
from rewindtui.server.storage.adk_damage import DamagedAgentState
from rewindtui.server.storage.crosscheck import Mismatch, crosscheck
from rewindtui.server.storage.session_log import NotInLog
from rewindtui.server.storage.store import Intent, Store, TaskRow

log = logging.getLogger(__name__)


class SharedHolds(Protocol):
    """:class:`~rewindtui.server.storage.session_leases.SessionLeases`, as recovery uses it."""

    async def try_hold(self, session_id: str) -> bool: ...

    async def release(self, session_id: str) -> None: ...


INTERRUPTED_TEXT = "The server stopped before this turn finished."


@dataclass
class Report:
    intents_completed: int = 0
    intents_dropped: int = 0
    turns_failed: int = 0
    messages_restored: int = 0
    problems: list[str] = field(default_factory=list)

    def __bool__(self) -> bool:
        """Whether anything was recovered (the problems found are logged on their own)."""
        return bool(self.intents_completed or self.intents_dropped or self.turns_failed)


class Recovery:
    def __init__(
        self, *, store: Store, session_service: BaseSessionService, app_name: str, leases: SharedHolds | None = None
    ) -> None:
        self.store = store
        #: a team server's holds on sessions (replicas on one database), or None
        self.leases = leases
        self.session_service = session_service
        self.app_name = app_name
        #: sessions a failed write left inconsistent: recovered before new work on them
        self.needs: set[str] = set()
        #: what :meth:`startup` found and did
        self.startup_report = Report()
        #: sessions whose two stores disagreed at start (:mod:`.crosscheck`), by id
        self.mismatched: dict[str, Mismatch] = {}

    async def startup(self) -> Report:
        """Replay every intent and finish every unfinished turn, then check those sessions.

        A team server (``leases``: replicas on one database) touches only the sessions it can
        hold: one another replica holds is that replica's live work, not a leftover."""
        report = self.startup_report = Report()
        if self.leases is not None:
            return await self._startup_shared(report)
        touched: dict[str, str] = {}
        for intent in await self.store.intents():
            touched[intent.session_id] = intent.payload["user_id"]
            try:
                await self._replay(intent, report)
            except (KeyError, TypeError, AttributeError) as exc:  # a damaged entry: said, left in place
                report.problems.append(
                    f"journal entry {intent.id} ({intent.kind} of session {intent.session_id!r}) in "
                    f"{self.store.path} cannot be replayed (its {exc} is missing or wrong); left in place"
                )
        for task in await self.store.unfinished_tasks():
            touched[task.session_id] = task.user_id
            try:
                await self._finish_turn(task, report)
            except DamagedAgentState as exc:  # said once here, and again on each send (`rewindtui repair`)
                report.problems.append(str(exc))
        adk_path = getattr(self.session_service, "db_path", None)
        if isinstance(adk_path, Path):  # every session, both files read with SQL (:mod:`.crosscheck`)
            for mismatch in await crosscheck(self.store, adk_path, self.app_name):
                self.mismatched[mismatch.session_id] = mismatch
                report.problems.append(mismatch.sentence(self.store.path.parent))
            return self._said(report)
        return await self._checked(touched, report)

    async def _startup_shared(self, report: Report) -> Report:
        assert self.leases is not None
        touched: dict[str, str] = {}
        for intent in await self.store.intents():
            touched[intent.session_id] = intent.payload["user_id"]
        for task in await self.store.unfinished_tasks():
            touched.setdefault(task.session_id, task.user_id)
        recovered: dict[str, str] = {}
        for session_id, user_id in touched.items():
            if not await self.leases.try_hold(session_id):
                continue  # another replica is running it
            try:
                for intent in await self.store.intents(session_id):
                    await self._replay(intent, report)
                for task in await self.store.unfinished_tasks():
                    if task.session_id == session_id:
                        await self._finish_turn(task, report)
                recovered[session_id] = user_id
            finally:
                await self.leases.release(session_id)
        return await self._checked(recovered, report)

    async def _checked(self, touched: dict[str, str], report: Report) -> Report:
        for session_id, user_id in touched.items():
            report.problems += await self.check(session_id, user_id)
        return self._said(report)

    @staticmethod
    def _said(report: Report) -> Report:
        for problem in report.problems:
            log.warning("the two stores disagree: %s", problem)
        return report

    async def refused(self, session_id: str, user_id: str) -> str | None:
        """Why a turn on ``session_id`` is refused: the view shows turns the agent lacks (found at
        start, and still so); None when the two agree now (e.g. after a rewind past them)."""
        mismatch = self.mismatched.get(session_id)
        if mismatch is None or not mismatch.store_only:
            return None
        adk_path = getattr(self.session_service, "db_path", None)
        if isinstance(adk_path, Path):
            again = await crosscheck(self.store, adk_path, self.app_name, session_ids=[session_id])
            if not again or not again[0].store_only:
                self.mismatched.pop(session_id, None)
                return None
            self.mismatched[session_id] = again[0]
            mismatch = again[0]
        return "nothing was sent: " + mismatch.sentence(self.store.path.parent)

    async def session(self, session_id: str, user_id: str) -> Report:
        """Recover one session (its intents and unfinished turns); clears ``needs`` on success."""
        report = Report()
        for intent in await self.store.intents(session_id):
            await self._replay(intent, report)
        for task in await self.store.unfinished_tasks():
            if task.session_id == session_id:
                await self._finish_turn(task, report)
        report.problems += await self.check(session_id, user_id)
        self.needs.discard(session_id)
        return report

    # -- the check -----------------------------------------------------------------------
    async def check(self, session_id: str, user_id: str) -> list[str]:
        """Differences between ADK's and the store's effective history of a session (none: [])."""
        store_session = await self.store.get_session(session_id)
        adk = await self.session_service.get_session(app_name=self.app_name, user_id=user_id, session_id=session_id)
        if store_session is None:
            return [f"session {session_id!r}: the agent has it, the store does not"] if adk is not None else []
        if adk is None:
            return [f"session {session_id!r}: the store has it, the agent does not"]
        agent = _invocations(effective_events(adk.events))
        stored = await self.store.session_invocations(session_id)
        if agent != stored:
            return [f"session {session_id!r}: the agent's history {agent} differs from the store's {stored}"]
        return []

    # -- intents -------------------------------------------------------------------------
    async def _replay(self, intent: Intent, report: Report) -> None:
        handler = {"rewind": self._replay_rewind, "fork": self._replay_fork, "delete": self._replay_delete}.get(
            intent.kind
        )
        completed = await handler(intent) if handler is not None else False
        if completed:
            report.intents_completed += 1
        else:
            report.intents_dropped += 1

    async def _replay_rewind(self, intent: Intent) -> bool:
        payload = intent.payload
        user_id = payload["user_id"]
        adk = await self.session_service.get_session(
            app_name=self.app_name, user_id=user_id, session_id=intent.session_id
        )
        events = adk.events[payload["events_before"] :] if adk is not None else []
        hit = next((e for e in events if e.actions.rewind_before_invocation_id == payload["before"]), None)
        if hit is None:  # ADK never rewound: nothing happened
            await self.store.drop_intent(intent.id)
            return False
        try:
            plan = await self.store.plan_rewind(
                intent.session_id, payload["before"], current_only=payload.get("current_only", True)
            )
        except NotInLog:
            await self.store.drop_intent(intent.id)
            return False
        task = payload["task"]
        task["metadata"][contract.REWIND_INVOCATION_KEY] = hit.invocation_id
        async with self.store.transaction() as tx:
            await tx.execute(
                [
                    *self.store.rewind_statements(
                        session_id=intent.session_id,
                        rewind_task=task,
                        plan=plan,
                        user_id=user_id,
                        invocation_id=hit.invocation_id,
                    ),
                    self.store.intent_done_statement(intent.id),
                ]
            )
        return True

    async def _replay_fork(self, intent: Intent) -> bool:
        new_sid = intent.payload["new_session_id"]
        if await self.store.get_session(new_sid) is None:
            await self.session_service.delete_session(
                app_name=self.app_name, user_id=intent.payload["user_id"], session_id=new_sid
            )
        await self.store.drop_intent(intent.id)
        return False

    async def _replay_delete(self, intent: Intent) -> bool:
        async with self.store.transaction() as tx:
            await tx.execute(
                [*self.store.delete_session_statements(intent.session_id), self.store.intent_done_statement(intent.id)]
            )
            await self.session_service.delete_session(
                app_name=self.app_name, user_id=intent.payload["user_id"], session_id=intent.session_id
            )
        return True

    # -- turns ---------------------------------------------------------------------------
    async def _finish_turn(self, task: TaskRow, report: Report) -> None:
        adk = await self.session_service.get_session(
            app_name=self.app_name, user_id=task.user_id, session_id=task.session_id
        )
        events = effective_events(adk.events) if adk is not None else []
        invocation = task.invocation_id
        data: dict[str, Any] = _loads(task.body)
        if invocation is None:
            # ADK may have the turn's user event though the store never learnt its invocation:
            # it is the one invocation of ADK's history the store does not know.
            known = set(await self.store.session_invocations(task.session_id))
            unknown = [inv for inv in _invocations(events) if inv not in known]
            if unknown:
                invocation = unknown[-1]
        meta: dict[str, Any] = {"app_name": self.app_name, "user_id": task.user_id, "session_id": task.session_id}
        restored: list[dict[str, Any]] = []
        if invocation is not None:
            have = await self.store.message_ids(task.session_id)
            for event in events:
                if event.invocation_id != invocation or event.author == "user" or event.partial:
                    continue
                message = agent_message(event, invocation_id=invocation, task_id=task.id, **meta)
                if message is not None and message["messageId"] not in have:
                    restored.append(message)
        data["status"] = {
            "state": "failed",
            "timestamp": now_iso(),
            "message": agent_text_message(INTERRUPTED_TEXT, task_id=task.id, context_id=task.session_id),
        }
        data["metadata"] = {**(data.get("metadata") or {}), **kagent_metadata(**meta, invocation_id=invocation)}
        async with self.store.transaction() as tx:
            if invocation is not None and task.invocation_id is None:
                user_message = await self._user_message(task)
                if user_message is not None:
                    user_message["metadata"] = {
                        **(user_message.get("metadata") or {}),
                        **kagent_metadata(**meta, invocation_id=invocation, author="user", partial=False),
                    }
                    await self.store.set_turn_invocation(
                        task=data, user_message=user_message, invocation_id=invocation, tx=tx
                    )
            if restored:
                await self.store.add_messages(session_id=task.session_id, task_id=task.id, messages=restored, tx=tx)
            await self.store.update_task(data, touch_session=True, tx=tx)
        report.turns_failed += 1
        report.messages_restored += len(restored)

    async def _user_message(self, task: TaskRow) -> dict[str, Any] | None:
        for body in await self.store.task_history_bodies(task):
            message = _loads(body)
            if message.get("role") == "user":
                return message
        return None


def _invocations(events: Iterable[Any]) -> list[str]:
    return list(
        dict.fromkeys(
            e.invocation_id for e in events if e.invocation_id and e.invocation_id != contract.HEADER_UPDATE_INVOCATION
        )
    )


def _loads(body: str) -> dict[str, Any]:
    data = json.loads(body)
    return data if isinstance(data, dict) else {}
