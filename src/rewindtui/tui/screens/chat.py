"""The main screen: status line, sessions panel, transcript, composer, footer.

It drives a :class:`~rewindtui.chat.Chat` (the same code the headless commands use): each turn,
rewind or fork runs in one exclusive worker; the chat reports conversation changes, which the
transcript draws incrementally.
"""

from __future__ import annotations

import time
from urllib.parse import urlsplit

from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.screen import Screen
from textual.widgets import Footer

from rewindtui.chat import Chat
from rewindtui.client import ClientError
from rewindtui.conversation import Change, Item
from rewindtui.tui.widgets.composer import Composer
from rewindtui.tui.widgets.sessions_panel import SessionsPanel
from rewindtui.tui.widgets.status_line import Status, StatusLine
from rewindtui.tui.widgets.transcript import Permissions, Transcript

#: Two presses of Escape within this many seconds rewind the last turn.
DOUBLE_ESCAPE_SECONDS = 0.6


class ChatScreen(Screen):
    CSS_PATH = "chat.tcss"

    BINDINGS = [
        Binding("alt+up", "message_cursor(-1)", "Prev msg", id="chat.message_previous", tooltip="Select the previous message"),
        Binding("alt+down", "message_cursor(1)", "Next msg", id="chat.message_next", tooltip="Select the next message"),
        Binding("escape", "escape", "Esc Esc: undo turn", id="chat.escape", tooltip="Cancel an edit; pressed twice, rewind the last turn"),
        Binding("f2", "toggle_sessions", "Sessions", id="chat.sessions", tooltip="Show or hide the sessions panel"),
        Binding("ctrl+n", "new_session", "New", id="chat.new_session", tooltip="Start a new session"),
        Binding("f1", "app.help", "Help", id="chat.help", tooltip="Show keys and how rewind works"),
    ]

    def __init__(self) -> None:
        super().__init__()
        self.chat: Chat | None = None
        self.status = Status(turn="connecting…")
        self._last_escape = 0.0

    def compose(self) -> ComposeResult:
        yield StatusLine(id="status")
        yield SessionsPanel(id="sessions", classes="hidden")
        yield Transcript(id="transcript")
        yield Composer(id="composer")
        yield Footer()

    def on_mount(self) -> None:
        self.query_one(StatusLine).show(self.status)
        self.composer.focus()

    # -- parts ---------------------------------------------------------------------------------
    @property
    def transcript(self) -> Transcript:
        return self.query_one(Transcript)

    @property
    def composer(self) -> Composer:
        return self.query_one(Composer)

    @property
    def sessions(self) -> SessionsPanel:
        return self.query_one(SessionsPanel)

    # -- wiring a chat -------------------------------------------------------------------------
    def attach(self, chat: Chat) -> None:
        """Show a connected chat (its session already opened)."""
        self.chat = chat
        chat.listener = self._on_change
        caps = chat.client.capabilities
        server = urlsplit(chat.client.config.url)
        self.status.server = server.netloc or chat.client.config.url
        if caps is not None:
            self.status.agent = caps.name
            self.status.dialect = caps.dialect.value
            self.status.rewind = caps.rewind_mode or "unavailable"
            self.transcript.set_permissions(Permissions(caps.can_rewind, caps.fork, caps.why_no_rewind()))
        self._show_conversation()

    def _show_conversation(self) -> None:
        assert self.chat is not None
        self.transcript.set_conversation(self.chat.conversation)
        self._refresh_status()

    def _on_change(self, change: Change) -> None:
        assert self.chat is not None
        if self.transcript.conversation is not self.chat.conversation:
            self.transcript.set_conversation(self.chat.conversation)
        else:
            self.transcript.apply_change(change)
        self._refresh_status()

    def _refresh_status(self) -> None:
        chat = self.chat
        if chat is not None:
            session = chat.session
            name = session.name if session and session.name else ""
            sid = chat.session_id or ""
            self.status.session = f"{name} ({sid[:8]})" if name else sid[:8]
            if chat.rewinding:
                self.status.turn = "rewinding…"
            else:
                self.status.turn = chat.conversation.turn_state
            self.status.note = "editing: Enter resends from here, Esc cancels" if chat.edit else ""
        self.query_one(StatusLine).show(self.status)

    def show_failure(self, text: str) -> None:
        self.status.turn = "disconnected"
        self.status.note = text
        self.query_one(StatusLine).show(self.status)

    # -- sending -------------------------------------------------------------------------------
    @on(Composer.Submitted)
    def _submitted(self, event: Composer.Submitted) -> None:
        chat = self.chat
        if chat is None:
            self.notify("Not connected yet; your draft is kept.", severity="warning")
            return
        if chat.sending or chat.rewinding:
            self.notify("Wait for the current turn to finish; your draft is kept.", severity="warning")
            return
        self.composer.clear()
        self._send(event.text)

    @work(group="turn", exclusive=True)
    async def _send(self, text: str) -> None:
        assert self.chat is not None
        try:
            await self.chat.send(text)
        except ClientError as exc:
            if not self.composer.text:
                self.composer.set_draft(text)  # the draft survives the failure
            self.notify(str(exc), title="Send failed", severity="error", timeout=8)
        finally:
            self._refresh_status()

    # -- rewind, edit, fork --------------------------------------------------------------------
    @on(Transcript.Action)
    def _message_action(self, event: Transcript.Action) -> None:
        self.handle_action(event.action, event.item)

    def handle_action(self, action: str, item: Item) -> None:
        chat = self.chat
        target = item.rewind_target
        if chat is None or target is None:
            self.app.bell()
            return
        caps = chat.client.capabilities
        if action in ("rewind", "edit") and (caps is None or not caps.can_rewind):
            self.notify(caps.why_no_rewind() if caps else "Not connected.", title="Rewind unavailable", severity="warning")
            return
        if action == "fork" and (caps is None or not caps.fork):
            self.notify(f"{caps.name if caps else 'This server'} does not support fork.", severity="warning")
            return
        if chat.rewinding:
            return  # one rewind at a time; further ones are ignored while it is in flight
        if chat.sending:
            self.notify("Wait for the current turn to finish.", severity="warning")
            return
        if action == "rewind":
            self._rewind(target)
        elif action == "edit":
            text = chat.begin_edit(target)
            self.composer.set_draft(text)
            self.composer.focus()
            self._refresh_status()
        elif action == "fork":
            self._fork(target)

    @work(group="turn", exclusive=True)
    async def _rewind(self, invocation_id: str) -> None:
        assert self.chat is not None
        try:
            await self.chat.rewind(invocation_id)
        except ClientError as exc:
            self.notify(str(exc), title="Rewind failed", severity="error", timeout=8)
        finally:
            self._refresh_status()

    @work(group="turn", exclusive=True)
    async def _fork(self, invocation_id: str) -> None:
        assert self.chat is not None
        original = self.chat.session_id
        try:
            session = await self.chat.fork(invocation_id)
        except ClientError as exc:
            self.notify(str(exc), title="Fork failed", severity="error", timeout=8)
            return
        self._show_conversation()
        self.notify(f"Forked into “{session.name or session.id}”; the original ({(original or '')[:8]}) is in the sessions panel (F2).")
        if not self.sessions.has_class("hidden"):
            self._load_sessions()

    def action_message_cursor(self, step: int) -> None:
        self.transcript.focus()
        self.transcript.action_cursor(step)

    @on(Composer.ToMessages)
    def _to_messages(self) -> None:
        self.transcript.focus()
        self.transcript.action_cursor_end()

    @on(Transcript.Leave)
    def _leave_transcript(self) -> None:
        self.transcript.cursor = None
        self.composer.focus()

    def action_escape(self) -> None:
        chat = self.chat
        if chat is not None and chat.edit is not None:
            chat.cancel_edit()
            self.composer.clear()
            self._refresh_status()
            self.notify("Edit cancelled; the conversation is back as it was.")
            return
        now = time.monotonic()
        if now - self._last_escape <= DOUBLE_ESCAPE_SECONDS:
            self._last_escape = 0.0
            self.rewind_last_turn()
        else:
            self._last_escape = now

    def rewind_last_turn(self) -> None:
        chat = self.chat
        if chat is None:
            return
        target = chat.conversation.last_turn_invocation()
        if target is None:
            self.notify("Nothing to rewind.")
            return
        item = next(it for it in chat.conversation.items if it.rewind_target == target)
        self.handle_action("rewind", item)

    # -- sessions ------------------------------------------------------------------------------
    def action_toggle_sessions(self) -> None:
        panel = self.sessions
        panel.toggle_class("hidden")
        if panel.has_class("hidden"):
            self.composer.focus()
        else:
            panel.focus()
            self._load_sessions()

    @work(group="sessions", exclusive=True)
    async def _load_sessions(self) -> None:
        chat = self.chat
        if chat is None or not chat.client.has_api:
            self.sessions.clear_options()
            self.sessions.add_option("(this server has no sessions API)")
            return
        try:
            sessions = await chat.client.list_sessions()
        except ClientError as exc:
            self.notify(str(exc), title="Sessions", severity="error")
            return
        self.sessions.show_sessions(sessions, chat.session_id)

    @on(SessionsPanel.Open)
    def _open_session(self, event: SessionsPanel.Open) -> None:
        self._switch(event.session_id)

    @on(SessionsPanel.New)
    def _new_from_panel(self) -> None:
        self._switch(None)

    @on(SessionsPanel.Close)
    def _close_panel(self) -> None:
        self.sessions.add_class("hidden")
        self.composer.focus()

    def action_new_session(self) -> None:
        self._switch(None)

    @work(group="turn", exclusive=True)
    async def _switch(self, session_id: str | None) -> None:
        chat = self.chat
        if chat is None:
            return
        try:
            await chat.open(session_id)
        except ClientError as exc:
            self.notify(str(exc), title="Open session", severity="error")
            return
        self._show_conversation()
        if not self.sessions.has_class("hidden"):
            self._load_sessions()
        self.composer.focus()
