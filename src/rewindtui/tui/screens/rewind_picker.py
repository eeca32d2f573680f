"""Jump to any turn: the session's turns, newest first, each with a one-line preview, its time and
whether its tools changed the agent's state (like Claude Code's /rewind).

Pick a turn to rewind to (the chat screen then shows what would go, in rewind mode, and nothing is
sent until Enter there), to edit and resend, or to fork from. Rewound turns, when the transcript
shows them, are listed too: restore their branch, or fork a session holding it. Fully keyboard
driven (↑/↓, Enter, r/e/f, Esc) and clickable (the list and the buttons). Dismisses with a
:class:`PickerChoice`, or None.
"""

from __future__ import annotations

from dataclasses import dataclass

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.containers import Horizontal, Vertical
from textual.screen import ModalScreen
from textual.widgets import Button, OptionList, Static
from textual.widgets.option_list import Option

from rewindtui.base.textsafe import sanitize_line
from rewindtui.chat import Action, Permissions
from rewindtui.model import Item
from rewindtui.output.export import local_time
from rewindtui.output.turn_list import TurnEntry, describe_tools
from rewindtui.tui import interaction


@dataclass(frozen=True)
class PickerChoice:
    action: str  # rewind | edit | fork | restore | fork_branch
    item: Item  # the turn's first item


#: button id -> (label, action on a current turn, action on a rewound turn)
_BUTTONS = {
    "picker-rewind": ("Rewind to…", "rewind", "restore"),
    "picker-edit": ("Edit", "edit", None),
    "picker-fork": ("Fork", "fork", "fork_branch"),
}

#: the picker's actions as the permissions gate names them
_GATE = {
    "rewind": Action.REWIND,
    "edit": Action.EDIT,
    "fork": Action.FORK,
    "fork_branch": Action.FORK,
    "restore": Action.RESTORE,
}


def entry_label(entry: TurnEntry, width: int = 72) -> Text:
    """Two lines: ``#3  2026-11-22 14:03  what the user said`` and the tools line."""
    text = Text(no_wrap=True, overflow="ellipsis")
    if entry.rewound is not None:
        text.append("⟲ rewound ", style="bold yellow")
        text.append(local_time(entry.rewound.at), style="dim")
        text.append("  ")
        text.append(entry.preview, style="dim")
    else:
        text.append(f"#{entry.number:<3}" if entry.number else "#?  ", style="bold")  # ?: older turns loading
        text.append(f" {entry.time}  " if entry.time else "  ", style="dim")
        text.append(entry.preview)
    detail = describe_tools(entry)
    style = "yellow" if entry.state_changed else "dim"
    text.append("\n      ")
    text.append(detail, style=style)
    if entry.rewound is not None:
        text.append("  · not in the conversation: restore its branch or fork it", style="dim italic")
    return text


class RewindPicker(ModalScreen[PickerChoice | None]):
    CSS_PATH = "rewind_picker.tcss"
    BINDINGS = interaction.bindings("picker")

    def __init__(self, entries: list[TurnEntry], permissions: Permissions | None = None) -> None:
        super().__init__()
        self.entries = entries
        #: the chat's permissions gate, read when the picker opened (it is modal: nothing runs meanwhile)
        self.permissions = permissions or Permissions()

    def compose(self) -> ComposeResult:
        with Vertical(id="picker-box"):
            yield Static(Text("Jump to a turn", style="bold"), id="picker-title")
            yield Static(
                Text(
                    "Newest first; #N is turn N, as /rewind N, /edit N and /fork N take it. "
                    "Enter: rewind to it (what would go is shown first) · e edit · f fork · Esc close"
                ),
                id="picker-help",
            )
            options = [Option(entry_label(e), id=str(i)) for i, e in enumerate(self.entries)]
            yield OptionList(*options, id="picker-list")
            with Horizontal(id="picker-buttons"):
                for button_id, (label, _, _) in _BUTTONS.items():
                    yield Button(label, id=button_id, tooltip=self._button_tip(button_id))
                yield Button("Close", id="picker-close", variant="primary", tooltip="Close the list (Esc)")

    def on_mount(self) -> None:
        listing = self.query_one(OptionList)
        if self.entries:
            listing.highlighted = 0
        listing.focus()
        self._update_buttons()

    # -- state ---------------------------------------------------------------------------------
    @property
    def highlighted(self) -> TurnEntry | None:
        index = self.query_one(OptionList).highlighted
        return self.entries[index] if index is not None and 0 <= index < len(self.entries) else None

    def _action_for(self, name: str, entry: TurnEntry) -> str | None:
        """The action key ``name`` (rewind / edit / fork) means on ``entry``."""
        for _, current, rewound in _BUTTONS.values():
            if current == name:
                return rewound if entry.rewound is not None else current
        return None

    def why_not(self, action: str, entry: TurnEntry) -> str:
        """The gate's reason for ``action``, then what this entry itself lacks for it."""
        reason = self.permissions.why_not(_GATE[action]) if action in _GATE else ""
        if reason:
            return reason
        if action == "edit" and not entry.opens_with_user:
            return "this turn has no message of yours to edit"
        if action == "fork_branch" and (entry.rewound is None or not entry.rewound.fork_before):
            return "this server cannot fork from a rewound turn"
        if action == "restore" and (entry.rewound is None or not entry.rewound.by):
            return "this server keeps rewound turns but cannot bring them back"
        return ""

    def _button_tip(self, button_id: str) -> str:
        return {
            "picker-rewind": "Rewind to before the highlighted turn (r / Enter); on a rewound turn: restore its branch",
            "picker-edit": "Edit the highlighted turn's message and resend it (e)",
            "picker-fork": "Fork a new session from the highlighted turn (f)",
        }[button_id]

    def _update_buttons(self) -> None:
        entry = self.highlighted
        for button_id, (label, current, rewound) in _BUTTONS.items():
            button = self.query_one(f"#{button_id}", Button)
            action = (rewound if entry is not None and entry.rewound is not None else current) if entry else None
            if entry is not None and entry.rewound is not None and rewound == "restore":
                button.label = "Restore branch"
            else:
                button.label = label
            reason = self.why_not(action, entry) if action and entry else "no turn highlighted"
            button.disabled = bool(reason)
            button.tooltip = reason or self._button_tip(button_id)

    # -- choosing ------------------------------------------------------------------------------
    @on(OptionList.OptionHighlighted)
    def _highlighted(self) -> None:
        self._update_buttons()

    @on(OptionList.OptionSelected)
    def _selected(self, event: OptionList.OptionSelected) -> None:
        event.stop()
        self.action_choose("rewind")

    @on(Button.Pressed)
    def _pressed(self, event: Button.Pressed) -> None:
        event.stop()
        button_id = event.button.id or ""
        if button_id == "picker-close":
            self.dismiss(None)
        elif button_id in _BUTTONS:
            self.action_choose(_BUTTONS[button_id][1])

    def action_choose(self, name: str) -> None:
        entry = self.highlighted
        if entry is None:
            self.app.bell()
            return
        action = self._action_for(name, entry)
        if action is None:
            self.notify("A rewound turn cannot be edited; restore its branch first.", title="Turns", severity="warning")
            return
        reason = self.why_not(action, entry)
        if reason:
            self.notify(sanitize_line(reason), title="Turns", severity="warning")
            return
        self.dismiss(PickerChoice(action, entry.item))

    def action_close(self) -> None:
        self.dismiss(None)
