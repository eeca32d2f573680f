"""The slash menu: while the composer starts with ``/``, the commands whose name is being typed
show above it (name and arguments, key, what it does), one highlighted: ↑/↓ move the highlight,
Tab or Enter take it, Esc closes the menu (the draft stays). While a command's arguments are
typed it shows what they mean. The state is :class:`rewindtui.tui.slash.Completion` (pure); the
composer sends it the keys."""

from __future__ import annotations

from collections.abc import Callable, Mapping

from rich.console import Group, RenderableType
from rich.table import Table
from rich.text import Text
from textual.widgets import Static

from rewindtui.tui import interaction
from rewindtui.tui.slash import Completion


class SlashMenu(Static):
    DEFAULT_CSS = """
    SlashMenu { height: auto; max-height: 12; display: none; padding: 0 1; background: $panel; }
    SlashMenu.-shown { display: block; }
    """

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.completion = Completion()
        self.keymap: Mapping[str, str] | None = None

    @property
    def names(self) -> list[str]:
        """The names listed (all matches, also those scrolled out of view)."""
        return [c.slash for c in self.completion.matches]

    @property
    def available(self) -> Callable[[interaction.Command], bool]:
        """Which commands the menu lists (default: all). Set it to list only what can run now."""
        return self.completion.available

    @available.setter
    def available(self, predicate: Callable[[interaction.Command], bool]) -> None:
        self.completion.available = predicate
        text, self.completion.text = self.completion.text, None
        self.completion.update(text)
        self._draw()

    def show_text(self, text: str | None, keymap: Mapping[str, str] | None = None) -> None:
        """The composer's text changed: show what fits it (nothing when it is no command)."""
        self.keymap = keymap
        self.completion.update(text)
        self._draw()

    def show_for(self, prefix: str | None, keymap: Mapping[str, str] | None = None) -> None:
        """Show the commands whose name starts with ``prefix`` (None: hide)."""
        self.show_text(None if prefix is None else f"/{prefix}", keymap)

    def move(self, step: int) -> None:
        self.completion.move(step)
        self._draw()

    def close(self) -> None:
        """Esc: the menu goes until the draft changes; the draft stays."""
        self.completion.close()
        self._draw()

    def _draw(self) -> None:
        completion = self.completion
        if not completion.shown:
            self.set_class(False, "-shown")
            return
        table = Table.grid(padding=(0, 2), expand=True)
        table.add_column(no_wrap=True)
        table.add_column(no_wrap=True, style="dim")
        table.add_column(ratio=1, overflow="ellipsis", no_wrap=True)
        if completion.command is not None:
            command = completion.command
            what = interaction.ARG_HELP.get(command.slash, "") or command.help
            table.add_row(self._usage(command), Text(interaction.keys_of(command.id, self.keymap)), Text(what))
            hint = "Enter runs it · Esc closes this"
        elif not completion.matches:
            table.add_row(
                Text(f"/{completion.prefix}", style="bold"),
                Text(""),
                Text("no such command (// sends a literal /)", style="italic"),
            )
            hint = ""
        else:
            start, end = completion.window()
            for index in range(start, end):
                command = completion.matches[index]
                row_style = "reverse" if index == completion.highlight else ""
                table.add_row(
                    self._usage(command),
                    Text(interaction.keys_of(command.id, self.keymap)),
                    Text(command.help),
                    style=row_style,
                )
            more = len(completion.matches) - (end - start)
            hint = "↑↓ choose · Tab or Enter takes · Esc closes · // sends a literal /"
            if more:
                hint = f"{more} more · " + hint
        shown: RenderableType = Group(table, Text(hint, style="dim italic")) if hint else table
        self.update(shown)
        self.set_class(True, "-shown")

    @staticmethod
    def _usage(command: interaction.Command) -> Text:
        name = Text(f"/{command.slash}", style="bold")
        if command.args:
            name.append(f" {command.args}", style="italic")
        return name
