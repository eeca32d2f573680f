"""Following and cancelling, from any replica, a turn that runs on another one (a team server).

A turn's live events (its deltas) exist only in the replica that runs it; what it stores -- the
task's state and each whole message, written as the turn goes -- every replica can read. So:

* **Follow** (``SubscribeToTask`` / ``tasks/resubscribe``) a task that is running but not here:
  the stored Task first (its history so far), then, polling the store every
  :data:`POLL_SECONDS`, each message stored since as a ``working`` status update, and the final
  status once the task has ended. The follower sees whole messages, not the model's deltas. When
  no replica holds the task's session any more (the one running it died), this replica finishes
  the turn as the session's next claim would (failed, with what was stored) and ends the stream
  with that.
* **Cancel** (``CancelTask``) a task running on another replica: the request is written to the
  database (``cancel_requests``); every replica looks there for its own running turns every
  :data:`POLL_SECONDS` (:meth:`TeamTurns.watch`) and cancels the ones asked for, exactly as a
  local cancel; the asking replica waits for the task to end (at most :data:`CANCEL_WAIT_SECONDS`)
  and answers it.

a2a-sdk 1.3's ``DatabaseTaskEventStream`` does the same for its own task store (a snapshot, then a
tail polled every 0.5 s); this server keeps its tasks in its own store, so it follows that.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
from collections.abc import AsyncIterator
from typing import Any

from rewindtui.a2a.dialect import TERMINAL_STATES
from rewindtui.server.service.agent_service import RUNNING_STATES, AgentService
from rewindtui.server.shared.errors import Conflict
from rewindtui.server.shared.wire import status_update
from rewindtui.server.storage.team_store import TeamStore

log = logging.getLogger(__name__)

POLL_SECONDS = 0.25
#: how often a follower checks that some replica still holds the session (else it died)
ALIVE_CHECK_SECONDS = 2.0
CANCEL_WAIT_SECONDS = 30.0


class TeamTurns:
    """Follow and cancel turns running on other replicas (see the module's docstring)."""

    def __init__(self, service: AgentService, team: TeamStore) -> None:
        self.service = service
        self.team = team
        self._watcher: asyncio.Task[None] | None = None

    def runs_elsewhere(self, state: str, task_id: str) -> bool:
        return state in RUNNING_STATES and self.service.live_task(task_id) is None

    # -- follow ------------------------------------------------------------------------------
    async def follow(self, user_id: str, task_id: str) -> AsyncIterator[dict[str, Any]]:
        data = json.loads(await self.service.task_json(user_id, task_id))
        yield data
        seen = {m.get("messageId") for m in data.get("history", [])}
        loop = asyncio.get_running_loop()
        next_check = loop.time() + ALIVE_CHECK_SECONDS
        while data["status"]["state"] not in TERMINAL_STATES and data["status"]["state"] != "input-required":
            await asyncio.sleep(POLL_SECONDS)
            if self.service.live_task(task_id) is not None:  # it moved here (a resumed answer)
                live = self.service.live_task(task_id)
                assert live is not None
                async for event in live.follow():
                    if event.get("kind") != "task":
                        yield event
                return
            if loop.time() >= next_check:
                next_check = loop.time() + ALIVE_CHECK_SECONDS
                await self._finish_if_orphaned(data)
            data = json.loads(await self.service.task_json(user_id, task_id))
            for message in data.get("history", []):
                if message.get("messageId") not in seen:
                    seen.add(message.get("messageId"))
                    if message.get("role") == "agent":
                        yield status_update(
                            task_id=task_id, context_id=data["contextId"], state="working", message=message
                        )
        status = data["status"]
        yield status_update(
            task_id=task_id, context_id=data["contextId"], state=status["state"], message=status.get("message")
        )

    async def _finish_if_orphaned(self, data: dict[str, Any]) -> None:
        """No replica holds the task's session: the one running the turn is gone -- finish it."""
        session_id = data["contextId"]
        jobs = self.service.jobs
        try:
            held = await jobs.claim_shared(session_id, "turn")
        except Exception:  # held here or elsewhere: someone runs it
            return
        try:
            if held:
                session = await self.service.store.get_session(session_id)
                if session is not None:
                    await self.service.recovery.session(session_id, session.user_id)
        finally:
            jobs.release(session_id)
            await jobs.release_shared(session_id)

    # -- cancel ------------------------------------------------------------------------------
    async def cancel(self, user_id: str, task_id: str) -> str:
        """Cancel ``task_id`` running on another replica; the task JSON once it has ended."""
        await self.team.request_cancel(task_id, user_id)
        loop = asyncio.get_running_loop()
        deadline = loop.time() + CANCEL_WAIT_SECONDS
        while True:
            text = await self.service.task_json(user_id, task_id)
            if json.loads(text)["status"]["state"] not in RUNNING_STATES:
                return text
            if loop.time() > deadline:
                raise Conflict(
                    f"task {task_id!r} runs on another replica, which has not stopped it within "
                    f"{CANCEL_WAIT_SECONDS:g} s; the cancel stays asked for"
                )
            await asyncio.sleep(POLL_SECONDS)

    async def _watch_once(self) -> None:
        running = list(self.service.turns.jobs)
        asked = await self.team.cancels_for(running)
        for task_id in asked:
            self.service.turns.cancel(task_id)
        await self.team.drop_cancels(asked)

    async def _watch(self) -> None:
        while True:
            await asyncio.sleep(POLL_SECONDS)
            try:
                await self._watch_once()
            except asyncio.CancelledError:
                raise
            except Exception:  # the database may be briefly away: look again next time
                log.warning("could not read the cancels asked by other replicas", exc_info=True)

    def start(self) -> None:
        self._watcher = asyncio.get_running_loop().create_task(self._watch())

    async def stop(self) -> None:
        watcher, self._watcher = self._watcher, None
        if watcher is not None:
            watcher.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await watcher
