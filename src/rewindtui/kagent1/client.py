"""The kagent 1.0 profile as the rest of rewindtui sees it: an :class:`~rewindtui.client.a2a_client.A2AClient`
for the agent's A2A 1.0 route (``/agents/{ns}/{name}``) whose session operations go to kagent's
controller instead of a REST API:

- sessions are kagent's ``Session`` (SessionService, sessions.proto@1e2422ff): listed per agent (all pages), created
  with a ``request_id`` (a retry never makes two) and waited for while they are created, renamed,
  deleted; a suspended one is resumed when it is opened, a failed one says its reason;
- a session's tasks are A2A ``ListTasks(contextId = session id)``, paged;
- after each finished turn a checkpoint is taken (unless ``kagent_checkpoints`` is off), and
  rewind / fork go through :mod:`rewindtui.chat.kagent1_hook` (which calls this class): a fork from the
  checkpoint before the turn, the original kept (undo opens it again; which original a fork came from is kept
  under the data dir, :mod:`rewindtui.kagent1.forks`, so the undo survives a restart);
- a session opened from a read-only share has :attr:`read_only_reason` set: sending is refused
  with it before anything goes out, and the app disables its composer with it;
- what kagent 1.0's own UI offers besides: the session's checkpoints (listed with their names,
  renamed, deleted, forked from), its shares (listed, revoked).
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator, Awaitable
from pathlib import Path
from typing import Any, TypeVar

from rewindtui.a2a import metadata as meta
from rewindtui.a2a import raw
from rewindtui.a2a.classify import StreamEvent
from rewindtui.a2a.dialect import norm_state
from rewindtui.client.a2a_client import A2AClient, Capabilities, ServerConfig, Session, TaskPage
from rewindtui.client.errors import ConnectFailed, HTTPStatusFailed, Unsupported
from rewindtui.kagent1 import FORK_MODE
from rewindtui.kagent1.controller import CheckpointAdvanced, Kagent1Controller, OperationFailed
from rewindtui.kagent1.forks import ForkRecord, ForkStore
from rewindtui.kagent1.gen import kagent1_pb2 as pb
from rewindtui.kagent1.grpcweb import GrpcError
from rewindtui.kagent1.rewind import FIRST_TURN, CheckpointOutcome, Kagent1Rewind, RewindRefused, preview
from rewindtui.model import Conversation
from rewindtui.model.task_order import oldest_first

T = TypeVar("T")

_STATUS = {
    "NOT_FOUND": 404,
    "PERMISSION_DENIED": 403,
    "UNAUTHENTICATED": 401,
    "INVALID_ARGUMENT": 400,
    "FAILED_PRECONDITION": 409,
    "ALREADY_EXISTS": 409,
    "ABORTED": 409,
    "UNIMPLEMENTED": 501,
}


def http_error(exc: GrpcError, what: str) -> Exception:
    """A gRPC status as the client's own error types (404 for NOT_FOUND ...)."""
    if exc.code in ("UNAVAILABLE", "DEADLINE_EXCEEDED"):
        return ConnectFailed(f"{what}: {exc.message or exc.code}")
    return HTTPStatusFailed(f"{what}: {exc.message or exc.code}", _STATUS.get(exc.code, 502), exc.message or exc.code)


def stamp(ts: Any) -> str | None:
    return str(ts.ToJsonString()) if ts.seconds or ts.nanos else None


def session_of(instance: pb.Session) -> Session:
    return Session(
        id=instance.id,
        name=instance.name,
        user_id=instance.creator or None,
        created_at=stamp(instance.created_at),
        updated_at=stamp(instance.updated_at),
        raw={"state": pb.SessionState.Name(instance.state), "context_id": instance.context_id},
        state=state_words(instance),
    )


def state_words(instance: pb.Session) -> str:
    """A session's state in words: "ready", "suspended" (resumed when opened), "creating",
    "failed: <its reason>", ..."""
    try:
        word = pb.SessionState.Name(instance.state).removeprefix("SESSION_STATE_").lower()
    except ValueError:  # a state this build does not know: never read as a good one
        return f"unknown state {instance.state}"
    if instance.state == pb.SESSION_STATE_FAILED:
        reason = instance.failure.message or instance.failure.reason
        return f"failed: {reason}" if reason else word
    return "" if word == "unspecified" else word


