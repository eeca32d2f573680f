"""Shown when the server can't be reached: what failed, how to fix it, and Retry."""

from __future__ import annotations

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.screen import Screen
from textual.widgets import Button, Static

from rewindtui.textsafe import sanitize


class ConnectErrorScreen(Screen[bool]):
    """Dismisses with True to retry, False to quit."""

    CSS_PATH = "connect_error.tcss"
    BINDINGS = [
        Binding("r,enter", "retry", "Retry", id="connect.retry", tooltip="Try to connect again"),
        Binding("q,escape", "quit_app", "Quit", id="connect.quit", tooltip="Quit rewindtui"),
    ]

    def __init__(self, error: str, hint: str) -> None:
        super().__init__()
        self.error = error
        self.hint = hint

    def compose(self) -> ComposeResult:
        with Vertical(id="connect-box"):
            yield Static(Text("Can't reach the agent", style="bold"), id="connect-title")
            yield Static(Text(sanitize(self.error)), id="connect-error")
            yield Static(Text(sanitize(self.hint)), id="connect-hint")
            with Horizontal(id="connect-buttons"):
                yield Button("Retry", id="retry", variant="primary", tooltip="Try to connect again (r)")
                yield Button("Quit", id="quit", tooltip="Quit (q)")

    def on_button_pressed(self, event: Button.Pressed) -> None:
        self.dismiss(event.button.id == "retry")

    def action_retry(self) -> None:
        self.dismiss(True)

    def action_quit_app(self) -> None:
        self.dismiss(False)
