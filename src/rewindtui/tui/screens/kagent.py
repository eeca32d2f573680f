"""kagent 1.0's own UI for the session, in the app: its checkpoints (with their names; rename,
delete, fork from any) and its shares (revoke). Dismisses with the id of a session to open (a
fork), or None.

The lists are what the controller answers (read again after each change); a delete or revoke asks
first; an error is said in the line under the lists and changes nothing on screen. CheckpointService's
field numbers are unverified (docs/kagent.md): the controller client's errors say so.
"""

from __future__ import annotations

from typing import Any

from rich.text import Text
from textual import work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Input, OptionList, Static
from textual.widgets.option_list import Option

from rewindtui.base.textsafe import sanitize_line
from rewindtui.kagent1.records import checkpoint_record, share_record
from rewindtui.tui.screens.confirm import ConfirmScreen

KEYS_CHECKPOINTS = "checkpoints: f fork · r rename · d delete   ·   Tab: shares   ·   Esc close"
KEYS_SHARES = "shares: x revoke   ·   Tab: checkpoints   ·   Esc close"


class KagentScreen(ModalScreen[str | None]):
    CSS_PATH = "kagent.tcss"
    BINDINGS = [
        Binding("escape", "close", "Close", id="kagent.close", tooltip="Close; nothing changes"),
        Binding(
            "f",
            "fork",
            "Fork",
            id="kagent.fork",
            tooltip="A new session from the highlighted checkpoint (the original is kept)",
        ),
        Binding("r", "rename", "Rename", id="kagent.rename", tooltip="Rename the highlighted checkpoint"),
        Binding(
            "d,delete", "delete", "Delete", id="kagent.delete", tooltip="Delete the highlighted checkpoint (asks first)"
        ),
        Binding("x", "revoke", "Revoke", id="kagent.revoke", tooltip="Revoke the highlighted share (asks first)"),
    ]

    def __init__(self, client: Any, session_id: str) -> None:
        super().__init__()
        self.client = client  # a rewindtui.kagent1.client.Kagent1Client
        self.session_id = session_id
        self.checkpoints: list[Any] = []
        self.shares: list[Any] = []
        self._renaming = ""  # the checkpoint whose name is being typed

    def compose(self) -> ComposeResult:
        with Vertical(id="kagent-box"):
            yield Static(Text(f"kagent · session {self.session_id[:8]}", style="bold"), id="kagent-title")
            yield Static("Checkpoints", classes="kagent-heading")
            yield OptionList(id="kagent-checkpoints")
            yield Static("Shares", classes="kagent-heading")
            yield OptionList(id="kagent-shares")
            yield Input(
                placeholder="A name for the checkpoint (empty: kagent's own)",
                max_length=200,
                id="kagent-name",
                classes="hidden",
            )
            yield Static("reading…", id="kagent-said")
            yield Static(KEYS_CHECKPOINTS, id="kagent-keys")

    def on_mount(self) -> None:
        self.query_one("#kagent-checkpoints", OptionList).focus()
        self.load()

    # -- what the controller holds -----------------------------------------------------------------
    @work(group="kagent", exclusive=True)
    async def load(self, said: str = "") -> None:
        try:
            self.checkpoints = await self.client.list_checkpoints(self.session_id)
        except Exception as exc:  # said on screen, nothing else changes
            self.say(f"checkpoints: {exc}")
            self.checkpoints = []
        try:
            self.shares = await self.client.list_shares(self.session_id)
        except Exception as exc:
            self.say(f"shares: {exc}")
            self.shares = []
        else:
            self.say(said or f"{len(self.checkpoints)} checkpoint(s), {len(self.shares)} share(s)")
        self._fill()

    def _fill(self) -> None:
        lists = self.query_one("#kagent-checkpoints", OptionList), self.query_one("#kagent-shares", OptionList)
        for options in lists:
            options.clear_options()
        lists[0].add_options(
            [Option(Text(checkpoint_line(c)), id=c.id) for c in self.checkpoints] or [Option("(none)", disabled=True)]
        )
        lists[1].add_options(
            [Option(Text(share_line(s)), id=s.id) for s in self.shares] or [Option("(none)", disabled=True)]
        )
        for options, rows in zip(lists, (self.checkpoints, self.shares), strict=True):
            if rows:
                options.highlighted = 0

    def say(self, text: str) -> None:
        self.query_one("#kagent-said", Static).update(Text(sanitize_line(text)))

    def _chosen(self, which: str, rows: list[Any]) -> Any:
        options = self.query_one(f"#kagent-{which}", OptionList)
        if self.focused is not options or options.highlighted is None:
            return None
        option_id = options.get_option_at_index(options.highlighted).id
        return next((r for r in rows if r.id == option_id), None)

    def on_descendant_focus(self) -> None:
        shares = self.focused is self.query_one("#kagent-shares", OptionList)
        self.query_one("#kagent-keys", Static).update(KEYS_SHARES if shares else KEYS_CHECKPOINTS)

    # -- actions -------------------------------------------------------------------------------
    def action_close(self) -> None:
        name = self.query_one("#kagent-name", Input)
        if not name.has_class("hidden"):  # Esc backs out one level: the rename first
            name.add_class("hidden")
            self.query_one("#kagent-checkpoints", OptionList).focus()
            return
        self.dismiss(None)

    def action_fork(self) -> None:
        chosen = self._chosen("checkpoints", self.checkpoints)
        if chosen is not None:
            self.say(f"forking from {chosen.name or chosen.id[:8]}…")
            self._fork(chosen)

    @work(group="kagent", exclusive=True)
    async def _fork(self, checkpoint: Any) -> None:
        try:
            fork = await self.client.fork_checkpoint(self.session_id, checkpoint)
        except Exception as exc:
            self.say(f"fork: {exc}")
            return
        self.dismiss(fork.id)

    def action_rename(self) -> None:
        chosen = self._chosen("checkpoints", self.checkpoints)
        if chosen is None:
            return
        name = self.query_one("#kagent-name", Input)
        name.value = chosen.name
        name.remove_class("hidden")
        name.focus()
        self._renaming = chosen.id

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        event.input.add_class("hidden")
        self.query_one("#kagent-checkpoints", OptionList).focus()
        self._rename(self._renaming, " ".join(event.value.split()))

    @work(group="kagent", exclusive=True)
    async def _rename(self, checkpoint_id: str, name: str) -> None:
        try:
            renamed = await self.client.rename_checkpoint(checkpoint_id, name)
        except Exception as exc:
            self.say(f"rename: {exc}")
            return
        self.load(f"checkpoint {renamed.id[:8]} is now named {renamed.name!r}")

    def action_delete(self) -> None:
        chosen = self._chosen("checkpoints", self.checkpoints)
        if chosen is None:
            return

        def answered(go: bool | None) -> None:
            if go:
                self._delete(chosen.id)

        what = (
            f"Delete checkpoint {chosen.name or chosen.id[:8]} (after turn {chosen.history_sequence})? "
            "The session keeps its turns; no fork can start there any more."
        )
        self.app.push_screen(ConfirmScreen("Delete checkpoint", what, go="Delete"), answered)

    @work(group="kagent", exclusive=True)
    async def _delete(self, checkpoint_id: str) -> None:
        try:
            await self.client.delete_checkpoint(self.session_id, checkpoint_id)
        except Exception as exc:
            self.say(f"delete: {exc}")
            return
        self.load(f"checkpoint {checkpoint_id[:8]} deleted")

    def action_revoke(self) -> None:
        chosen = self._chosen("shares", self.shares)
        if chosen is None:
            return

        def answered(go: bool | None) -> None:
            if go:
                self._revoke(chosen.id)

        what = f"Revoke share {chosen.id[:8]}? Whoever holds its link can no longer open this session."
        self.app.push_screen(ConfirmScreen("Revoke share", what, go="Revoke"), answered)

    @work(group="kagent", exclusive=True)
    async def _revoke(self, share_id: str) -> None:
        try:
            await self.client.revoke_share(share_id)
        except Exception as exc:
            self.say(f"revoke: {exc}")
            return
        self.load(f"share {share_id[:8]} revoked")


def checkpoint_line(c: Any) -> str:
    r = checkpoint_record(c)
    return sanitize_line(f"after turn {r['after_turn']}  {c.name or '(unnamed)'}  · {r['state']}  · {c.id[:8]}")


def share_line(s: Any) -> str:
    r = share_record(s)
    return sanitize_line(f"{r['permission']}  · created {r['created_at'] or '?'}  · {s.id[:8]}")


def open_kagent(host: Any) -> None:
    """The chat screen's ``/kagent``: this screen for the session open, when the connection is
    kagent 1.0 (else it says what there is instead); a fork chosen here is opened."""
    from rewindtui.kagent1.client import Kagent1Client

    chat = host.chat
    client = chat.client if chat is not None else None
    if not isinstance(client, Kagent1Client):
        host.notify(
            "Checkpoints and shares are kagent 1.0's: this connection is not to a kagent 1.0 controller.",
            severity="warning",
        )
        return
    if not chat.session_id:
        host.notify("No session yet: send a first message, then its checkpoints are here.", severity="warning")
        return

    def opened(session_id: str | None) -> None:
        if session_id:
            host.switching.request(session_id)

    host.app.push_screen(KagentScreen(client, chat.session_id), opened)
