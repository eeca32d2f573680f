"""Rewind as kagent 1.0 can do it: a checkpoint after each finished turn, and "rewind to before
turn N" = a fork from the checkpoint after turn N-1. The app moves to the fork and keeps the
original conversation as the rewound branch (undo goes back to it). kagent 1.0 has no in-place
rewind: nothing of the original is changed.

A checkpoint names the turn's task (``expected_head_task_id``) and is idempotent per turn (its
``request_id`` names the session and the turn). It is skipped -- and said so -- when the head task
is not terminal: kagent checkpoints no paused turn (input or authentication requested,
docs/protobuf-api.md@3855fe51).
With auto-checkpoints off, rewind offers only the turns that already have a checkpoint.

Which conversation a fork came from is kept in a :class:`~rewindtui.kagent1.forks.ForkStore`
(kagent cannot tell), so the undo of a rewind survives a restart.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable
from dataclasses import dataclass

from rewindtui.kagent1.controller import CheckpointAdvanced, Kagent1Controller, OperationFailed
from rewindtui.kagent1.forks import ForkRecord, ForkStore, new_record
from rewindtui.kagent1.gen import kagent1_pb2 as pb
from rewindtui.kagent1.grpcweb import GrpcError

TERMINAL = {"completed", "failed", "canceled", "rejected"}
FIRST_TURN = (
    "kagent 1.0 cannot fork from before the first turn (no checkpoint exists there): start a new session instead"
)


def preview(before_turn: int) -> str:
    """What a rewind to before turn N does on kagent 1.0, said truthfully."""
    return f"kagent forks: a new session from turn {before_turn - 1}; the original is kept"


class RewindRefused(Exception):
    """The rewind could not be done; nothing changed (the view stays on the original)."""


@dataclass
class CheckpointOutcome:
    turn: int | str
    checkpoint: pb.Checkpoint | None
    note: str = ""  # why it was skipped, or ""


@dataclass
class Branch:
    """One rewind: the app moved to ``fork``; ``original`` is the rewound branch, kept."""

    original: str
    fork: pb.Session
    before_turn: int


@dataclass
class Kagent1Rewind:
    controller: Kagent1Controller
    agent: str  # "namespace/name"
    auto_checkpoints: bool = True
    #: where each fork came from (in memory unless given a file: see rewindtui.kagent1.forks)
    forks: ForkStore | None = None

    def __post_init__(self) -> None:
        if self.forks is None:
            self.forks = ForkStore(None, self.controller.url)

    @property
    def namespace(self) -> str:
        return self.agent.partition("/")[0]

    # -- checkpoints -----------------------------------------------------------------------------
    async def after_turn(
        self, session_id: str, turn: int | str, head_state: str | None, head_task_id: str | None = None
    ) -> CheckpointOutcome:
        """The checkpoint after a finished turn (``turn``: its number or its task id; the task id
        -- ``turn`` itself or ``head_task_id`` -- is the checkpoint's ``expected_head_task_id``, and
        both name its request, so asking twice gives the same checkpoint), when auto-checkpoints
        are on. A conversation that moved on raises :class:`CheckpointAdvanced` (re-read it and
        choose again)."""
        if not self.auto_checkpoints:
            return CheckpointOutcome(turn, None, "auto-checkpoints are off")
        label = f"turn {turn}" if isinstance(turn, int) else "this turn"
        state = (head_state or "").lower().removeprefix("task_state_").replace("_", "-")
        if state not in TERMINAL:
            return CheckpointOutcome(
                turn,
                None,
                f"no checkpoint after {label}: the turn is {state or 'not finished'} (kagent checkpoints only a "
                "finished turn, not one waiting for input)",
            )
        task_id = turn if isinstance(turn, str) else head_task_id
        if not task_id:
            return CheckpointOutcome(turn, None, f"no checkpoint after {label}: its task is not known")
        try:
            checkpoint = await self.controller.checkpoint(session_id, f"rewindtui-{session_id}-turn-{turn}", task_id)
        except CheckpointAdvanced:
            raise
        except GrpcError as exc:
            if exc.code == "FAILED_PRECONDITION":
                return CheckpointOutcome(turn, None, f"no checkpoint after {label}: {exc.message}")
            raise
        return CheckpointOutcome(turn, checkpoint)

    async def rewindable_turns(self, session_id: str) -> list[int]:
        """The turns N that can be rewound to before (a ready checkpoint after turn N-1 exists)."""
        ready = [c for c in await self.controller.checkpoints(session_id) if c.state == pb.CHECKPOINT_STATE_READY]
        return sorted({int(c.history_sequence) + 1 for c in ready})

    def costs(self) -> str:
        """Checkpoint and fork costs so far, in words (their count and time)."""
        parts = []
        for kind in ("checkpoint", "fork"):
            rows = [c for c in self.controller.costs if c[0] == kind]
            if rows:
                total = sum(seconds for _, seconds, _ in rows)
                parts.append(f"{len(rows)} {kind}{'s' if len(rows) != 1 else ''}, {total:.2f} s")
        return "; ".join(parts) or "no checkpoints taken"

    # -- rewind, undo ----------------------------------------------------------------------------
    async def rewind(
        self, session_id: str, before_turn: int, *, request_id: str | None = None, turns: int | None = None
    ) -> Branch:
        """Fork from the checkpoint after turn ``before_turn - 1``; the original (of ``turns``
        turns; None: as its checkpoints say) is kept."""
        if before_turn <= 1:
            raise RewindRefused(FIRST_TURN)
        wanted = before_turn - 1
        return await self._fork(
            session_id, before_turn, lambda c: c.history_sequence == wanted, f"turn {wanted}", request_id, turns
        )

    async def rewind_after_task(
        self,
        session_id: str,
        head_task_id: str,
        before_turn: int,
        *,
        request_id: str | None = None,
        turns: int | None = None,
    ) -> Branch:
        """Fork from the checkpoint whose head is ``head_task_id`` (the turn before ``before_turn``)."""
        return await self._fork(
            session_id,
            before_turn,
            lambda c: c.head_task_id == head_task_id,
            f"turn {before_turn - 1}",
            request_id,
            turns,
        )

    async def _fork(
        self,
        session_id: str,
        before_turn: int,
        wanted: Callable[[pb.Checkpoint], bool],
        what: str,
        request_id: str | None,
        turns: int | None,
    ) -> Branch:
        try:
            listed = await self.controller.checkpoints(session_id)
        except GrpcError as exc:
            raise RewindRefused(
                f"the checkpoints could not be read: {exc.message or exc.code}; nothing changed"
            ) from None
        ready = [c for c in listed if c.state == pb.CHECKPOINT_STATE_READY and wanted(c)]
        if not ready:
            why = "auto-checkpoints are off" if not self.auto_checkpoints else "it was skipped or has not finished"
            raise RewindRefused(f"there is no checkpoint after {what} to fork from ({why}); nothing changed")
        return await self.fork_from(
            session_id, ready[-1], before_turn, request_id=request_id, turns=turns, listed=listed
        )

    async def fork_from(
        self,
        session_id: str,
        checkpoint: pb.Checkpoint,
        before_turn: int,
        *,
        request_id: str | None = None,
        turns: int | None = None,
        listed: list[pb.Checkpoint] | None = None,
    ) -> Branch:
        """A new session from ``checkpoint`` (any of the session's: kagent's UI forks from any),
        recorded as a rewind of ``session_id`` to before ``before_turn`` so that undo finds it."""
        try:
            fork = await self.controller.fork(checkpoint.id, request_id or str(uuid.uuid4()))
            fork = await self.controller.open(fork.id)
        except (GrpcError, OperationFailed) as exc:
            raise RewindRefused(f"the fork failed: {getattr(exc, 'message', '') or exc}; nothing changed") from None
        if turns is None:
            turns = max((int(c.history_sequence) for c in listed or [checkpoint]), default=before_turn)
        assert self.forks is not None
        self.forks.put(new_record(fork.id, session_id, before_turn, turns))
        return Branch(session_id, fork, before_turn)

    def fork_of(self, fork_id: str) -> ForkRecord | None:
        """Where the conversation ``fork_id`` came from, when a rewind here made it (None: not)."""
        assert self.forks is not None
        return self.forks.get(fork_id)

    def undo(self, fork_id: str) -> str:
        """The original conversation of the rewind that made ``fork_id`` (its id), to go back
        to; the record goes (the fork stays a conversation of its own)."""
        assert self.forks is not None
        record = self.forks.pop(fork_id)
        if record is None:
            raise RewindRefused("nothing to undo: this session was not made by a rewind here")
        return record.original
