"""F1: the interaction table (every mode, what each key does, the slash commands, the undo rule),
rendered from :mod:`rewindtui.tui.interaction` with the user's keymap. Esc closes it."""

from __future__ import annotations

import io
from collections.abc import Mapping

from rich.console import Group
from rich.table import Table
from rich.text import Text
from textual.app import ComposeResult
from textual.containers import VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Static

from rewindtui.tui import interaction

ABOUT = (
    "Rewind takes a conversation back to before any turn: the turn and everything after it go away, "
    "on the server too (its session state and history go back). Nothing is deleted: rewound turns are "
    "kept on the server (F4 shows them, where they were) and can come back.\n"
    "Nothing rewinds until you press Enter on the preview you are looking at: alt+↑ or /rewind shows "
    "what would go, dimmed. A printable key is always text: typed while choosing, editing or answering, "
    "it lands in the composer. Esc backs out one level."
)


def mode_tables(keymap: Mapping[str, str] | None = None) -> Group:
    parts: list[Text | Table] = []
    for mode, rows in interaction.MODES.items():
        table = Table(box=None, expand=True, show_header=False, padding=(0, 2))
        table.add_column("key", no_wrap=True, style="bold", min_width=14)
        table.add_column("what")
        for ref, what in rows:
            table.add_row(Text(interaction.row_key(ref, keymap)), Text(what))
        parts += [Text(mode.value.capitalize(), style="bold underline"), table, Text("")]
    slash = Table(box=None, expand=True, show_header=False, padding=(0, 2))
    slash.add_column("command", no_wrap=True, style="bold", min_width=14)
    slash.add_column("key", no_wrap=True, style="dim")
    slash.add_column("what")
    for command in interaction.COMMANDS:
        if command.slash:
            name = f"/{command.slash}" + (f" {command.args}" if command.args else "")
            slash.add_row(Text(name), Text(interaction.keys_of(command.id, keymap)), Text(command.help))
    parts += [Text("Slash commands (// sends a literal /)", style="bold underline"), slash, Text("")]
    parts += [Text("Turn numbers", style="bold underline"), Text(interaction.TURN_NUMBERS_RULE), Text("")]
    parts += [Text("Undo", style="bold underline"), Text(interaction.UNDO_RULE)]
    return Group(*parts)


class HelpScreen(ModalScreen[None]):
    CSS_PATH = "help.tcss"
    BINDINGS = [("escape,f1,q", "dismiss", "Close")]

    def __init__(self, keymap: Mapping[str, str] | None = None) -> None:
        super().__init__()
        self.keymap = keymap
        self.tables = mode_tables(keymap)

    def compose(self) -> ComposeResult:
        with VerticalScroll(id="help-body"):
            yield Static(Text("rewindtui — help   (Esc closes it)", style="bold"), id="help-title")
            yield Static(Text(ABOUT), id="help-about")
            yield Static(self.tables, id="help-keys")
            yield Static(
                Text(
                    "Keys can be remapped by binding id in config.toml ([keymap]); docs/keys.md lists the ids.",
                    style="dim",
                )
            )

    def plain(self, width: int = 100) -> str:
        """The keys as plain text (what the screen shows)."""
        from rich.console import Console

        console = Console(width=width, record=True, file=io.StringIO())
        console.print(self.tables)
        return console.export_text()

    async def action_dismiss(self, result: None = None) -> None:
        self.dismiss(None)
