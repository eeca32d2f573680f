"""The chat screen's branch features: redo and the one undo, the rewound turns shown in place
(restore a branch, fork one), and the jump-to-turn picker.

The screen keeps the bindings and palette entries and calls in here; this works over the screen's
small host (:class:`~rewindtui.tui.host.ScreenHost`) and the callables it is given. Every server
operation runs through the host's :class:`~rewindtui.chat.Chat` (the same code as the headless
commands), in the host's worker groups: a redo is a rewind in flight like any other (one at a time,
the composer's draft kept). What may run is the chat's permissions gate (``host.why_not``).
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from typing import Any

from rewindtui.chat import Action, Chat
from rewindtui.chat.outcome import plural
from rewindtui.client.a2a_client import ClientError
from rewindtui.client.errors import user_message
from rewindtui.model import Change, Item
from rewindtui.output.turn_list import turn_entries
from rewindtui.tui import interaction
from rewindtui.tui.host import ScreenHost
from rewindtui.tui.screens.rewind_picker import PickerChoice, RewindPicker


class Branches:
    def __init__(
        self,
        host: ScreenHost,
        *,
        why_not_preview: Callable[[], str],
        preview: Callable[[int], object],
        act_on_turn: Callable[[str, Item], None],
        ask: Callable[[Any, Callable[[Any], None]], object],
        turn_ended: Callable[[], None],
    ) -> None:
        self.host = host
        self.why_not_preview = why_not_preview  # why no rewind point can be chosen now
        self.preview = preview  # show the rewind preview on the turn holding an item
        self.act_on_turn = act_on_turn  # edit / fork a turn (the screen's turn actions)
        self.ask = ask  # push a modal screen and get its answer
        self.turn_ended = turn_ended  # after a turn, rewind or reload (the sessions panel re-reads)
        #: the user asked to see rewound turns (kept across rewinds, turns and sessions)
        self.showing = False

    @property
    def chat(self) -> Chat | None:
        return self.host.chat

    def _notify(self, text: str, *, title: str, severity: str = "information", timeout: float = 6) -> None:
        # literal text: server answers and our own "[button]" names are not markup
        self.host.notify(text, title=title, severity=severity, timeout=timeout, markup=False)

    # -- undo and redo (the app's operations runner runs them: gate, words, the core's outcome) ----
    def _leave_preview(self) -> None:
        if self.host.rewind_mode:
            self.host.leave_mode()

    def redo(self) -> None:
        """ctrl+r, /redo: do again what the last undo undid (the same rewind, or restore), on the
        server; refused in one sentence when another client changed the session since."""
        chat = self.chat
        if chat is None:
            self._notify("Not connected.", title="Redo unavailable", severity="warning")
            return
        self.host.ops.run(
            Action.REAPPLY,
            chat.reapply,
            title="Redo",
            doing="redoing…",
            started=self._leave_preview,
            exit_on_error=False,
        )

    def restore(self, item: Item) -> None:
        """Bring a rewound branch back up to ``item`` (``Chat.restore``); ctrl+z undoes it."""
        chat = self.chat
        mark = item.rewound
        if chat is None or mark is None or not mark.by:
            self._notify(
                "This server keeps this turn but cannot bring it back.", title="Restore branch", severity="warning"
            )
            return
        self.host.ops.run(
            Action.RESTORE,
            partial(chat.restore, mark.by, self._next_in_branch(item)),
            title="Restore branch",
            doing="restoring…",
            started=self._leave_preview,
            exit_on_error=False,
        )

    def _keys(self, command_id: str) -> str:
        return interaction.keys_of(command_id, self.host.keymap)

    def _undo_keys(self) -> str:
        return interaction.keys_of("chat.undo_rewind", self.host.keymap)

    def undo_label(self) -> str:
        """What ctrl+z undoes now, for the status line ("" : the composer's own text undo). The
        core reads it per session from the server: it survives restarts, never crosses sessions."""
        chat = self.chat
        return (chat.undo_label() or "") if chat is not None else ""

    def redo_label(self) -> str:
        """What ctrl+r does again now ("" : nothing)."""
        chat = self.chat
        return (chat.redo_label() or "") if chat is not None else ""

    def why_not_undo(self) -> str:
        chat = self.chat
        if chat is None:
            return "not connected."
        return self.host.why_not(Action.UNDO) or ("" if chat.undo_label() else "nothing to undo in this session.")

    def can_undo(self) -> bool:
        """ctrl+z undoes what the status line names, also with text in the composer (composer undo
        never hides it); when it names nothing, the key is the composer's text undo."""
        chat = self.chat
        return chat is not None and bool(chat.undo_label()) and self.host.ops.allows(Action.UNDO) and not self.host.busy

    def undo(self) -> None:
        chat = self.chat
        if chat is None or not self.can_undo():
            return
        self.host.ops.run(
            Action.UNDO, chat.undo, title="Undo", doing="undoing…", started=self._leave_preview, exit_on_error=False
        )

    # -- rewound turns -----------------------------------------------------------------------
    def toggle_rewound(self) -> None:
        chat = self.chat
        if chat is None:
            return
        if self.showing:
            self.showing = False
            chat.hide_rewound()
            self._notify("Rewound turns hidden.", title="Rewound turns", timeout=3)
            return
        reason = chat.why_not_rewound()
        if reason:
            self._notify(reason, title="Rewound turns", severity="warning")
            return
        self.showing = True
        self.host.run_worker(partial(self._show, announce=True), group="rewound", exclusive=True, exit_on_error=False)

    async def _show(self, *, announce: bool = False) -> None:
        chat = self.chat
        if chat is None or not self.showing or chat.why_not_rewound():
            return
        try:
            shown = await chat.show_rewound()
        except ClientError as exc:
            self._notify(user_message(exc), title="Rewound turns", severity="error")
            return
        if announce and not shown:
            self.showing = False  # nothing to show: F4 next time looks again, it does not hide
        if announce:
            turns = len({i.task_id for i in chat.conversation.items if i.rewound is not None})
            text = (
                f"{plural(turns, 'rewound turn')} shown dimmed, in place ({shown} messages); "
                f"[⟲ Restore] on a turn (or {self._keys('chat.rewind_mode')} to it, "
                f"then {self._keys('transcript.confirm')}) "
                f"brings its branch back up to it, [fork branch] ({self._keys('transcript.fork_branch')}) copies it. "
                f"{self._keys('chat.rewound')} hides them."
                if shown
                else "This session has no rewound turns."
            )
            self._notify(text, title="Rewound turns")

    def changed(self, change: Change) -> None:
        """A conversation change: after a turn, rewind or reload, re-read what was rewound (when
        shown) and the session's title (it is named by its first turn)."""
        if not change.turn_ended:
            return
        if self.showing:
            self.host.run_worker(self._show, group="rewound", exclusive=True, exit_on_error=False)
        self.turn_ended()

    # -- the picker ----------------------------------------------------------------------------
    def open_picker(self) -> None:
        chat = self.chat
        reason = self.why_not_preview()
        if reason or chat is None:
            self._notify(reason or "Not connected.", title="Turns", severity="warning")
            return
        entries = turn_entries(chat.conversation)
        if not entries:
            self._notify("No turns yet.", title="Turns")
            return
        self.ask(RewindPicker(entries, chat.permissions()), self._picked)

    def _picked(self, choice: PickerChoice | None) -> None:
        if choice is None or self.chat is None:
            return
        if choice.action == "restore":
            # as a rewind from the picker: the preview first (the rewound branch, its keys); Enter
            # on it restores -- never a server change straight from the list
            items = self.chat.conversation.items
            index = next((i for i in range(len(items) - 1, -1, -1) if items[i] is choice.item), None)
            if index is not None:
                self.preview(index)
                return
        self.act(choice.action, choice.item)

    def act(self, action: str, item: Item) -> None:
        """An action on a turn, from the picker or a rewound turn's button."""
        if action == "restore":
            self.restore(item)
            return
        if action == "fork_branch":
            self.fork_branch(item)
            return
        items = self.chat.conversation.items if self.chat is not None else []
        index = next((i for i in range(len(items) - 1, -1, -1) if items[i] is item), None)
        if index is None:
            self._notify("That turn is no longer shown.", title="Turns", severity="warning")
        elif action == "rewind":
            self.preview(index)  # what would go is shown; Enter confirms
        else:
            self.act_on_turn(action, item)

    def _next_in_branch(self, item: Item) -> str | None:
        """The invocation of the rewound turn after ``item``'s in its branch (None: it is the last):
        restoring up to ``item`` rewinds again before it."""
        mark = item.rewound
        chat = self.chat
        if mark is None or chat is None:
            return None
        branch: list[str] = []
        for other in chat.conversation.items:
            if (
                other.rewound is not None
                and other.rewound.by == mark.by
                and other.invocation_id
                and other.invocation_id not in branch
            ):
                branch.append(other.invocation_id)
        if item.invocation_id not in branch:
            return None
        later = branch[branch.index(item.invocation_id) + 1 :]
        return later[0] if later else None

    def fork_branch(self, item: Item) -> None:
        chat = self.chat
        mark = item.rewound
        if chat is None or mark is None or not mark.fork_before:
            self._notify("This server cannot fork from a rewound turn.", title="Fork", severity="warning")
            return
        self.host.ops.run(
            Action.FORK,
            partial(chat.fork_branch, mark.fork_before),
            title="Fork",
            doing="forking…",
            done=lambda _: self.host.show_conversation(),
            exit_on_error=False,
        )
