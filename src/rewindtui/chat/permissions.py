"""The one permissions gate: what the user may do now, and why not.

:meth:`rewindtui.chat.Chat.permissions` computes a :class:`Permissions` from the chat's state and
the server's capabilities; the app, the turn picker and the headless commands only read it
(``why_not(action)``: "" when allowed, else one sentence in the app's words)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from enum import Enum


class Action(str, Enum):
    """Everything a user can ask of a chat."""

    SEND = "send"
    STOP = "stop"
    RESUME = "resume"
    ANSWER = "answer"  # approve or reject the question a turn waits on
    REWIND = "rewind"
    EDIT = "edit"  # edit-and-resend a turn
    FORK = "fork"
    REDO = "redo"  # undo the server's last rewind (explicitly, by its task)
    RESTORE = "restore"  # bring a rewound branch back (up to a turn)
    UNDO = "undo"  # the one undo: see Chat.undo_label()
    REAPPLY = "reapply"  # redo what the one undo undid (the same rewind again): see Chat.redo_label()
    RETRY = "retry"  # send the failed last turn again (Chat.retry)
    SWITCH_SESSION = "switch session"
    LOAD_OLDER = "load older"
    SHOW_REWOUND = "show rewound"


@dataclass(frozen=True)
class Permissions:
    """What may be done now. ``why_not(action)`` is "" when allowed, else why not. A reason equal
    to :attr:`busy_reason` means "not now" (something is in flight), not "never"."""

    reasons: Mapping[Action, str] = field(default_factory=dict)
    #: said in the view when the server cannot give (all of) the conversation back
    history_note: str = ""
    #: what is in flight ("" when nothing is)
    busy_reason: str = ""
    #: what the one undo would undo now, in words ("undo the rewind of 2 turns"), None when nothing
    undo_label: str | None = None
    #: what redo would do again now, in words ("redo the rewind of 2 turns"), None when nothing
    redo_label: str | None = None
    #: non-empty: the session may be read, not written to, and why (the app disables its
    #: composer with it); every action in :data:`WRITES` is refused with it
    read_only: str = ""

    def why_not(self, action: Action) -> str:
        return self.reasons.get(action, "")

    def allows(self, action: Action) -> bool:
        return not self.why_not(action)

    def only_busy(self, action: Action) -> bool:
        """Unavailable only for now (a turn or a rewind is in flight)."""
        reason = self.why_not(action)
        return bool(reason) and reason == self.busy_reason

    # -- the field names callers used before the gate had actions (read-only views of it) ----
    @property
    def can_rewind(self) -> bool:
        return self.allows(Action.REWIND)

    @property
    def can_fork(self) -> bool:
        return self.allows(Action.FORK)

    @property
    def can_stop(self) -> bool:
        return self.allows(Action.STOP)

    @property
    def can_confirm(self) -> bool:
        return self.allows(Action.ANSWER)

    @property
    def can_restore(self) -> bool:
        """A rewound branch can be brought back (now, or once what is in flight is done)."""
        return self.allows(Action.RESTORE) or self.only_busy(Action.RESTORE)

    @property
    def rewind_reason(self) -> str:
        return self.why_not(Action.REWIND)

    @property
    def fork_reason(self) -> str:
        return self.why_not(Action.FORK)

    @property
    def stop_reason(self) -> str:
        return self.why_not(Action.STOP)

    @property
    def confirm_reason(self) -> str:
        return self.why_not(Action.ANSWER)


NOT_CONNECTED = "not connected"

#: what a read-only session refuses (it may be read and followed, not written to)
WRITES = frozenset(
    {
        Action.SEND,
        Action.STOP,
        Action.ANSWER,
        Action.REWIND,
        Action.EDIT,
        Action.FORK,
        Action.REDO,
        Action.RESTORE,
        Action.UNDO,
        Action.REAPPLY,
        Action.RETRY,
    }
)


def read_only(perms: Permissions, reason: str) -> Permissions:
    """``perms`` with every write refused because of ``reason`` (unchanged when it is "")."""
    if not reason:
        return perms
    return replace(
        perms,
        reasons={**perms.reasons, **dict.fromkeys(WRITES, reason)},
        read_only=reason,
        undo_label=None,
        redo_label=None,
    )


def disconnected(history_note: str = "") -> Permissions:
    return Permissions({action: NOT_CONNECTED for action in Action}, history_note=history_note)
