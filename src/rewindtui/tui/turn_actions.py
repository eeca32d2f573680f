"""A turn's actions -- a message's buttons, the preview's chords, /edit and /fork: rewind (shows
the preview first), edit (the draft waits; Esc puts everything back), fork, and a rewound turn's
restore and fork-branch."""

from __future__ import annotations

from collections.abc import Callable
from functools import partial

from rewindtui.chat import Action
from rewindtui.model import Item
from rewindtui.tui.composer_memory import ComposerMemory
from rewindtui.tui.host import ScreenHost


class TurnActions:
    def __init__(
        self,
        host: ScreenHost,
        memory: ComposerMemory,
        *,
        preview: Callable[[int], object],
        branch_act: Callable[[str, Item], None],
        edit_started: Callable[[str, int], None],
        panel_refresh: Callable[[], None],
        bell: Callable[[], None],
    ) -> None:
        self.host = host
        self.memory = memory
        self.preview = preview  # show the preview on an item (or move it there)
        self.branch_act = branch_act
        self.edit_started = edit_started  # (the turn's text, turns set aside)
        self.panel_refresh = panel_refresh
        self.bell = bell

    def handle(self, action: str, item: Item) -> None:
        host = self.host
        if action in ("restore", "fork_branch"):  # a rewound turn's buttons and keys
            self.branch_act(action, item)
            return
        target = item.rewind_target
        if target is None or host.chat is None:
            self.bell()
            return
        chat = host.chat
        if action == "rewind":
            items = chat.conversation.items
            index = next((i for i in range(len(items) - 1, -1, -1) if items[i] is item), None)
            if index is not None:
                self.preview(index)
            return
        reason = host.why_not(Action.EDIT if action == "edit" else Action.FORK)
        if reason:
            host.notify(
                reason, title="Rewind unavailable" if action == "edit" else action.capitalize(), severity="warning"
            )
            return
        if host.rewind_mode:
            host.leave_mode()
        if action == "edit":
            if chat.edit is not None:
                chat.cancel_edit()
            elif self.memory.set_aside():  # the draft waits while the edit uses the composer
                host.notify("Your draft is set aside; it comes back when the edit is sent or cancelled.", timeout=4)
            before = len(chat.conversation.turn_invocations())
            text = chat.begin_edit(target)
            self.edit_started(text, before - len(chat.conversation.turn_invocations()))
        elif action == "fork":
            host.ops.run(
                Action.FORK, partial(chat.fork, target), title="Fork", doing="forking…", done=lambda _: self._forked()
            )

    def _forked(self) -> None:
        """The fork is open: drawn afresh; the sessions panel lists it."""
        self.host.show_conversation()
        if not self.host.sessions.has_class("hidden"):
            self.panel_refresh()
