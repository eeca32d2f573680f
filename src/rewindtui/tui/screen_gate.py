"""What the chat screen may do now, read from the chat's one permissions gate
(:meth:`rewindtui.chat.Chat.permissions`), through the operations runner
(:meth:`rewindtui.tui.operations.Operations.why_not`), which adds only the work the app has queued
that the chat cannot see yet (a session opening, a rewind worker not yet started).
The footer's keys (``check_action``), the refusals' words and the rewind preview all ask here."""

from __future__ import annotations

from collections.abc import Callable

from rewindtui.chat import Action
from rewindtui.tui.host import ScreenHost


class ScreenGate:
    def __init__(self, host: ScreenHost, *, can_undo: Callable[[], bool]) -> None:
        self.host = host
        self.can_undo = can_undo  # ctrl+z undoes what the status line names (else: the composer's undo)

    def why_not(self, action: Action) -> str:
        """Why ``action`` can't run now ("" if it can): the operations runner's gate."""
        return self.host.ops.why_not(action)

    def why_not_preview(self) -> str:
        """Why no rewind point can be chosen now: neither rewind nor fork allowed, or an edit runs."""
        rewind, fork = self.why_not(Action.REWIND), self.why_not(Action.FORK)
        if rewind and fork:
            return rewind
        chat = self.host.chat
        if chat is not None and chat.edit is not None:
            return "You are editing a turn: Enter resends it, Esc cancels the edit."
        return ""

    def why_never_rewind(self) -> str | None:
        """Why neither rewind nor fork can ever be chosen here (not merely now), or None."""
        chat = self.host.chat
        if chat is None:
            return "Not connected."
        perms = chat.permissions()
        never = [r for r in (perms.rewind_reason, perms.fork_reason) if r and r != perms.busy_reason]
        return never[0] if len(never) == 2 else None

    def shows_key(self, action: str) -> bool:
        """Whether the screen's binding for ``action`` is live (the footer shows it)."""
        if action == "answer":
            chat = self.host.chat
            return chat is not None and chat.permissions().can_confirm
        if action in ("rewind_mode", "rewind_unavailable"):
            possible = self.why_never_rewind() is None
            return possible if action == "rewind_mode" else not possible
        if action == "undo_rewind":
            return self.can_undo()  # else ctrl+z is the composer's own undo
        if action == "retry":
            return not self.why_not(Action.RETRY)  # a key shown only after a failed last turn
        return True
