"""Rewind, redo and fork: ADK's session database and the task store move together.

Redo undoes a rewind with ADK's own rewind: ``Runner.rewind_async`` before the rewind event's
invocation. ADK hides everything from the first event of the invocation named up to the new
event (``_apply_rewinds``), so the rewind event is hidden and the turns it hid are seen again,
and its state delta is computed from every event before the rewind event: the state (and the
artifact versions) are exactly those from before the rewind. Several rewinds redo one by one,
newest first; a rewound turn's branch is brought back by redoing the rewind that took it away,
which also undoes any later rewind. Nothing is deleted either way.

Both live in separate SQLite files (ADK's ``DatabaseSessionService`` owns its schema and its
transactions), so one transaction cannot span them. Instead each operation is journaled:

1. an *intent* (what is about to happen) is committed to the store's ``intents`` table;
2. the store's write lock is taken (``BEGIN IMMEDIATE``) -- if another process holds it,
   the request is refused and nothing has changed;
3. ADK is written (``Runner.rewind_async`` / the forked session);
4. the store's side is written and the intent deleted, in that same transaction.

A crash between 3 and 4 leaves the intent; :mod:`rewindtui.server.storage.recovery` replays it at
startup (a rewind ADK committed is completed in the store; a fork is undone in ADK). A
store failure at 4 (full disk, I/O error) flags the session: it is recovered before any new
work on it, and refused until it can be.
"""

from __future__ import annotations

import contextlib
import json
import logging
from collections.abc import Callable, Collection
from typing import Any, cast

from google.adk.errors.not_found_error import NotFoundError as AdkNotFoundError
from google.adk.events.event import Event

from rewindtui.a2a import contract
from rewindtui.server.service.context import ServerContext, UsesContext
from rewindtui.server.service.faults import FORK_AFTER_AGENT, REWIND_AFTER_AGENT
from rewindtui.server.shared.errors import (
    Conflict,
    InvalidInvocation,
    NotFound,
    RecoveryPending,
    ServiceError,
    is_storage_failure,
    storage_error,
)
from rewindtui.server.shared.wire import EFFECTIVE_HISTORY_KEY, kagent_metadata, new_id, now_iso, v1_dumps
from rewindtui.server.storage.session_log import REWIND_KINDS, NotInLog, Plan, SessionLog
from rewindtui.server.storage.store import Intent, SessionRow

log = logging.getLogger(__name__)

FORKED_FROM_KEY = contract.FORK_TASK_FORKED_FROM_KEY
FORK_BEFORE_KEY = "rewindtui_fork_before_invocation_id"


def rewind_task(
    *,
    task_id: str,
    session: SessionRow,
    app_name: str,
    before: str,
    redo_of: str | None = None,
    total: int = 0,
    turns: int | None = None,
) -> dict[str, Any]:
    """The Task a rewind (or redo) stores: completed, flagged as the session's effective history
    (``total`` messages)."""
    metadata: dict[str, Any] = {
        **kagent_metadata(app_name=app_name, user_id=session.user_id, session_id=session.id),
        EFFECTIVE_HISTORY_KEY: True,
        contract.EFFECTIVE_HISTORY_TOTAL_KEY: total,
        contract.REWOUND_BEFORE_KEY: before,
    }
    if redo_of is not None:
        metadata[contract.REDO_OF_KEY] = redo_of
    if turns is not None:
        metadata[contract.REWOUND_TURNS_KEY] = turns
    return {
        "kind": "task",
        "id": task_id,
        "contextId": session.id,
        "status": {"state": "completed", "timestamp": now_iso()},
        "metadata": metadata,
    }


def fork_name(session: SessionRow, plan: Plan, taken: Collection[str] = ()) -> str:
    """``Fork of <title> @ turn N``: N is the original's turn the fork was made before (its turn
    number, as the client counts them: model/turn_numbers.py). A name in ``taken`` (the user's
    other sessions) gets the first free `` (2)``, `` (3)``, ... so forks can be told apart."""
    turn = len({m.invocation_id for m in plan.effective if m.invocation_id}) + 1
    return distinct_name(f"Fork of {session.name or session.id} @ turn {turn}", taken)


def distinct_name(name: str, taken: Collection[str]) -> str:
    """``name``, or ``name (2)``, ``name (3)``, ...: the first that is not in ``taken``."""
    if name not in taken:
        return name
    number = 2
    while f"{name} ({number})" in taken:
        number += 1
    return f"{name} ({number})"