class Kagent1Client(A2AClient):
    def __init__(
        self,
        config: ServerConfig,
        controller: Kagent1Controller,
        agent: str,
        *,
        checkpoints: bool = True,
        read_only_reason: str = "",
        forks_file: Path | None = None,
        http: Any = None,
    ) -> None:
        super().__init__(config, http)
        self.kagent1 = controller
        self.agent = agent
        forks = ForkStore(forks_file, controller.url)
        self.rewinder = Kagent1Rewind(controller, agent, auto_checkpoints=checkpoints, forks=forks)
        #: non-empty: this session may be read, not written to (a read-only share), and why
        self.read_only_reason = read_only_reason
        #: what the checkpoints after turns said when they were skipped, newest last (bounded)
        self.checkpoint_notes: list[str] = []
        #: the last turn sent got no checkpoint (its note is the last of checkpoint_notes)
        self.last_turn_skipped = False
        #: per session: the head task ids of its ready checkpoints, as last read (on open) and
        #: taken since; what the preview says can be forked from
        self.checkpointed: dict[str, set[str]] = {}

    async def aclose(self) -> None:
        await self.kagent1.aclose()
        await super().aclose()

    @property
    def read_only(self) -> bool:
        return bool(self.read_only_reason)

    async def connect(self) -> Capabilities:
        caps = await super().connect()
        caps.rewind_modes = (FORK_MODE,) if caps.rewind_off is False else ()
        caps.fork = not caps.rewind_off
        caps.redo = not caps.rewind_off
        caps.kagent_agent = self.agent
        return caps

    @property
    def has_api(self) -> bool:
        return True  # sessions come from the controller

    async def _grpc(self, call: Awaitable[T], what: str) -> T:
        try:
            return await call
        except GrpcError as exc:
            raise http_error(exc, what) from None
        except OperationFailed as exc:
            raise HTTPStatusFailed(f"{what}: {exc}", 409, exc.message or exc.code) from None

    # -- sessions ------------------------------------------------------------------------------
    async def list_sessions(self) -> list[Session]:
        return [session_of(i) for i in await self._grpc(self.kagent1.all_sessions(self.agent), "list sessions")]

    async def create_session(self, name: str | None = None, session_id: str | None = None) -> Session:
        made = await self._grpc(
            self.kagent1.create_session(self.agent, name=name or "", request_id=session_id), "create session"
        )
        ready = await self._grpc(self.kagent1.wait_ready(made.id), "create session")
        return session_of(ready)

    async def get_session(self, session_id: str) -> Session:
        return session_of(await self._grpc(self.kagent1.open(session_id), f"session {session_id}"))

    async def rename_session(self, session_id: str, name: str) -> Session:
        return session_of(await self._grpc(self.kagent1.rename(session_id, name), "rename session"))

    async def delete_session(self, session_id: str) -> None:
        await self._grpc(self.kagent1.delete(session_id), "delete session")

    async def _read_checkpoints(self, session_id: str) -> None:
        """Which turns of the session have a ready checkpoint (a fork can start there)."""
        try:
            listed = await self.kagent1.checkpoints(session_id)
        except GrpcError:
            self.checkpointed.pop(session_id, None)  # unknown: the fork itself will say
            return
        self.checkpointed[session_id] = {c.head_task_id for c in listed if c.state == pb.CHECKPOINT_STATE_READY}

    def has_checkpoint_after(self, session_id: str, task_id: str) -> bool | None:
        """Whether the turn of ``task_id`` has a ready checkpoint to fork from (None: not known)."""
        known = self.checkpointed.get(session_id)
        return None if known is None else task_id in known

    async def session_tasks(self, session_id: str, include_rewound: bool = False) -> list[dict[str, Any]]:
        if not self.read_only_reason:
            await self._read_checkpoints(session_id)
        tasks: list[dict[str, Any]] = []
        token: str | None = None
        while True:
            page = await self.list_tasks(session_id, page_size=100, page_token=token)
            tasks.extend(page.tasks)
            token = page.next_page_token
            if not token or not page.tasks:
                break
        return oldest_first(tasks)

    async def session_tasks_page(
        self,
        session_id: str,
        limit: int,
        before: str | None = None,
        *,
        include_rewound: bool = False,
        history_length: int | None = None,
    ) -> TaskPage:
        # kagent 1.0 keeps no rewound turns (a rewind is a fork): include_rewound adds nothing;
        # history_length is not cut here: the histories come whole (chat.pages reads them as such)
        if before is None and not self.read_only_reason:
            await self._read_checkpoints(session_id)
        page = await self.list_tasks(session_id, page_size=max(1, min(limit, 100)), page_token=before)
        return TaskPage(oldest_first(page.tasks), page.next_page_token)

    # -- turns: a checkpoint after each finished one -------------------------------------------
    async def stream(
        self, message: dict[str, Any], *, read_timeout: float | None = None, history_length: int | None = None
    ) -> AsyncIterator[StreamEvent]:
        if self.read_only_reason:
            raise Unsupported(self.read_only_reason)
        state: str | None = None
        task_id: str | None = None
        async for event in super().stream(message, read_timeout=read_timeout, history_length=history_length):
            body = event.body if isinstance(event.body, dict) else {}
            status = body.get("status")
            if isinstance(status, dict) and status.get("state"):
                state = norm_state(status["state"])
                task_id = body.get("taskId") or body.get("id") or task_id
            yield event
        context = raw.context_id(message)
        if context and task_id and state:
            outcome = await self.checkpoint_after(context, task_id, state)
            self.last_turn_skipped = bool(outcome.note) and self.rewinder.auto_checkpoints
            if self.last_turn_skipped:
                self.checkpoint_notes.append(outcome.note)
                del self.checkpoint_notes[:-20]
            if not self.rewinder.auto_checkpoints:  # the ones taken elsewhere (kagent's UI) are what can be forked from
                await self._read_checkpoints(context)

    async def checkpoint_after(self, session_id: str, task_id: str, state: str) -> CheckpointOutcome:
        """The checkpoint after the turn ``task_id`` ended in ``state``; never fails the turn."""
        try:
            try:
                outcome = await self.rewinder.after_turn(session_id, task_id, state)
            except CheckpointAdvanced:
                # KAGENT_CHECKPOINT_CONVERSATION_ADVANCED: re-read the session, choose again (its
                # head now, when that is finished), once
                page = await self.list_tasks(session_id, page_size=1)
                head = page.tasks[0] if page.tasks else {}
                head_state = norm_state((head.get("status") or {}).get("state") or "")
                if not head.get("id") or head.get("id") == task_id:
                    return CheckpointOutcome(
                        0, None, "no checkpoint after this turn: the session moved on before it was taken"
                    )
                outcome = await self.rewinder.after_turn(session_id, str(head["id"]), head_state)
        except (GrpcError, OperationFailed, CheckpointAdvanced) as exc:
            return CheckpointOutcome(0, None, f"no checkpoint after this turn: {exc}")
        if outcome.checkpoint is not None and outcome.checkpoint.state == pb.CHECKPOINT_STATE_READY:
            self.checkpointed.setdefault(session_id, set()).add(outcome.checkpoint.head_task_id or task_id)
        return outcome

    def fork_preview(self, session_id: str, before_turn: int, head_task_id: str | None) -> str:
        """What a rewind to before turn ``before_turn`` does here, in words: a fork from the
        checkpoint after the turn before (``head_task_id``'s), or why there is none to fork from."""
        if before_turn <= 1:
            return FIRST_TURN
        if head_task_id is not None and self.has_checkpoint_after(session_id, head_task_id) is False:
            why = "auto-checkpoints are off" if not self.rewinder.auto_checkpoints else "it was skipped"
            return (
                f"there is no checkpoint after turn {before_turn - 1} to fork from ({why}); kagent cannot "
                "rewind in place, so Enter changes nothing"
            )
        return preview(before_turn)

    # -- fork ------------------------------------------------------------------------------------
    async def fork(self, session_id: str, before: str) -> Session:
        """A new session from the checkpoint after the turn before invocation ``before``."""
        tasks = await self.session_tasks(session_id)
        index = next((i for i, t in enumerate(tasks) if _has_invocation(t, before)), None)
        if index is None:
            raise HTTPStatusFailed(
                f"fork: no turn {before!r} in this session", 404, f"no turn {before!r} in this session"
            )
        if index == 0:
            raise HTTPStatusFailed(f"fork: {FIRST_TURN}", 409, FIRST_TURN)
        try:
            shown = Conversation(session_id)
            shown.load_tasks(tasks)
            turns = shown.turn_invocations()
            before_turn = turns.index(before) + 1 if before in turns else index + 1
            branch = await self.rewinder.rewind_after_task(
                session_id, tasks[index - 1]["id"], before_turn, turns=len(turns)
            )
        except RewindRefused as exc:
            raise HTTPStatusFailed(f"fork: {exc}", 409, str(exc)) from None
        return session_of(branch.fork)

    # -- what kagent 1.0's own UI offers: checkpoints (named, renamed, deleted, forked from) -------
    async def list_checkpoints(self, session_id: str) -> list[pb.Checkpoint]:
        """The session's checkpoints, as kagent lists them (CheckpointService: unverified)."""
        listed = await self._grpc(self.kagent1.checkpoints(session_id), "list checkpoints")
        self.checkpointed[session_id] = {c.head_task_id for c in listed if c.state == pb.CHECKPOINT_STATE_READY}
        return listed

    async def rename_checkpoint(self, checkpoint_id: str, name: str) -> pb.Checkpoint:
        return await self._grpc(self.kagent1.rename_checkpoint(checkpoint_id, name), "rename checkpoint")

    async def delete_checkpoint(self, session_id: str, checkpoint_id: str) -> None:
        await self._grpc(self.kagent1.delete_checkpoint(checkpoint_id), "delete checkpoint")
        await self._read_checkpoints(session_id)

    async def fork_checkpoint(self, session_id: str, checkpoint: pb.Checkpoint) -> Session:
        """A new session from any of the session's checkpoints (the original is kept; undo goes
        back to it, as after a rewind)."""
        if self.read_only_reason:
            raise Unsupported(self.read_only_reason)
        before_turn = int(checkpoint.history_sequence) + 1
        try:
            branch = await self.rewinder.fork_from(session_id, checkpoint, before_turn)
        except RewindRefused as exc:
            raise HTTPStatusFailed(f"fork: {exc}", 409, str(exc)) from None
        return session_of(branch.fork)

    # -- shares (SessionService) -------------------------------------------------------------------
    async def list_shares(self, session_id: str) -> list[pb.SessionShare]:
        return await self._grpc(self.kagent1.shares(session_id), "list shares")

    async def create_share(self, session_id: str, *, read_only: bool) -> tuple[pb.SessionShare, str]:
        return await self._grpc(self.kagent1.share(session_id, read_only=read_only), "share session")

    async def revoke_share(self, share_id: str) -> None:
        await self._grpc(self.kagent1.revoke_share(share_id), "revoke share")

    def fork_of(self, session_id: str) -> ForkRecord | None:
        """Where ``session_id`` came from, when a rewind here made it (kept under the data dir)."""
        return self.rewinder.fork_of(session_id)

    def undo_target(self, session_id: str) -> str:
        """The original session of the rewind that made ``session_id`` (the rewound branch)."""
        record = self.fork_of(session_id)
        if record is None:
            raise Unsupported("nothing to undo: this session was not made by a rewind here")
        return record.original

    def undone(self, session_id: str) -> None:
        """The rewind that made ``session_id`` was undone (its original is open again)."""
        with contextlib.suppress(RewindRefused):
            self.rewinder.undo(session_id)

    def rewind_words(self) -> str:
        """The checkpoints' and forks' costs, and whether the last turn got no checkpoint."""
        words = self.rewinder.costs()
        if not self.rewinder.auto_checkpoints:
            words += " · auto-checkpoints off"
        elif self.checkpoint_notes and self.last_turn_skipped:
            words += " · the last turn has no checkpoint"
        return words


def _has_invocation(task: dict[str, Any], invocation_id: str) -> bool:
    if meta.value(task.get("metadata"), meta.INVOCATION_ID) == invocation_id:
        return True
    return any(meta.invocation_id(m, task.get("metadata")) == invocation_id for m in raw.history(task))
