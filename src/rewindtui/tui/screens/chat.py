"""The main screen: status line, sessions panel, transcript, mode banner, composer, footer.

It drives a :class:`~rewindtui.chat.Chat` (the same code the headless commands use); the chat
reports conversation changes, which the transcript draws incrementally.

Rewind is explicit. Nothing is sent until the user confirms what they see:

* **rewind mode** is entered by alt+↑, by Esc Esc on an empty composer, by a message's
  "Rewind to here" button or from the palette. A banner says so and how to leave; the selected
  turn and every turn after it are shown dimmed (what would go). Enter, ``r`` or the banner's
  button rewinds; ``e`` edits, ``f`` forks; Esc leaves with nothing changed. Any other key typed
  there goes to the composer.
* **Esc Esc** clears a draft (ctrl+z brings it back) or, on an empty composer, enters rewind mode
  on the last turn; a single Esc stops a reply that is streaming.

What may be done is what :meth:`~rewindtui.chat.Chat.permissions` says, nothing else: the
transcript renders it, the footer shows only the keys it allows, and a key it refuses says why.
The running turn's controls are in the turn bar above the composer: Stop (Esc, the palette)
asks the server to cancel the turn (``Chat.stop``); a question of the agent (a tool call waiting
for approval) is answered there (alt+y / alt+n); a turn whose stream was cut while the server
still runs it can be followed again, and opening a session whose last turn is still running
follows it at once (``Chat.resume``).

Work runs in separate worker groups (a turn, a rewind or fork, a session switch) and none of them
cancels another unseen: a switch during a reply asks first, during a rewind it waits.
"""

from __future__ import annotations

from urllib.parse import urlsplit

from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.css.query import NoMatches
from textual.screen import Screen
from textual.widgets import Footer, TextArea
from textual.worker import Worker

from rewindtui.chat import Action, Chat
from rewindtui.chat.prompt_history import PromptStore
from rewindtui.client.a2a_client import ClientError
from rewindtui.client.errors import user_message
from rewindtui.model import Change, Item
from rewindtui.tui import interaction
from rewindtui.tui.branches import Branches
from rewindtui.tui.commands import ChatCommands
from rewindtui.tui.composer_memory import ComposerMemory
from rewindtui.tui.drafts import DraftKeeper, DraftStash
from rewindtui.tui.escape_key import EscapeKey
from rewindtui.tui.file_actions import FileActions
from rewindtui.tui.host import finished, sentence
from rewindtui.tui.rewind_choice import RewindChoice, RewindOutcome
from rewindtui.tui.sending import Sending
from rewindtui.tui.session_switch import SessionSwitch
from rewindtui.tui.slash import SlashActions
from rewindtui.tui.turn_actions import TurnActions
from rewindtui.tui.turn_control import TurnControl
from rewindtui.tui.widgets.attachment_bar import AttachmentBar
from rewindtui.tui.widgets.composer import Composer
from rewindtui.tui.widgets.history_note import HistoryNote
from rewindtui.tui.widgets.mode_banner import ModeBanner
from rewindtui.tui.widgets.sessions_panel import SessionsPanel
from rewindtui.tui.widgets.slash_menu import SlashMenu
from rewindtui.tui.widgets.status_line import Status, StatusLine
from rewindtui.tui.widgets.transcript import Transcript
from rewindtui.tui.widgets.turn_bar import TurnBar
from rewindtui.tui.widgets.welcome import Welcome

__all__ = ["ChatScreen", "RewindOutcome"]


