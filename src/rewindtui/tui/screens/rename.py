"""Rename a session: one line of text. Dismisses with the new name, or None (nothing changes)."""

from __future__ import annotations

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.screen import ModalScreen
from textual.widgets import Button, Input, Static

from rewindtui.base.textsafe import sanitize_line

NAME_LIMIT = 200


class RenameScreen(ModalScreen[str | None]):
    CSS_PATH = "rename.tcss"
    BINDINGS = [Binding("escape", "cancel", "Cancel", id="rename.cancel", tooltip="Keep the name; nothing changes")]

    def __init__(self, name: str) -> None:
        super().__init__()
        self.current = sanitize_line(name)

    def compose(self) -> ComposeResult:
        with Vertical(id="rename-box"):
            yield Static(Text("Rename session", style="bold"))
            yield Input(self.current, placeholder="A name for this session", max_length=NAME_LIMIT, id="rename-input")
            with Horizontal(id="rename-buttons"):
                yield Button("Rename", id="rename-ok", variant="primary", tooltip="Rename (Enter)")
                yield Button("Cancel", id="rename-cancel", tooltip="Keep the name (Esc)")

    def on_mount(self) -> None:
        box = self.query_one(Input)
        box.focus()
        box.select_all()  # typing replaces the old name; an arrow key keeps it to edit

    def _done(self) -> None:
        name = " ".join(self.query_one(Input).value.split())
        if not name:
            self.notify("A name cannot be empty.", severity="warning")
            return
        self.dismiss(None if name == self.current else name)

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        self._done()

    def on_button_pressed(self, event: Button.Pressed) -> None:
        event.stop()
        if event.button.id == "rename-ok":
            self._done()
        else:
            self.dismiss(None)

    def action_cancel(self) -> None:
        self.dismiss(None)
