"""What to do with the messages queued when the conversation is about to change under them (a
rewind): send them after it, keep them queued, or put them into the composer. Nothing queued is
lost whichever is chosen; Esc changes nothing (no rewind, the queue as it was). Dismisses with
"send", "keep", "draft", or None (Esc)."""

from __future__ import annotations

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.screen import ModalScreen
from textual.widgets import Button, Static

from rewindtui.base.textsafe import sanitize

#: (the value dismissed with, its key, the button's label)
CHOICES = (
    ("send", "s", "Send them after it"),
    ("keep", "k", "Keep them queued"),
    ("draft", "c", "Into the composer"),
)


class QueueChoiceScreen(ModalScreen[str | None]):
    CSS_PATH = "confirm.tcss"
    BINDINGS = [
        Binding("escape", "choose('')", "Back", id="queue_choice.back", tooltip="Nothing changes"),
        *(Binding(key, f"choose('{value}')", label, id=f"queue_choice.{value}") for value, key, label in CHOICES),
    ]

    def __init__(self, title: str, text: str) -> None:
        super().__init__()
        self.title_text = title
        self.text = text

    def compose(self) -> ComposeResult:
        with Vertical(id="confirm-box"):
            yield Static(Text(sanitize(self.title_text), style="bold"), id="confirm-title")
            yield Static(Text(sanitize(self.text)), id="confirm-text")
            with Horizontal(id="confirm-buttons"):
                for value, key, label in CHOICES:
                    yield Button(label, id=f"choice-{value}", tooltip=f"{label} ({key})")

    def on_mount(self) -> None:
        self.query_one("#choice-send", Button).focus()

    def on_button_pressed(self, event: Button.Pressed) -> None:
        event.stop()
        self.dismiss((event.button.id or "").removeprefix("choice-") or None)

    def action_choose(self, value: str) -> None:
        self.dismiss(value or None)
