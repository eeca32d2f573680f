"""ctrl+t with saved agents: what the new tab opens -- this agent with a new session, or one of
the saved agents (``rewindtui agents add``). ↑/↓ and Enter, or a click; Esc backs out with
nothing opened. Dismisses with "" (this agent), a saved agent's name, or None."""

from __future__ import annotations

from collections.abc import Sequence

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import OptionList, Static
from textual.widgets.option_list import Option

from rewindtui.base.textsafe import sanitize_line

#: the option id of "this agent" (a saved agent's name never starts with a space)
THIS_AGENT = " this"


class NewTabScreen(ModalScreen[str | None]):
    CSS_PATH = "new_tab.tcss"
    BINDINGS = [Binding("escape", "cancel", "Cancel", id="new_tab.cancel", tooltip="Open no tab")]

    def __init__(self, this_agent: str, saved: Sequence[tuple[str, str]]) -> None:
        super().__init__()
        self.this_agent = this_agent
        self.saved = list(saved)  # (name, url)

    def compose(self) -> ComposeResult:
        options = [Option(Text(f"{sanitize_line(self.this_agent)} — a new session", style="bold"), id=THIS_AGENT)]
        for name, url in self.saved:
            label = Text(sanitize_line(name), style="bold")
            label.append(f"  {sanitize_line(url)}", style="dim")
            options.append(Option(label, id=name))
        with Vertical(id="new-tab-box"):
            yield Static(Text("Open a new tab with…", style="bold"), id="new-tab-title")
            yield OptionList(*options, id="new-tab-list")
            yield Static(Text("Enter opens it · Esc: no new tab", style="dim"), id="new-tab-help")

    def on_mount(self) -> None:
        self.query_one(OptionList).focus()

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        event.stop()
        chosen = event.option.id
        self.dismiss("" if chosen == THIS_AGENT or chosen is None else chosen)

    def action_cancel(self) -> None:
        self.dismiss(None)
