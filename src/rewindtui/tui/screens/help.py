"""F1: the keys, and what rewind does."""

from __future__ import annotations

from rich.table import Table
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Static

ABOUT = (
    "Rewind takes a conversation back to before any turn: the turn and everything after it go away, "
    "on the server too (its session state and history go back, and the change is saved). Nothing is "
    "deleted: rewound turns are kept on the server for audit.\n\n"
    "• Click “⟲ Rewind to here” on a message, or select it (alt+↑ / alt+↓, or ↑ from an empty composer) and press r.\n"
    "• Esc Esc rewinds the last turn.\n"
    "• e on a message: edit that turn's message and resend it (Esc cancels the edit).\n"
    "• f on a message: fork a new session from before that turn; the original is kept (F2 lists sessions).\n"
    "• ctrl+p opens the command palette with every action."
)


class HelpScreen(ModalScreen[None]):
    CSS_PATH = "help.tcss"
    BINDINGS = [Binding("escape,f1,q", "dismiss", "Close", id="help.close", tooltip="Close help")]

    def __init__(self, rows: list[tuple[str, str, str]]) -> None:
        super().__init__()
        self.rows = rows

    def compose(self) -> ComposeResult:
        table = Table(box=None, expand=True, show_header=True, header_style="bold")
        table.add_column("key", no_wrap=True)
        table.add_column("action")
        table.add_column("id", style="dim", no_wrap=True)
        for key, description, binding_id in self.rows:
            table.add_row(Text(key), Text(description), Text(binding_id))
        with VerticalScroll(id="help-body"):
            yield Static(Text("rewindtui — help", style="bold"), id="help-title")
            yield Static(Text(ABOUT), id="help-about")
            yield Static(table, id="help-keys")
            yield Static(Text("Keys can be remapped by binding id in config.toml ([keymap]).", style="dim"))

    async def action_dismiss(self, result: None = None) -> None:
        self.dismiss(None)
