"""Shown when the server can't be reached: which part did not answer (the kagent controller, the
agent on it, the URL, the embedded server), why, how to fix it, and -- when the app can be
pointed elsewhere -- the address in fields to correct in place and reconnect, no restart."""

from __future__ import annotations

from collections.abc import Callable

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.screen import Screen
from textual.widgets import Button, Input, Label, Static

from rewindtui.base.textsafe import sanitize, sanitize_line
from rewindtui.config.connection import AGENT, CONTROLLER, EMBEDDED, KAGENT_API, REFUSED, URL, Target

#: the part at fault when the agent answered but has no session of the id asked for (--session)
SESSION = "session"
#: the title for each part that did not answer
TITLES = {
    SESSION: "The agent has no such session for you",
    CONTROLLER: "The kagent controller did not answer",
    AGENT: "The agent is not on the kagent controller",
    URL: "No A2A agent answered at this URL",
    REFUSED: "The agent refused the connection",
    EMBEDDED: "The embedded server did not start",
    KAGENT_API: "This kagent controller speaks no API rewindtui knows",
}
DEFAULT_TITLE = "Can't reach the agent"

#: ``check(target)``: why a corrected target cannot be used ("": it can)
Check = Callable[[Target], str]


class ConnectErrorScreen(Screen["bool | Target"]):
    """Dismisses with False to quit, True to retry as before, or the corrected :class:`Target`."""

    CSS_PATH = "connect_error.tcss"
    BINDINGS = [
        Binding(
            "r,enter", "retry", "Reconnect", id="connect.retry", tooltip="Connect again (with the address as corrected)"
        ),
        Binding("q,escape", "quit_app", "Quit", id="connect.quit", tooltip="Quit rewindtui"),
    ]

    def __init__(
        self,
        error: str,
        hint: str,
        *,
        part: str = "",
        target: Target | None = None,
        check: Check | None = None,
        leave: str = "Quit",
    ) -> None:
        super().__init__()
        self.leave = leave  # what the other button does: "Quit" the app, or "Close tab" (a tab of several)
        self.error = error
        self.hint = hint
        self.part = part
        # fields to correct the address: only when the app can be pointed elsewhere
        self.target = target if target is not None and target.kind != "embedded" and check is not None else None
        self.check = check

    def compose(self) -> ComposeResult:
        with Vertical(id="connect-box"):
            yield Static(Text(TITLES.get(self.part, DEFAULT_TITLE), style="bold"), id="connect-title")
            yield Static(Text(sanitize(self.error)), id="connect-error")
            yield Static(Text(sanitize(self.hint)), id="connect-hint")
            target = self.target
            if target is not None:
                if target.kind == "kagent":
                    yield from self._field("kagent controller", "connect-kagent", target.kagent, "http://HOST:8083")
                    yield from self._field("agent", "connect-agent", target.agent, "NAMESPACE/NAME")
                else:
                    yield from self._field("agent URL", "connect-url", target.url, "http://HOST:PORT/…")
                yield Static("", id="connect-invalid")
            with Horizontal(id="connect-buttons"):
                yield Button(
                    "Reconnect",
                    id="retry",
                    variant="primary",
                    tooltip="Connect again, with the address as corrected (Enter)",
                )
                yield Button(self.leave, id="quit", tooltip=f"{self.leave} (Esc)")

    def _field(self, label: str, field_id: str, value: str, placeholder: str) -> ComposeResult:
        with Horizontal(classes="connect-field"):
            yield Label(label, classes="connect-label")
            yield Input(sanitize_line(value), placeholder=placeholder, id=field_id, compact=True)

    def on_mount(self) -> None:
        # the field of the part that did not answer takes the cursor; else the Reconnect button
        wanted = {
            CONTROLLER: "#connect-kagent",
            KAGENT_API: "#connect-kagent",
            AGENT: "#connect-agent",
            URL: "#connect-url",
        }.get(self.part, "")
        fields = self.query(wanted) if wanted else None
        if fields:
            fields.first(Input).focus()
        else:
            self.query_one("#retry", Button).focus()

    @property
    def corrected(self) -> Target | None:
        """The address as it stands in the fields (None: there are no fields)."""
        if self.target is None:
            return None
        if self.target.kind == "kagent":
            return Target(
                kagent=self.query_one("#connect-kagent", Input).value.strip(),
                agent=self.query_one("#connect-agent", Input).value.strip(),
            )
        return Target(url=self.query_one("#connect-url", Input).value.strip())

    def on_button_pressed(self, event: Button.Pressed) -> None:
        event.stop()
        if event.button.id == "retry":
            self.action_retry()
        else:
            self.dismiss(False)

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        self.action_retry()

    def action_retry(self) -> None:
        target = self.corrected
        if target is None or target == self.target:
            self.dismiss(True)
            return
        assert self.check is not None
        problem = self.check(target)
        if problem:
            invalid = self.query_one("#connect-invalid", Static)
            invalid.update(Text(sanitize_line(problem)))
            invalid.add_class("-shown")
            return
        self.dismiss(target)

    def action_quit_app(self) -> None:
        self.dismiss(False)
