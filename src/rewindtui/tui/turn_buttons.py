"""What the transcript's buttons show, read from the chat's one permissions gate
(:class:`rewindtui.chat.Permissions`): a snapshot the transcript keeps between frames, so that a
drawn message is redrawn only when what its buttons show changes. It decides nothing: every value
is the gate's answer (``allows``, ``why_not``, ``only_busy``, ``can_restore``)."""

from __future__ import annotations

from dataclasses import dataclass

from rewindtui.chat import Action, Permissions
from rewindtui.chat.permissions import NOT_CONNECTED


@dataclass(frozen=True)
class TurnButtons:
    rewind: bool = False  # rewind to a turn, edit it (the gate answers both alike)
    fork: bool = False
    restore: bool = False  # a rewound turn's branch can be brought back (now or once idle)
    rewind_reason: str = NOT_CONNECTED
    fork_reason: str = NOT_CONNECTED
    restore_reason: str = NOT_CONNECTED
    #: unavailable only for now (a turn or a rewind is in flight): drawn quiet, not struck out
    rewind_soon: bool = False
    fork_soon: bool = False

    @classmethod
    def of(cls, gate: Permissions) -> TurnButtons:
        return cls(
            rewind=gate.allows(Action.REWIND),
            fork=gate.allows(Action.FORK),
            restore=gate.can_restore,
            rewind_reason=gate.why_not(Action.REWIND),
            fork_reason=gate.why_not(Action.FORK),
            restore_reason=gate.why_not(Action.RESTORE),
            rewind_soon=gate.only_busy(Action.REWIND),
            fork_soon=gate.only_busy(Action.FORK),
        )

    def shown(self, action: str) -> tuple[bool, bool]:
        """(enabled, unavailable only for now) of a message's button ``action``."""
        if action in ("rewind", "edit"):
            return self.rewind, self.rewind_soon
        if action in ("fork", "fork_branch"):
            return self.fork, self.fork_soon
        if action == "restore":
            return self.restore, False
        return True, False

    def why_not(self, action: str) -> str:
        """Why the button ``action`` is unavailable ("" when it is available)."""
        enabled, _ = self.shown(action)
        if enabled:
            return ""
        if action == "restore":
            return self.restore_reason
        return self.rewind_reason if action in ("rewind", "edit") else self.fork_reason