def _moved(message: dict[str, Any], session_id: str, task_id: str) -> dict[str, Any]:
    """A stored message (0.3 or 1.0 dict) as the fork's copy: its session and task replaced."""
    message["contextId"] = session_id
    message["taskId"] = task_id
    meta = dict(message.get("metadata") or {})
    if "kagent_session_id" in meta:
        meta["kagent_session_id"] = session_id
    message["metadata"] = meta
    return message


def moved_v1_text(v1_body: str | None, session_id: str, task_id: str) -> str | None:
    """The fork's copy of a stored 1.0 message JSON, as a2a-sdk would render it: the same keys in
    the same order with new values (no proto round trip). None when that cannot be told (the keys
    are not all there, or another a2a-sdk rendered it): then it is rendered afresh."""
    if v1_body is None:
        return None
    data = json.loads(v1_body)
    if not ("contextId" in data and "taskId" in data and "metadata" in data):
        return None
    return v1_dumps(_moved(data, session_id, task_id))


class RewindService(UsesContext):
    def __init__(self, context: ServerContext, *, on_store_failure: Callable[[str], None]) -> None:
        super().__init__(context)
        self._on_store_failure = on_store_failure

    async def _plan(
        self, session: SessionRow, invocation_id: str, *, current_only: bool = True, log: SessionLog | None = None
    ) -> Plan:
        try:
            return await self.store.plan_rewind(session.id, invocation_id, current_only=current_only, log=log)
        except NotInLog as exc:
            raise InvalidInvocation(str(exc)) from None

    async def _journal(self, intent: Intent, doing: str) -> None:
        try:
            await self.store.add_intent(intent)
        except Exception as exc:
            if is_storage_failure(exc):
                raise storage_error(exc, doing) from None
            raise

    async def _forget(self, intent: Intent) -> None:
        """Drop an intent whose work did not happen (best effort: recovery drops it otherwise)."""
        try:
            await self.store.drop_intent(intent.id)
        except Exception:
            log.warning("could not drop intent %s; startup recovery will", intent.id, exc_info=True)

    # -- rewind and redo ---------------------------------------------------------------
    async def rewind(
        self, session: SessionRow, invocation_id: str, *, v1: bool = False, history_length: int | None = None
    ) -> tuple[dict[str, Any], list[str]]:
        """Rewind ``session`` before ``invocation_id``: the rewind Task (without history) and the
        raw JSON of its history (1.0 JSON with ``v1``, else 0.3) -- with ``history_length``, only
        its newest ``history_length`` messages (the Task's metadata gives the whole count)."""
        return await self._go_back(session, invocation_id, redo_of=None, v1=v1, history_length=history_length)

    async def redo(
        self, session: SessionRow, rewind_task_id: str | None, *, v1: bool = False, history_length: int | None = None
    ) -> tuple[dict[str, Any], list[str]]:
        """Undo the rewind Task ``rewind_task_id`` (None: the last rewind, if no turn came after
        it): the session goes back to just before it. Answers like :meth:`rewind`."""
        log = await self.store.session_log(session.id, lazy=True)
        if rewind_task_id is None:
            target = log.last_rewind()
            if target is None:
                raise Conflict(
                    "nothing to redo: no rewind is the last thing done on this session (a turn came after it, "
                    "or it was already undone)"
                )
        else:
            target = log.task(rewind_task_id)
            if target is None or target.kind not in REWIND_KINDS:
                raise NotFound(f"no rewind task {rewind_task_id!r} in session {session.id!r}")
        if not target.invocation_id:
            raise Conflict(f"rewind {target.id!r} cannot be redone: the agent's record of it is not known")
        return await self._go_back(
            session, target.invocation_id, redo_of=target.id, v1=v1, history_length=history_length, log=log
        )

    async def _go_back(
        self,
        session: SessionRow,
        invocation_id: str,
        *,
        redo_of: str | None,
        v1: bool,
        history_length: int | None,
        log: SessionLog | None = None,
    ) -> tuple[dict[str, Any], list[str]]:
        plan = await self._plan(session, invocation_id, current_only=redo_of is None, log=log)
        events_before = await self._event_count(session)
        task = rewind_task(
            task_id=new_id(),
            session=session,
            app_name=self.app_name,
            before=invocation_id,
            redo_of=redo_of,
            total=plan.total,
            turns=plan.hidden_turns,
        )
        intent = Intent(
            id=task["id"],
            kind="rewind",
            session_id=session.id,
            payload={
                "user_id": session.user_id,
                "task": task,
                "before": invocation_id,
                "current_only": redo_of is None,
                "events_before": events_before,
            },
            created_at=now_iso(),
        )
        doing = "redo the rewind" if redo_of else "rewind the session"
        await self._journal(intent, doing)
        agent_done = False
        try:
            async with self.store.transaction() as tx:
                try:
                    event = await self._agent_rewind(session, invocation_id)
                except AdkNotFoundError as exc:  # InvocationNotFoundError / SessionNotFoundError
                    raise InvalidInvocation(f"the agent session has no invocation {invocation_id!r}: {exc}") from None
                agent_done = True
                await self.checkpoints.reach(REWIND_AFTER_AGENT)
                task["metadata"][contract.REWIND_INVOCATION_KEY] = (
                    event.invocation_id if event is not None else await self._rewind_invocation(session, invocation_id)
                )
                await tx.execute(
                    [
                        *self.store.rewind_statements(
                            session_id=session.id,
                            rewind_task=task,
                            plan=plan,
                            user_id=session.user_id,
                            invocation_id=task["metadata"][contract.REWIND_INVOCATION_KEY],
                        ),
                        self.store.intent_done_statement(intent.id),
                    ]
                )
        except BaseException as exc:
            if agent_done:
                # ADK has rewound, the store has not: recovery completes it from the journal.
                self._on_store_failure(session.id)
                if isinstance(exc, Exception) and is_storage_failure(exc):
                    raise RecoveryPending(
                        storage_error(exc, "record the rewind").message
                        + "; the agent has rewound and the store will follow as soon as it can be written"
                    ) from None
                raise
            await self._forget(intent)
            if isinstance(exc, Exception) and not isinstance(exc, ServiceError) and is_storage_failure(exc):
                raise storage_error(exc, doing) from None
            raise
        answered = plan.effective if history_length is None else plan.newest(history_length)
        bodies = await self.store.message_bodies([m.seq for m in answered], v1=v1)
        return task, bodies

    async def _event_count(self, session: SessionRow) -> int:
        """How many events ADK holds for the session (recovery looks for the rewind after them)."""
        count = getattr(self.session_service, "event_count", None)
        if count is not None:
            return int(await count(app_name=self.app_name, user_id=session.user_id, session_id=session.id))
        adk = await self.session_service.get_session(
            app_name=self.app_name, user_id=session.user_id, session_id=session.id
        )
        return len(adk.events) if adk else 0

    async def _agent_rewind(self, session: SessionRow, invocation_id: str) -> Event | None:
        """ADK's rewind: computed from checkpoints where the session service can
        (:mod:`rewindtui.server.storage.adk_rewind`; the event it appended), else
        ``Runner.rewind_async`` (None)."""
        rewind = getattr(self.session_service, "rewind", None)
        if rewind is not None:
            event = await rewind(
                app_name=self.app_name,
                user_id=session.user_id,
                session_id=session.id,
                before=invocation_id,
                artifact_service=self.runner.artifact_service,
            )
            if event is not None:
                return cast(Event, event)
        await self.runner.rewind_async(
            user_id=session.user_id, session_id=session.id, rewind_before_invocation_id=invocation_id
        )
        return None

    async def _rewind_invocation(self, session: SessionRow, invocation_id: str) -> str | None:
        """The invocation id of the rewind event ADK just appended."""
        adk = await self.session_service.get_session(
            app_name=self.app_name, user_id=session.user_id, session_id=session.id
        )
        if adk is not None and adk.events:
            last = adk.events[-1]
            if last.actions.rewind_before_invocation_id == invocation_id:
                return last.invocation_id
        return None

    # -- fork --------------------------------------------------------------------------
    async def fork(self, session: SessionRow, invocation_id: str) -> SessionRow:
        """A new session holding ``session`` as it was just before ``invocation_id``: a current
        turn's, a rewound turn's (a branch kept on the server), or a rewind's own (the branch that
        rewind took away, whole)."""
        plan = await self._plan(session, invocation_id, current_only=False)
        new_sid, fork_task_id = new_id(), new_id()
        seqs = [m.seq for m in plan.effective]
        ts = now_iso()
        row = SessionRow(
            id=new_sid,
            user_id=session.user_id,
            name=fork_name(session, plan, set(await self.store.session_names(session.user_id))),
            agent_ref=self.agent_ref,
            created_at=ts,
            updated_at=ts,
            forked_from=session.id,
            forked_before_invocation_id=invocation_id,
        )
        task = {
            "kind": "task",
            "id": fork_task_id,
            "contextId": new_sid,
            "status": {"state": "completed", "timestamp": ts},
            "metadata": {
                **kagent_metadata(app_name=self.app_name, user_id=session.user_id, session_id=new_sid),
                EFFECTIVE_HISTORY_KEY: True,
                FORKED_FROM_KEY: session.id,
                FORK_BEFORE_KEY: invocation_id,
            },
        }
        intent = Intent(
            id=fork_task_id,
            kind="fork",
            session_id=session.id,
            payload={"new_session_id": new_sid, "user_id": session.user_id},
            created_at=ts,
        )
        await self._journal(intent, "fork the session")
        created = False
        try:
            fork_fast = getattr(self.session_service, "fork", None)
            try:
                done = fork_fast is not None and await fork_fast(
                    app_name=self.app_name,
                    user_id=session.user_id,
                    session_id=session.id,
                    before=invocation_id,
                    new_session_id=new_sid,
                )
            except AdkNotFoundError:  # InvocationNotFoundError: nothing was written
                raise InvalidInvocation(f"the agent session has no invocation {invocation_id!r}") from None
            created = bool(done)
            if not done:
                adk = await self.session_service.get_session(
                    app_name=self.app_name, user_id=session.user_id, session_id=session.id
                )
                events = adk.events if adk is not None else []
                cut = next((i for i, e in enumerate(events) if e.invocation_id == invocation_id), None)
                if cut is None:
                    raise InvalidInvocation(f"the agent session has no invocation {invocation_id!r}")
                new_adk = await self.session_service.create_session(
                    app_name=self.app_name, user_id=session.user_id, session_id=new_sid
                )
                created = True
                import_events = getattr(self.session_service, "import_events", None)
                if import_events is not None:
                    # reads the events, changes none; copies their stored rows
                    await import_events(new_adk, events[:cut], copied_from=(self.app_name, session.user_id, session.id))
                else:  # append_event changes the event it is given (temp state): copies
                    for event in events[:cut]:
                        await self.session_service.append_event(new_adk, event.model_copy(deep=True))
            await self.checkpoints.reach(FORK_AFTER_AGENT)
            await self._store_fork(row, task, intent, seqs)
        except BaseException as exc:
            undone = not created
            if created:
                try:
                    await self.session_service.delete_session(
                        app_name=self.app_name, user_id=session.user_id, session_id=new_sid
                    )
                    undone = True
                except Exception:
                    log.warning("could not undo fork %s; startup recovery will", new_sid, exc_info=True)
            if undone:
                with contextlib.suppress(Exception):
                    await self._forget(intent)
            if isinstance(exc, Exception) and not isinstance(exc, ServiceError) and is_storage_failure(exc):
                raise storage_error(exc, "fork the session") from None
            raise
        return row

    async def _store_fork(self, row: SessionRow, task: dict[str, Any], intent: Intent, seqs: list[int]) -> None:
        """The store's side of a fork, in one transaction: the session, its fork task holding copies
        of the messages ``seqs`` (in that order), the intent done. The copies are made inside the
        database where every message fits (:meth:`~.store_log.LogStore.fork_copy`: no message through
        Python); else that transaction is rolled back and they are made here."""
        if seqs and await self.store.fork_copy_in_database():
            try:
                async with self.store.transaction() as tx:
                    await tx.execute(self.store.fork_statements(session=row, fork_task=task, messages=[]))
                    if not await self.store.fork_copy(tx, row.id, task["id"], seqs):
                        raise _Misfit
                    await tx.execute([self.store.intent_done_statement(intent.id)])
                return
            except _Misfit:
                log.info("fork %s: a message cannot be copied inside the database; copying through Python", row.id)
        messages, v1_texts = [], []
        for body, v1_body in await self.store.message_pairs(seqs):
            messages.append(_moved(json.loads(body), row.id, task["id"]))
            v1_texts.append(moved_v1_text(v1_body, row.id, task["id"]))
        async with self.store.transaction() as tx:
            await tx.execute(
                [
                    *self.store.fork_statements(session=row, fork_task=task, messages=messages, v1_texts=v1_texts),
                    self.store.intent_done_statement(intent.id),
                ]
            )


class _Misfit(Exception):
    """A message of a fork cannot be copied inside the database (the transaction is rolled back)."""
