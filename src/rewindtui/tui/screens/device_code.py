"""The OAuth2 device-code sign-in, in the app: the agent wants a sign-in the user completes in a
browser (possibly on another device). Shows the address to open and the code to enter, then
waits while the connection polls the token endpoint. Esc (or the button) cancels the sign-in:
the screen dismisses with False and the app stops connecting. The app dismisses it (True) once
the connection has its token (or has failed)."""

from __future__ import annotations

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.screen import ModalScreen
from textual.widgets import Button, Static

from rewindtui.base.textsafe import sanitize_line


class DeviceCodeScreen(ModalScreen[bool]):
    CSS_PATH = "device_code.tcss"
    BINDINGS = [
        Binding(
            "escape",
            "cancel",
            "Cancel sign-in",
            id="device.cancel",
            tooltip="Stop signing in (the app does not connect)",
        )
    ]

    def __init__(self, uri: str, code: str, complete: str | None = None, *, agent: str = "") -> None:
        super().__init__()
        # from the authorization server: shown literally, one line each
        self.uri = sanitize_line(uri)
        self.code = sanitize_line(code)
        self.complete = sanitize_line(complete) if complete else None
        self.agent = sanitize_line(agent)

    def compose(self) -> ComposeResult:
        with Vertical(id="device-box"):
            title = f"Sign in to {self.agent}" if self.agent else "Sign in to the agent"
            yield Static(Text(title, style="bold"), id="device-title")
            yield Static(Text(f"Open {self.uri} in a browser and enter the code:"), id="device-open")
            yield Static(Text(self.code), id="device-code")
            if self.complete:
                yield Static(Text(f"(or open {self.complete})", style="dim"), id="device-complete")
            yield Static(Text("Waiting for the sign-in to finish… (Esc cancels)"), id="device-wait")
            with Horizontal(id="device-buttons"):
                yield Button("Cancel sign-in", id="device-cancel", variant="warning", tooltip="Stop signing in (Esc)")

    def on_button_pressed(self, event: Button.Pressed) -> None:
        event.stop()
        self.dismiss(False)

    def action_cancel(self) -> None:
        self.dismiss(False)
