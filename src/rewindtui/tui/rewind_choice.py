"""Choosing a rewind point: the preview (the selected turn and every turn after it dimmed, a
banner saying what would go), leaving it, and the rewind itself -- which happens only on Enter
(or a click) on the preview the user is looking at. The toast says exactly how much went and
what undoes it (the app's operations runner, :mod:`rewindtui.tui.operations`)."""

from __future__ import annotations

from collections.abc import Callable
from functools import partial

from rewindtui.chat import Action
from rewindtui.model import Item
from rewindtui.model.effects import effect_lines, effects
from rewindtui.tui import interaction
from rewindtui.tui.host import ScreenHost, sentence
from rewindtui.tui.widgets.mode_banner import ModeBanner
from rewindtui.tui.widgets.transcript import Transcript


class RewindChoice:
    def __init__(
        self,
        host: ScreenHost,
        *,
        why_not_preview: Callable[[], str],
        after_layout: Callable[[Callable[[], None]], object],
        left_by_key: Callable[[], None],
        branch_act: Callable[[str, Item], None],
        with_queue: Callable[[Callable[[Callable[[object], None] | None], None]], None] = lambda rewind: rewind(None),
    ) -> None:
        self.host = host
        self.branch_act = branch_act  # restore / fork_branch a rewound turn (the screen's branches)
        self.with_queue = with_queue  # asks what to do with queued messages, then rewinds
        self.why_not_preview = why_not_preview
        self.after_layout = after_layout
        self.left_by_key = left_by_key  # the preview was left by a key of its own (Esc's burst rule)
        #: the preview is shown (the screen's ``rewind_mode``)
        self.active = False

    # -- keys and clicks while choosing ------------------------------------------------------------
    def preview(self, index: int) -> None:
        """Show the preview on the turn holding item ``index`` (or move it there)."""
        if self.host.rewind_mode:
            self.host.transcript.select_turn(index)
        else:
            self.enter(index)

    def step(self, step: int) -> None:
        """alt+↑: the preview on the last turn, or the turn before; alt+↓: the turn after."""
        transcript = self.host.transcript
        if self.host.rewind_mode:
            transcript.focus()
            transcript.action_cursor(step)
        elif step < 0:
            self.enter()

    def handle(self, event: Transcript.Confirm | ModeBanner.Confirm | Transcript.Leave | Transcript.TypeAhead) -> None:
        """Enter (or the banner's button) on the preview; Esc in the transcript; a printable key there."""
        if isinstance(event, Transcript.Leave):
            self.transcript_left()
        elif isinstance(event, Transcript.TypeAhead):
            self.type_ahead(event.text)
        else:
            self.confirm()

    def moved(self) -> None:
        if self.host.rewind_mode:
            self.show_banner()

    def transcript_left(self) -> None:
        """Esc in the transcript: out of the preview, back to the composer."""
        if self.host.rewind_mode:
            self.left_by_key()
        self.leave()

    def type_ahead(self, text: str) -> None:
        """A printable key while choosing: writing, not choosing -- it lands in the composer."""
        host = self.host
        if host.rewind_mode:
            self.leave()
        host.composer.focus()
        host.composer.insert(text)

    # -- the preview -------------------------------------------------------------------------------

    def enter(self, index: int | None = None) -> bool:
        """Show the preview on the turn holding item ``index`` (default: the last turn)."""
        host = self.host
        reason = self.why_not_preview()
        if reason:
            host.notify(reason, title="Rewind", severity="warning")
            return False
        transcript = host.transcript
        selected = transcript.select_last_turn() if index is None else transcript.select_turn(index)
        if not selected:
            chat = host.chat
            items = chat.conversation.items if chat is not None else []
            if not items or chat is None:
                host.notify("Nothing to rewind yet.", title="Rewind")
            else:
                # messages, but none the server can rewind to: say why (e.g. no invocation ids)
                reason = chat.why_not_rewind_to(items[-1] if index is None else items[index])
                host.notify(
                    sentence(reason or "Nothing to rewind here."), title="Rewind unavailable", severity="warning"
                )
            return False
        self.active = True
        transcript.preview = True
        transcript.focus()
        self.show_banner()
        host.refresh_status()
        # the banner takes room from the transcript: bring the turn into view again after layout
        self.after_layout(transcript.scroll_to_turn)
        return True

    def show_banner(self) -> None:
        host = self.host
        transcript = host.transcript
        item = transcript.selected()
        chat = host.chat
        if item is None or chat is None:
            self.leave()
            return
        index = transcript.cursor or 0
        if item.rewound is not None:  # a rewound turn shown in place (F4): a branch, not a rewind point
            transcript.rewind_forks = False
            self.show_rewound_banner(item)
            return
        turns = chat.conversation.turn_invocations()
        number = turns.index(item.rewind_target) + 1 if item.rewind_target in turns else 0
        preview = chat.rewind_preview(number) if number else ""  # the server's kind of rewind, in words
        transcript.rewind_forks = bool(preview)
        host.banner.show_rewind(
            transcript.turns_from(index),
            transcript.messages_from(index),
            chat.conversation.user_text_of(item.rewind_target or "") or item.text,
            blocked=host.why_not(Action.REWIND),
            preview=preview,
            effects=effect_lines(effects(chat.conversation.items[index:])),  # what it cannot undo
        )

    def show_rewound_banner(self, item: Item) -> None:
        """What a rewound turn is and the keys that act on it -- or why they cannot now (the
        chat's gate for RESTORE and FORK, and what the server offers for this branch)."""
        host = self.host
        keymap = host.keymap
        mark = item.rewound
        assert mark is not None
        if not mark.by:
            restore = "this server keeps it but cannot bring it back"
        elif reason := host.why_not(Action.RESTORE):
            restore = f"no restore now ({reason.rstrip('.')})"
        else:
            enter = interaction.keys_of("transcript.confirm", keymap)
            act = interaction.keys_of("transcript.rewound_act", keymap)
            restore = f"{enter} or {act} restores it (its branch comes back up to this turn)"
        if not mark.fork_before:
            fork = "this server cannot fork from it"
        elif reason := host.why_not(Action.FORK):
            fork = f"no fork now ({reason.rstrip('.')})"
        else:
            fork = f"{interaction.keys_of('transcript.fork_branch', keymap)} forks it into a new session"
        host.banner.show_rewound(
            item.text,  # the turn's first item (its user message): the selection starts there
            restore=restore,
            fork=fork,
            leave=interaction.keys_of("transcript.leave", keymap) or "Esc",
        )

    def leave(self, *, focus: bool = True) -> None:
        host = self.host
        was = self.active
        self.active = False
        transcript = host.transcript
        transcript.preview = False
        transcript.cursor = None
        if host.banner.kind == "rewind":
            host.banner.hide()
        if was:
            transcript.follow_bottom()
        if focus:
            host.composer.focus()
        host.refresh_status()

    def confirm(self) -> None:
        """Rewind to before the selected turn (what the preview shows), then leave the preview."""
        host = self.host
        if not host.rewind_mode:
            return
        item = host.transcript.selected()
        if item is not None and item.rewound is not None:
            # a rewound turn: Enter does what its banner says -- restore its branch (the same as
            # alt+Enter, which many terminals send as a plain Enter)
            self.branch_act("restore", item)
            return
        reason = host.why_not(Action.REWIND)
        if item is None or item.rewind_target is None or reason:
            host.notify(reason or "No turn selected.", title="Rewind", severity="warning")
            return
        self.leave()  # first: keys typed from now on go to the composer
        chat = host.chat
        assert chat is not None
        target = item.rewind_target

        def rewind(then: Callable[[object], None] | None) -> None:
            # the runner says "rewinding…" before the optimistic cut is drawn, and the core's
            # outcome after: exactly how much went (never a silent multi-turn loss) and what undoes it
            host.ops.run(Action.REWIND, partial(chat.rewind, target), title="Rewind", doing="rewinding…", done=then)

        self.with_queue(rewind)  # messages queued: what to do with them is asked first