class ChatScreen(Screen):
    CSS_PATH = "chat.tcss"
    COMMANDS = Screen.COMMANDS | {ChatCommands}

    BINDINGS = [
        *interaction.bindings("screen"),
        # the same key where rewind is unavailable: not in the footer, and it says why
        Binding("alt+up", "rewind_unavailable", "Rewind…", show=False, id="chat.rewind_mode", tooltip=interaction.BY_ID["chat.rewind_mode"].help),
    ]

    def __init__(self, prompt_store: PromptStore | None = None, drafts: DraftKeeper | None = None) -> None:
        super().__init__()
        self.chat: Chat | None = None
        self.status = Status(turn="connecting…")
        self.rewind_mode = False
        # prompts, the unsent draft across restarts, the draft an edit sets aside
        self.memory = ComposerMemory(
            lambda: self.composer,
            self._history_key,
            lambda text: self.notify(text, title="Draft", timeout=4, markup=False),
            prompts=prompt_store,
            drafts=drafts,
        )
        self.activity: str | None = None  # what we are doing right now ("rewinding…"), shown as the turn state
        self.outcome: str | None = None  # how the last request ended when the conversation can't say ("failed")
        self.turn_worker: Worker | None = None
        self.rewind_worker: Worker | None = None
        self.switch_worker: Worker | None = None
        self.stop_worker: Worker | None = None
        self.branches = Branches(self)  # redo, rewound turns, the turn picker, copy/export, sessions
        self.files = FileActions(self)
        self.turns = TurnControl(self)  # stop, reattach, answer, the turn bar
        self.slash = SlashActions(
            items=lambda: self.chat.conversation.items if self.chat is not None else [],
            selected=lambda: self.transcript.selected() if self.rewind_mode else None,
            preview=self._preview_turn,
            act=self.handle_action,
            run_action=lambda action: self.call_later(self.run_action, action),
            can_undo=lambda: self.branches.can_undo(),
            why_not_undo=lambda: self.branches.why_not_undo(),
            export=lambda fmt: self.branches.export(fmt),
            notify=lambda text, warning: self.say(text, warning=warning),
        )
        self.choice = RewindChoice(
            self, why_not_preview=self.why_not_preview, undo_hint=self.undo_hint, after_layout=self.call_after_refresh
        )
        self.escape = EscapeKey(
            self,
            stop_reply=self.stop_reply,
            leave_preview=self.leave_mode,
            enter_preview=self.enter_rewind_mode,
            restore_stash=self._restore_stash,
            later=self.set_timer,
        )
        self.sending = Sending(
            self,
            self.memory,
            commands=self.slash,
            interrupted=self.turns.interrupted,
            unknown=self.choice.unknown,
            take_attachments=lambda: self.files.bar.take(),
            restore_attachments=lambda parts: self.files.bar.restore(parts),
            hide_banner=lambda: self.banner.hide(),
        )
        self.actions = TurnActions(
            self,
            self.memory,
            preview=self._preview_turn,
            branch_act=lambda action, item: self.branches.act(action, item),
            edit_started=self._edit_started,
            panel_refresh=self._load_sessions,
            bell=lambda: self.app.bell(),
        )
        self.switching = SessionSwitch(
            self,
            stop_reply=self.stop_reply,
            set_aside=self._set_aside_for_switch,
            ask=lambda screen, answered: self.app.push_screen(screen, answered),
            panel_refresh=self._load_sessions,
        )

    def compose(self) -> ComposeResult:
        yield StatusLine(id="status")
        yield SessionsPanel(id="sessions", classes="hidden")
        yield HistoryNote(id="history-note")
        yield Welcome(id="welcome")
        yield Transcript(id="transcript")
        yield ModeBanner(id="banner")
        yield TurnBar(id="turn-bar")
        yield AttachmentBar(id="attachments")
        yield SlashMenu(id="slash-menu")
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

    @property
    def banner(self) -> ModeBanner:
        return self.query_one(ModeBanner)

    @property
    def turn_bar(self) -> TurnBar:
        return self.query_one(TurnBar)

    # -- state ---------------------------------------------------------------------------------
    @property
    def replying(self) -> bool:
        """A reply is streaming in (the turn has not ended)."""
        chat = self.chat
        return chat is not None and not finished(self.turn_worker) and chat.sending and chat.conversation.busy

    @property
    def rewinding(self) -> bool:
        """A rewind, an edit-and-resend or a fork is in flight."""
        chat = self.chat
        return not finished(self.rewind_worker) or (chat is not None and chat.rewinding)

    @property
    def busy(self) -> bool:
        return not finished(self.turn_worker) or self.rewinding or not finished(self.switch_worker)

    # -- wiring a chat -------------------------------------------------------------------------
    def attach(self, chat: Chat) -> None:
        """Show a connected chat (its session already opened)."""
        self.chat = chat
        chat.listener = self._on_change
        caps = chat.client.capabilities
        server = urlsplit(chat.client.config.url)
        self.status.server = server.netloc or chat.client.config.url
        self.status.note = ""
        self.activity = self.outcome = None
        if caps is not None:
            self.status.agent = caps.name
            self.status.dialect = caps.dialect.value
            self.status.rewind = caps.rewind_mode or "unavailable"
        self.show_conversation()

    def show_conversation(self) -> None:
        assert self.chat is not None
        self.leave_mode(focus=False)
        self.transcript.set_conversation(self.chat.conversation)
        self.memory.load()
        self.refresh_status()
        if self.chat.conversation.running_task_id is not None:
            self.reattach()  # the session's last turn is still running on the server: follow it
        if self.chat.conversation.older_token is not None:
            self._load_older()

    @work(group="older", exclusive=True)
    async def _load_older(self) -> None:
        """The open session's older turns, a page at a time, in front of what is shown (the
        history note says they are loading; rewind, edit and fork wait for them)."""
        chat = self.chat
        assert chat is not None
        try:
            await chat.load_older()
        except ClientError as exc:
            self.notify(f"Older turns could not be loaded: {user_message(exc)}", title="Open session", severity="error", timeout=10)

    def _on_change(self, change: Change) -> None:
        assert self.chat is not None
        if self.transcript.conversation is not self.chat.conversation:
            self.leave_mode(focus=False)
            self.transcript.set_conversation(self.chat.conversation)
            self.memory.load()
        else:
            self.transcript.apply_change(change)
            if self.rewind_mode:
                self.show_rewind_banner()
        self.refresh_status()
        self.branches.changed(change)

    def refresh_status(self) -> None:
        chat = self.chat
        if chat is not None:
            session = chat.session
            self.status.session = chat.session_id or ""
            self.status.session_name = session.name if session and session.name else ""
            self.status.turn = self.activity or self.outcome or chat.conversation.turn_state
            self.status.mode = "rewind" if self.rewind_mode else ("edit" if chat.edit else "")
            label = self.branches.undo_label()
            self.status.undo = f"{interaction.keys_of('chat.undo_rewind', self.keymap)}: {label}" if label else ""
            self.status.rewind = chat.rewind_words()
            try:
                self.query_one(Welcome).show_for(
                    not chat.conversation.items and chat.conversation.older_token is None and not chat.sending,
                    self.status.agent,
                    self.keymap,
                )
            except NoMatches:
                return
            try:
                self.turns.show(self.refresh_bindings)
            except NoMatches:
                return  # the screen is being taken down (a worker ending as the app quits)
        self.query_one(StatusLine).show(self.status)

    def show_failure(self, text: str) -> None:
        self.status.turn = "disconnected"
        self.status.note = text
        self.query_one(StatusLine).show(self.status)

    # -- drafts (nothing typed is lost) --------------------------------------------------------
    @property
    def keymap(self) -> dict[str, str]:
        """The user's keymap (binding id → keys): what shown keys follow."""
        return getattr(self.app, "keymap_overrides", {}) or {}

    def keep_draft(self) -> bool:
        return self.memory.keep_draft()

    def _restore_stash(self) -> None:
        self.memory.restore_stash()

    def keep_unsent(self, text: str) -> None:
        self.memory.keep_unsent(text)

    @property
    def stash(self) -> DraftStash:
        return self.memory.stash

    # -- slash commands (rewindtui.tui.slash) ------------------------------------------------------
    def say(self, text: str, *, warning: bool = False) -> None:
        self.notify(text, severity="warning" if warning else "information", timeout=6, markup=False)

    def run_command(self, command: interaction.Command) -> None:
        """A command of the table, from the palette or a slash command."""
        self.slash.run_command(command)

    def _preview_turn(self, index: int) -> None:
        if self.rewind_mode:
            self.transcript.select_turn(index)
        else:
            self.enter_rewind_mode(index)

    def action_export(self, fmt: str) -> None:
        self.branches.export(fmt)

    def action_rename_session(self) -> None:
        session = self.chat.session if self.chat is not None else None
        if session is None:
            self.say("This session has no name to change yet: send a first message.", warning=True)
            return
        self.branches.rename(session)

    # -- prompt history ------------------------------------------------------------------------
    def _history_key(self) -> tuple[str, str] | None:
        chat = self.chat
        if chat is None or not chat.session_id:
            return None
        # the embedded server listens on a new port each start: its drafts and prompts are keyed
        # by what it is (its data dir holds both), not by its address
        stable = getattr(self.app, "server_key", "")
        return stable or chat.client.config.url, chat.session_id

    # -- sending (rewindtui.tui.sending) ---------------------------------------------------------
    @on(Composer.Submitted)
    def _submitted(self, event: Composer.Submitted) -> None:
        self.sending.submitted(event.text)

    # -- the running turn (rewindtui.tui.turn_control) -------------------------------------------
    def stop_reply(self) -> bool:
        return self.turns.stop_reply()

    def action_stop_reply(self) -> None:
        """/stop, the palette's "Stop the reply": says so when there is nothing to stop."""
        if not self.stop_reply():
            self.notify("No reply is streaming in.", title="Stop")

    def reattach(self) -> None:
        self.turns.reattach()

    def action_answer(self, approve: bool) -> None:
        self.turns.answer(approve)

    @on(TurnBar.Stop)
    def _turn_bar_stop(self) -> None:
        self.composer.focus()  # the bar goes away once the turn has ended
        self.stop_reply()

    @on(TurnBar.Answer)
    def _turn_bar_answer(self, event: TurnBar.Answer) -> None:
        self.composer.focus()
        self.action_answer(event.approve)

    @on(TurnBar.Reattach)
    def _turn_bar_reattach(self) -> None:
        self.composer.focus()
        self.reattach()

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "answer":
            chat = self.chat
            return chat is not None and chat.permissions().can_confirm
        if action in ("rewind_mode", "rewind_unavailable"):
            possible = self._why_not_structurally() is None
            return possible if action == "rewind_mode" else not possible
        if action == "undo_rewind":
            return self.branches.can_undo()  # else ctrl+z is the composer's own undo
        return True

    def _why_not_structurally(self) -> str | None:
        """Why neither rewind nor fork can ever be chosen here (not merely now), or None."""
        chat = self.chat
        if chat is None:
            return "Not connected."
        perms = chat.permissions()
        never = [r for r in (perms.rewind_reason, perms.fork_reason) if r and r != perms.busy_reason]
        return never[0] if len(never) == 2 else None

    def action_rewind_unavailable(self) -> None:
        reason = self._why_not_structurally() or "Rewind is unavailable."
        self.notify(sentence(reason), title="Rewind unavailable", severity="warning")

    # -- rewind mode ---------------------------------------------------------------------------
    def why_not(self, action: Action) -> str:
        """Why ``action`` can't run now ("" if it can): the core's permissions gate, the one place
        that decides; the screen adds only the work it has queued that the core cannot see yet."""
        chat = self.chat
        if chat is None:
            return "Not connected."
        if not finished(self.switch_worker):
            return "A session is opening; wait for it."
        if not finished(self.rewind_worker):
            return "A rewind is in flight; wait for it to finish."
        return sentence(chat.why_not(action))

    def why_not_preview(self) -> str:
        """Why no rewind point can be chosen now: neither rewind nor fork allowed, or an edit runs."""
        rewind, fork = self.why_not(Action.REWIND), self.why_not(Action.FORK)
        if rewind and fork:
            return rewind
        if self.chat is not None and self.chat.edit is not None:
            return "You are editing a turn: Enter resends it, Esc cancels the edit."
        return ""

    # -- choosing a rewind point (rewindtui.tui.rewind_choice) -----------------------------------
    def enter_rewind_mode(self, index: int | None = None) -> bool:
        """Show the preview on the turn holding item ``index`` (default: the last turn)."""
        return self.choice.enter(index)

    def show_rewind_banner(self) -> None:
        self.choice.show_banner()

    def leave_mode(self, *, focus: bool = True) -> None:
        self.choice.leave(focus=focus)

    def confirm_rewind(self) -> None:
        self.choice.confirm()

    def rewound(self, outcome: RewindOutcome) -> None:
        self.choice.rewound(outcome)

    def undo_hint(self, outcome: RewindOutcome) -> str:
        """How to undo ``outcome``, for the toast (what the core's one undo names)."""
        return self.branches.undo_hint(outcome)

    def action_undo_rewind(self) -> None:
        self.branches.undo()

    def action_redo(self) -> None:
        self.branches.redo()

    def action_retry(self) -> None:
        """/retry: the failed last turn again, as one clean turn (the model sees its message once)."""
        self.sending.retry()

    def action_toggle_rewound(self) -> None:
        self.branches.toggle_rewound()

    def action_turns(self) -> None:
        self.branches.open_picker()

    def action_copy(self) -> None:
        self.branches.copy()

    # -- message actions -----------------------------------------------------------------------
    @on(Transcript.Action)
    def _message_action(self, event: Transcript.Action) -> None:
        if event.action == "save":
            self.files.save(event.item)
            return
        self.handle_action(event.action, event.item)

    # -- files and the agent card (rewindtui.tui.file_actions) ---------------------------------
    def action_attach(self) -> None:
        self.files.attach()

    def action_save_parts(self) -> None:
        self.files.save()

    def action_show_card(self) -> None:
        self.files.show_card()

    @on(AttachmentBar.Changed)
    def _attachments_changed(self, event: AttachmentBar.Changed) -> None:
        self.composer.attachments_pending = event.count > 0

    def handle_action(self, action: str, item: Item) -> None:
        """A message's button (rewind: the preview), a chord while choosing, /edit, /fork."""
        self.actions.handle(action, item)

    def _edit_started(self, text: str, turns: int) -> None:
        self.sending.edit_turns = turns
        self.composer.set_draft(text)
        self.composer.focus()
        self.banner.show_edit(text, turns)
        self.refresh_status()

    @on(Transcript.Confirm)
    @on(ModeBanner.Confirm)
    def _confirm(self) -> None:
        self.confirm_rewind()

    @on(Transcript.Moved)
    def _moved(self) -> None:
        if self.rewind_mode:
            self.show_rewind_banner()

    @on(Transcript.Leave)
    def _leave_transcript(self) -> None:
        if self.rewind_mode:
            self.escape.left_by_its_own_key()
        self.leave_mode()

    @on(ModeBanner.Cancel)
    def _banner_cancel(self) -> None:
        self.action_escape_mode()

    @on(Transcript.TypeAhead)
    def _type_ahead(self, event: Transcript.TypeAhead) -> None:
        if self.rewind_mode:
            self.leave_mode()
        self.composer.focus()
        self.composer.insert(event.text)

    @on(TextArea.Changed, "#composer")
    def _composer_changed(self) -> None:
        self.query_one(SlashMenu).show_for(self.composer.slash_prefix(), self.keymap)
        if self.rewind_mode and self.composer.text:
            self.leave_mode()  # typing means writing, not choosing a turn
        if self.banner.kind == "hint":
            self.banner.hide()

    def action_rewind_mode(self, step: int) -> None:
        """alt+↑: enter rewind mode on the last turn, or select the turn before; alt+↓: the turn after."""
        if self.rewind_mode:
            self.transcript.focus()
            self.transcript.action_cursor(step)
        elif step < 0:
            self.enter_rewind_mode()

    # -- Escape (rewindtui.tui.escape_key) --------------------------------------------------------
    def action_escape(self) -> None:
        self.escape.press()

    def action_escape_mode(self) -> bool:
        return self.escape.back_out()

    @property
    def cleared_draft(self) -> str:
        return self.escape.cleared_draft

    # -- sessions ------------------------------------------------------------------------------
    def action_toggle_sessions(self) -> None:
        panel = self.sessions
        panel.toggle_class("hidden")
        if panel.has_class("hidden"):
            self.composer.focus()
        else:
            panel.focus()
            self._load_sessions()

    def _load_sessions(self) -> None:
        self.branches.load_sessions()

    @on(SessionsPanel.Rename)
    def _rename_session(self, event: SessionsPanel.Rename) -> None:
        self.branches.rename(event.session)

    @on(SessionsPanel.Delete)
    def _delete_session(self, event: SessionsPanel.Delete) -> None:
        self.branches.delete(event.session)

    @on(SessionsPanel.Open)
    def _open_session(self, event: SessionsPanel.Open) -> None:
        # the chosen session opens and the panel closes: focus is in the composer, and nothing
        # looks focused that is not (a d typed next is text, not a delete)
        self.sessions.add_class("hidden")
        self.composer.focus()
        self.request_switch(event.session_id)

    @on(SessionsPanel.TypeAhead)
    def _panel_type_ahead(self, event: SessionsPanel.TypeAhead) -> None:
        self.sessions.add_class("hidden")
        self.composer.focus()
        self.composer.insert(event.text)

    @on(SessionsPanel.New)
    def _new_from_panel(self) -> None:
        self.request_switch(None)

    @on(SessionsPanel.Close)
    def _close_panel(self) -> None:
        self.sessions.add_class("hidden")
        self.composer.focus()

    def action_new_session(self) -> None:
        self.request_switch(None)

    def request_switch(self, session_id: str | None) -> None:
        self.switching.request(session_id)

    def reload(self) -> None:
        self.switching.reload()

    def _set_aside_for_switch(self) -> None:
        """Before another session opens: an edit ends (its draft back), this session's draft stays with it."""
        chat = self.chat
        if chat is not None and chat.edit is not None:
            chat.cancel_edit()
            self.composer.clear_draft()
            self.banner.hide()
            self._restore_stash()
        self.keep_draft()
