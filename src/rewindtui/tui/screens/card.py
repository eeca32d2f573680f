"""The agent card, for people: who the agent is, where and how rewindtui talks to it (the
interface in use marked), its capabilities, extensions (ours marked), skills with examples,
security schemes with the rewindtui option that answers each, and warnings where the card is
incomplete or contradicts itself. The same sections as ``rewindtui card``.

Given the connected ``client``, the screen then checks the card in the background and adds two
sections (as ``rewindtui card --extended`` does, :mod:`rewindtui.output.card_extras`):
"Signature" (verified / self-signed / not signed / bad signature / not checked, with the reason:
"verified" only with a key the user trusts, ``card_keys`` / ``card_issuers``) and "Extended
card" (fetched / not offered / needs auth / not read, and what the extended card adds)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
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
from rewindtui.client.errors import ClientError
from rewindtui.output.card_extras import FETCHED, CardExtras, card_extras, extended_additions

CHECKING = "checking…"


class CardScreen(ModalScreen[None]):
    CSS_PATH = "card.tcss"
    BINDINGS = [Binding("escape,f3,q", "dismiss", "Close", id="card.close", tooltip="Close the agent card")]

    def __init__(
        self,
        card: dict[str, Any],
        *,
        url: str = "",
        choice: Choice | None = None,
        embedded: bool = False,
        client: Any = None,
        keys: Mapping[str, Any] | None = None,
        issuers: Sequence[str] = (),
    ) -> None:
        super().__init__()
        self.card = card
        self.url = url
        self.choice = choice
        self.embedded = embedded  # the app started this server and authenticates to it by itself
        self.client = client  # the connected client: the signature and the extended card are checked with it
        self.keys = keys  # a JWKS the user trusts for the signature (card_keys)
        self.issuers = tuple(issuers)  # key sets / origins the user pinned (card_issuers)
        #: what the check found (None until it has run)
        self.extras: CardExtras | None = None

    def compose(self) -> ComposeResult:
        with VerticalScroll(id="card-body"):
            name = sanitize_line(str(self.card.get("name") or "agent"))
            yield Static(Text(f"Agent card — {name}", style="bold"), id="card-title")
            for section in card_sections(self.card, card_url=self.url or None, choice=self.choice):
                warning = section.title == "Warnings"
                yield Static(Text(section.title, style="bold yellow" if warning else "bold"), classes="card-section")
                table = Table(box=None, expand=True, show_header=False, pad_edge=False)
                table.add_column(
                    "label", style="yellow" if warning else "dim", width=2 if warning else 26, overflow="fold"
                )
                table.add_column(
                    "value", overflow="fold", ratio=1
                )  # the label keeps its width; the value takes the rest
                for label, value in section.rows:
                    label, value = self._words(section.title, label, value)
                    table.add_row(Text(sanitize_line(label)), Text(sanitize(value)))
                yield Static(table, classes="card-rows")
            if self.client is not None:
                yield Static(Text("Signature", style="bold"), classes="card-section")
                yield Static(self._table([("signature", CHECKING)]), id="card-signature", classes="card-rows")
                yield Static(Text("Extended card", style="bold"), classes="card-section")
                yield Static(self._table([("extended card", CHECKING)]), id="card-extended", classes="card-rows")
            yield Static(Text("Esc closes · also: rewindtui card --url URL [--json]", style="dim"), id="card-hint")

    @staticmethod
    def _table(rows: list[tuple[str, str]]) -> Table:
        table = Table(box=None, expand=True, show_header=False, pad_edge=False)
        table.add_column("label", style="dim", width=26, overflow="fold")
        table.add_column("value", overflow="fold", ratio=1)
        for label, value in rows:
            table.add_row(Text(sanitize_line(label)), Text(sanitize(value)))
        return table

    def on_mount(self) -> None:
        if self.client is not None:
            self.run_worker(self._check(), group="card-extras", exclusive=True)

    async def _check(self) -> None:
        """The signature and the extended card, shown when known (the card is shown at once)."""
        try:
            extras = await card_extras(
                self.client,
                self.card,
                self.url or self.client.url,
                extended=True,
                keys=self.keys,
                tolerant=True,
                issuers=self.issuers,
            )
        except ClientError as exc:
            self._show([("signature", f"not checked ({exc})")], [("extended card", f"not read ({exc})")])
            return
        self.extras = extras
        extended_rows = [("extended card", extras.extended_text())]
        if extras.extended_status == FETCHED and extras.extended is not None:
            extended_rows += extended_additions(self.card, extras.extended)
            if extras.extended_signature is not None:
                extended_rows.append(("its signature", extras.extended_signature.text()))
        self._show([("signature", extras.signature.text())], extended_rows)

    def _show(self, signature: list[tuple[str, str]], extended: list[tuple[str, str]]) -> None:
        self.query_one("#card-signature", Static).update(self._table(signature))
        self.query_one("#card-extended", Static).update(self._table(extended))

    def _words(self, section: str, label: str, value: str) -> tuple[str, str]:
        """The card's rows in the app's terms: the card's own ``protocolVersion`` field is not the
        protocol in use (the Interfaces section marks that), and the embedded server's bearer is
        the app's business, not an option to give."""
        if section == "Agent" and label == "protocol version":
            return (
                "card's protocolVersion",
                f"{value} (the version the card declares; the one in use is marked “used” below)",
            )
        if section == "Security" and self.embedded and "->" in value:
            return label, value.split(" -> ")[
                0
            ] + " — rewindtui gives it to the embedded server it started; nothing to set"
        return label, value

    async def action_dismiss(self, result: None = None) -> None:
        self.dismiss(None)
