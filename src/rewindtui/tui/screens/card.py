"""The agent card, for people: who the agent is, where and how rewindtui talks to it (the
interface in use marked), its capabilities, extensions (ours marked), skills with examples,
security schemes with the rewindtui option that answers each, and warnings where the card is
incomplete or contradicts itself. The same sections as ``rewindtui card``."""

from __future__ import annotations

from typing import Any

from rich.table import Table
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Static

from rewindtui.a2a.card import Choice, card_sections
from rewindtui.base.textsafe import sanitize, sanitize_line


class CardScreen(ModalScreen[None]):
    CSS_PATH = "card.tcss"
    BINDINGS = [Binding("escape,f3,q", "dismiss", "Close", id="card.close", tooltip="Close the agent card")]

    def __init__(self, card: dict[str, Any], *, url: str = "", choice: Choice | None = None, embedded: bool = False) -> None:
        super().__init__()
        self.card = card
        self.url = url
        self.choice = choice
        self.embedded = embedded  # the app started this server and authenticates to it by itself

    def compose(self) -> ComposeResult:
        with VerticalScroll(id="card-body"):
            name = sanitize_line(str(self.card.get("name") or "agent"))
            yield Static(Text(f"Agent card — {name}", style="bold"), id="card-title")
            for section in card_sections(self.card, card_url=self.url or None, choice=self.choice):
                warning = section.title == "Warnings"
                yield Static(Text(section.title, style="bold yellow" if warning else "bold"), classes="card-section")
                table = Table(box=None, expand=True, show_header=False, pad_edge=False)
                table.add_column("label", style="yellow" if warning else "dim", width=2 if warning else 26, overflow="fold")
                table.add_column("value", overflow="fold", ratio=1)  # the label keeps its width; the value takes the rest
                for label, value in section.rows:
                    label, value = self._words(section.title, label, value)
                    table.add_row(Text(sanitize_line(label)), Text(sanitize(value)))
                yield Static(table, classes="card-rows")
            yield Static(Text("Esc closes · also: rewindtui card --url URL [--json]", style="dim"), id="card-hint")

    def _words(self, section: str, label: str, value: str) -> tuple[str, str]:
        """The card's rows in the app's terms: the card's own ``protocolVersion`` field is not the
        protocol in use (the Interfaces section marks that), and the embedded server's bearer is
        the app's business, not an option to give."""
        if section == "Agent" and label == "protocol version":
            return "card's protocolVersion", f"{value} (the version the card declares; the one in use is marked “used” below)"
        if section == "Security" and self.embedded and "->" in value:
            return label, value.split(" -> ")[0] + " — rewindtui gives it to the embedded server it started; nothing to set"
        return label, value

    async def action_dismiss(self, result: None = None) -> None:
        self.dismiss(None)
