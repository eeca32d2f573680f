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
from rewindtui.client.a2a_client import ClientError
from rewindtui.client.errors import user_message
from rewindtui.model import Change, Item
from rewindtui.output.turn_list import turn_entries
from rewindtui.tui import interaction
from rewindtui.tui.host import ScreenHost
from rewindtui.tui.rewind_choice import RewindOutcome, plural
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

    # -- redo --------------------------------------------------------------------------------
    def why_not_redo(self) -> str:
        chat = self.chat
        if chat is None:
            return "Not connected."
        return self.host.why_not(Action.REDO)

    def redo(self, rewind_task_id: str | None = None, *, title: str = "Redo", up_to: str | None = None) -> None:
        """Undo a rewind on the server (None: the last one); nothing is sent when the server does
        not offer redo (the reason is shown). ``up_to``: then rewind again before this invocation
        (the turn after the one restored to), so the branch comes back only up to there."""
        reason = self.why_not_redo()
        if reason:
            self._notify(reason, title=f"{title} unavailable", severity="warning")
            return
        host = self.host
        if host.rewind_mode:
            host.leave_mode()
        host.outcome = None
        host.activity = "redoing…"
        host.refresh_status()
        host.rewind_worker = host.run_worker(
            partial(self._redo, rewind_task_id, title, up_to), group="rewind", exit_on_error=False
        )

    async def _redo(self, rewind_task_id: str | None, title: str, up_to: str | None = None) -> None:
        chat = self.chat
        assert chat is not None
        before = chat.conversation.turn_invocations()
        try:
            await chat.redo(rewind_task_id)
            if up_to is not None and up_to in chat.conversation.turn_invocations():
                try:
                    await chat.rewind(up_to)  # the rest of the branch stays rewound: nothing is lost
                except ClientError as exc:
                    self._notify(
                        "The whole branch came back, but the turns after the one chosen could not be rewound again: "
                        f"{user_message(exc)}",
                        title=title,
                        severity="warning",
                        timeout=8,
                    )
        except ClientError as exc:
            self._notify(user_message(exc), title=f"{title} failed", severity="error", timeout=8)
            return
        finally:
            self.host.activity = None
            self.host.refresh_status()
        after = chat.conversation.turn_invocations()
        back = len(set(after) - set(before))
        gone = len(set(before) - set(after))
        text = f"{plural(back, 'turn')} back, with the agent's state as it was"
        if gone:
            text += f"; {plural(gone, 'turn')} went to the rewound turns (F4 shows them)"
        self._notify(text + ".", title=title)

    def undo_hint(self, outcome: RewindOutcome) -> str:
        """``ctrl+z undoes it`` when the core's one undo now names this session's last change."""
        chat = self.chat
        if chat is None or outcome.session_id != chat.session_id or not chat.undo_label():
            return ""
        return f"{self._undo_keys()} undoes it"

    def _keys(self, command_id: str) -> str:
        return interaction.keys_of(command_id, self.host.keymap)

    def _undo_keys(self) -> str:
        return interaction.keys_of("chat.undo_rewind", self.host.keymap)

    def undo_label(self) -> str:
        """What ctrl+z undoes now, for the status line ("" : the composer's own text undo). The
        core reads it per session from the server: it survives restarts, never crosses sessions."""
        chat = self.chat
        return (chat.undo_label() or "") if chat is not None else ""

    def why_not_undo(self) -> str:
        chat = self.chat
        if chat is None:
            return "not connected."
        return self.host.why_not(Action.UNDO) or ("" if chat.undo_label() else "nothing to undo in this session.")

    def can_undo(self) -> bool:
        """ctrl+z undoes what the status line names, also with text in the composer (composer undo
        never hides it); when it names nothing, the key is the composer's text undo."""
        chat = self.chat
        return chat is not None and bool(chat.undo_label()) and not chat.why_not(Action.UNDO) and not self.host.busy

    def undo(self) -> None:
        if not self.can_undo():
            return
        host = self.host
        if host.rewind_mode:
            host.leave_mode()
        host.outcome = None
        host.activity = "undoing…"
        host.refresh_status()
        host.rewind_worker = host.run_worker(self._undo, group="rewind", exit_on_error=False)

    async def _undo(self) -> None:
        chat = self.chat
        assert chat is not None
        try:
            outcome = await chat.undo()
        except ClientError as exc:
            self._notify(user_message(exc), title="Undo failed", severity="error", timeout=8)
            return
        finally:
            self.host.activity = None
            self.host.refresh_status()
        hint = f" {self._undo_keys()}: {outcome.undo_label}." if outcome.undo_label else ""
        self._notify(outcome.said + hint, title="Undo")

    def disarm_undo(self) -> None:
        """Nothing to do: the core ends an undo when a turn is sent."""

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
                f"[⟲ Restore] on a turn (or {self._keys('chat.rewind_mode')} to it, then "
                f"{self._keys('transcript.confirm')}) "
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
            if item.rewound is not None and item.rewound.by:
                self.redo(item.rewound.by, title="Restore branch", up_to=self._next_in_branch(item))
            else:
                self._notify(
                    "This server keeps this turn but cannot bring it back.", title="Restore branch", severity="warning"
                )
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
        reason = self.host.why_not(Action.FORK)
        if reason:
            self._notify(reason, title="Fork unavailable", severity="warning")
            return
        host = self.host
        host.activity = "forking…"
        host.refresh_status()
        host.rewind_worker = host.run_worker(partial(self._fork, mark.fork_before), group="rewind", exit_on_error=False)

    async def _fork(self, invocation_id: str) -> None:
        chat = self.chat
        assert chat is not None
        original = chat.session_id or ""
        try:
            session = await chat.fork_branch(invocation_id)
        except ClientError as exc:
            self._notify(user_message(exc), title="Fork failed", severity="error", timeout=8)
            return
        finally:
            self.host.activity = None
            self.host.refresh_status()
        self.host.show_conversation()
        self._notify(
            f"Forked the rewound branch into “{session.name or session.id}”; the original ({original[:8]}) is in the "
            "sessions panel (F2).",
            title="Fork",
        )
