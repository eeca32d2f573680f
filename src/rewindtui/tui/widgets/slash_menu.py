"""The slash completion: while the composer starts with ``/`` and a command name is being typed,
the matching commands show above it (name, arguments, key, what it does); Tab completes."""

from __future__ import annotations

from collections.abc import Callable, Mapping

from rich.table import Table
from rich.text import Text
from textual.widgets import Static

from rewindtui.tui import interaction


class SlashMenu(Static):
    DEFAULT_CSS = """
    SlashMenu { height: auto; max-height: 12; display: none; padding: 0 1; background: $panel; }
    SlashMenu.-shown { display: block; }
    """

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.names: list[str] = []

    def show_for(
        self,
        prefix: str | None,
        keymap: Mapping[str, str] | None = None,
        offered: Callable[[interaction.Command], bool] | None = None,
    ) -> None:
        """Show the commands matching ``prefix`` (None: hide) that ``offered`` allows now."""
        matches = interaction.slash_matches(prefix) if prefix is not None else []
        matches = [c for c in matches if offered is None or offered(c)]
        self.names = [c.slash for c in matches]
        if prefix is None:
            self.set_class(False, "-shown")
            return
        table = Table.grid(padding=(0, 2), expand=True)
        table.add_column(no_wrap=True)
        table.add_column(no_wrap=True, style="dim")
        table.add_column(ratio=1, overflow="ellipsis", no_wrap=True)
        for command in matches:
            name = Text(f"/{command.slash}", style="bold")
            if command.args:
                name.append(f" {command.args}", style="italic")
            table.add_row(name, Text(interaction.keys_of(command.id, keymap)), Text(command.help))
        if not matches:
            table.add_row(
                Text(f"/{prefix}", style="bold"),
                Text(""),
                Text("no such command (// sends a literal /)", style="italic"),
            )
        else:
            table.add_row(
                Text("Tab completes · Enter runs · // sends a literal /", style="dim italic"), Text(""), Text("")
            )
        self.update(table)
        self.set_class(True, "-shown")
