"""A small question before something the user may not mean: quitting during a reply, leaving a
session whose reply is still coming in. Dismisses with True (go ahead) or False (stay); with a
third choice (``also``, key k), None when that is chosen."""

from __future__ import annotations

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.screen import ModalScreen
from textual.widgets import Button, Static

from rewindtui.base.textsafe import sanitize


class ConfirmScreen(ModalScreen[bool]):
    CSS_PATH = "confirm.tcss"
    BINDINGS = [
        Binding("escape,n", "stay", "Stay", id="confirm.stay", tooltip="Stay; nothing changes"),
        Binding("y", "go", "Go ahead", id="confirm.go", tooltip="Go ahead"),
        Binding("k", "also", "The third choice", id="confirm.also", tooltip="The third choice, where there is one"),
    ]

    def __init__(
        self, title: str, text: str, *, go: str, stay: str = "Stay", purpose: str = "", also: str = ""
    ) -> None:
        super().__init__()
        self.title_text = title
        self.text = text
        self.go_label = go
        self.stay_label = stay
        self.also_label = also
        self.purpose = purpose  # what is being asked ("quit", "switch"), for whoever asks again

    def compose(self) -> ComposeResult:
        with Vertical(id="confirm-box"):
            yield Static(Text(sanitize(self.title_text), style="bold"), id="confirm-title")
            yield Static(Text(sanitize(self.text)), id="confirm-text")
            with Horizontal(id="confirm-buttons"):
                yield Button(self.go_label, id="confirm-go", variant="warning", tooltip="Go ahead (y)")
                if self.also_label:
                    yield Button(self.also_label, id="confirm-also", tooltip=f"{self.also_label} (k)")
                yield Button(self.stay_label, id="confirm-stay", variant="primary", tooltip="Stay (Esc / n)")

    def on_mount(self) -> None:
        self.query_one("#confirm-stay", Button).focus()

    def on_button_pressed(self, event: Button.Pressed) -> None:
        event.stop()
        self.dismiss(None if event.button.id == "confirm-also" else event.button.id == "confirm-go")

    def action_go(self) -> None:
        self.dismiss(True)

    def action_stay(self) -> None:
        self.dismiss(False)

    def action_also(self) -> None:
        if self.also_label:
            self.dismiss(None)
