"""The main screen: status line, sessions panel, transcript, mode banner, turn bar, composer, footer.

It drives a :class:`~rewindtui.chat.Chat` (the same code the headless commands use); the chat
reports conversation changes, which the transcript draws incrementally. The screen composes the
widgets, holds the bindings (from the interaction table, :mod:`rewindtui.tui.interaction`) and
hands each key, click and message to the feature it belongs to: each feature is a plain class over
the screen as a small host (:class:`~rewindtui.tui.host.ScreenHost`) and the callables it is given
(the table of them is in ``docs/architecture.md``). What stays here is what only the screen can
hold: the features made and wired to each other, the ``action_*`` methods the bindings, slash
commands and palette run, one message handler per feature, and the host's members. Code outside
calls a feature through its attribute (``screen.turns``, ``screen.memory``, ``screen.switching``).

Every server operation a feature starts runs through one runner (``ops``,
:mod:`rewindtui.tui.operations`): it asks the gate, says what runs, runs it in its worker group (a
turn, a rewind or fork, a session switch, a stop: none cancels another unseen -- a switch during a
reply asks first, during a rewind it waits), maps its error to words once and shows the core's
outcome. What runs is the runner's state; the screen reads it. The chat's changes go straight to
the view (``chat_view``), which draws them and tells the features that follow them.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from textual import events, on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.css.query import NoMatches
from textual.screen import Screen
from textual.widgets import TextArea

from rewindtui.chat import Action, Chat
from rewindtui.chat.prompt_history import PromptStore
from rewindtui.model import Item
from rewindtui.tui import interaction
from rewindtui.tui.branches import Branches
from rewindtui.tui.chat_view import ChatView
from rewindtui.tui.commands import ChatCommands
from rewindtui.tui.composer_memory import ComposerMemory
from rewindtui.tui.copy_export import CopyExport
from rewindtui.tui.drafts import DraftKeeper
from rewindtui.tui.escape_key import EscapeKey
from rewindtui.tui.file_actions import FileActions
from rewindtui.tui.host import sentence
from rewindtui.tui.interrupt_key import InterruptKey
from rewindtui.tui.message_queue import MessageQueue
from rewindtui.tui.operations import Operations
from rewindtui.tui.rewind_choice import RewindChoice
from rewindtui.tui.screen_gate import ScreenGate
from rewindtui.tui.search_control import SearchControl
from rewindtui.tui.sending import Sending
from rewindtui.tui.session_switch import SessionSwitch
from rewindtui.tui.sessions_control import PanelMessage, SessionsControl
from rewindtui.tui.slash import SlashActions
from rewindtui.tui.turn_actions import TurnActions
from rewindtui.tui.turn_control import TurnControl
from rewindtui.tui.widgets.attachment_bar import AttachmentBar
from rewindtui.tui.widgets.composer import Composer
from rewindtui.tui.widgets.history_note import HistoryNote
from rewindtui.tui.widgets.key_footer import KeyFooter
from rewindtui.tui.widgets.mode_banner import ModeBanner
from rewindtui.tui.widgets.new_below import NewBelow
from rewindtui.tui.widgets.queued_bar import QueuedBar
from rewindtui.tui.widgets.search_bar import SearchBar
from rewindtui.tui.widgets.sessions_panel import SessionsPanel
from rewindtui.tui.widgets.slash_menu import SlashMenu
from rewindtui.tui.widgets.status_line import Status, StatusLine
from rewindtui.tui.widgets.transcript import Transcript
from rewindtui.tui.widgets.turn_bar import TurnBar
from rewindtui.tui.widgets.welcome import Welcome

__all__ = ["ChatScreen"]


class ChatScreen(Screen):
    CSS_PATH = "chat.tcss"
    #: what the screen focuses when shown with nothing focused (Textual's default, the first
    #: focusable widget, is the hidden sessions panel: the first frame's footer showed its keys,
    #: and was built again for the composer's)
    AUTO_FOCUS = "#composer"
    COMMANDS = Screen.COMMANDS | {ChatCommands}

    BINDINGS = [
        *interaction.bindings("screen"),
        # the same key where rewind is unavailable: not in the footer, and it says why
        Binding(
            "alt+up",
            "rewind_unavailable",
            "Rewind…",
            show=False,
            id="chat.rewind_mode",
            tooltip=interaction.BY_ID["chat.rewind_mode"].help,
        ),
    ]

    def __init__(
        self,
        prompt_store: PromptStore | None = None,
        drafts: DraftKeeper | None = None,
        queued: DraftKeeper | None = None,
    ) -> None:
        super().__init__()
        self.chat: Chat | None = None
        #: the one way an action runs: the gate, what is running (its workers, "rewinding…"), the
        #: error words, the core's outcome (rewindtui.tui.operations)
        self.ops = Operations(self)
        # the features, each over this screen as a small host (tui/host.py) and the callables it is given
        self.memory = ComposerMemory(  # prompts, the unsent draft across restarts, the draft an edit sets aside
            lambda: self.composer,
            self._history_key,
            lambda text: self.notify(text, title="Draft", timeout=4, markup=False),
            prompts=prompt_store,
            drafts=drafts,
        )
        # messages sent during a reply wait here, kept on disk like drafts (rewindtui.tui.message_queue)
        self.queue = MessageQueue(
            self._history_key, store=queued, changed=self._queue_changed, say=lambda text: self.say(text, warning=True)
        )
        self.memory.loaded = self._queue_loaded
        #: a session was shown (the app remembers it: a restart opens it again)
        self.opened: Callable[[], None] = lambda: None
        # stop, reattach, answer, the turn bar; what was queued behind a followed turn goes after it
        self.turns = TurnControl(self, followed=lambda state: self.sending.after_followed(state))
        self.gate = ScreenGate(
            self, can_undo=lambda: bool(self.queue) or self.branches.can_undo()
        )  # what may be done now: the chat's gate
        self.switching = SessionSwitch(
            self,
            stop_reply=self.turns.stop_reply,
            set_aside=lambda: self.sending.set_aside(),
            ask=self._ask,
            panel_refresh=lambda: self.panel.load(),
        )
        self.panel = SessionsControl(self, ask=self._ask, switch=self.switching.request)  # the sessions panel (F2)
        self.branches = Branches(  # redo, undo, rewound turns, the turn picker
            self,
            why_not_preview=self.gate.why_not_preview,
            preview=self.enter_rewind_mode,
            act_on_turn=self.handle_action,
            ask=self._ask,
            turn_ended=self.panel.refresh,
        )
        self.search = SearchControl(
            self, rewound=self.branches, bar=lambda: self.query_one(SearchBar), later=self.set_timer
        )  # ctrl+f
        self.exports = CopyExport(self, ask=self._ask, clipboard=lambda text: self.app.copy_to_clipboard(text))
        self.files = FileActions(self)
        self.choice = RewindChoice(  # choosing a rewind point, and the rewind
            self,
            why_not_preview=self.gate.why_not_preview,
            after_layout=self.call_after_refresh,
            left_by_key=lambda: self.escape.left_by_its_own_key(),
            branch_act=self.branches.act,
            with_queue=lambda rewind: self.sending.before_rewind(rewind),
        )
        self.slash = SlashActions(
            items=lambda: self.chat.conversation.items if self.chat is not None else [],
            selected=lambda: self.transcript.selected() if self.rewind_mode else None,
            preview=self.choice.preview,
            act=self.handle_action,
            run_action=lambda action: self.call_later(self.run_action, action),
            can_undo=self.branches.can_undo,
            why_not_undo=self.branches.why_not_undo,
            export=self.exports.export,
            notify=lambda text, warning: self.say(text, warning=warning),
            search=lambda text: self.search.open(text or None),
            loading_older=lambda: self.chat is not None and self.chat.conversation.older_token is not None,
        )
        self.escape = EscapeKey(
            self,
            stop_reply=self.turns.stop_reply,
            leave_preview=self.leave_mode,
            enter_preview=self.enter_rewind_mode,
            restore_stash=self.memory.restore_stash,
            later=self.set_timer,
            cleared=self.memory.forget_kept_draft,
        )
        self.interrupt = InterruptKey(  # ctrl+c: stop, back out, clear the draft, or quit on a second press
            self,
            stop_reply=self.turns.stop_reply,
            back_out=self.escape.back_out,
            quit=lambda: self.call_later(self.app.run_action, "quit"),
            later=self.set_timer,
            cleared=self.memory.forget_kept_draft,
        )
        self.sending = Sending(
            self,
            self.memory,
            commands=self.slash,
            take_attachments=lambda: self.files.bar.take(),
            restore_attachments=lambda parts: self.files.bar.restore(parts),
            hide_banner=lambda: self.banner.hide(),
            queue=self.queue,
            ask=self._ask,
        )
        self.actions = TurnActions(  # a turn's buttons and chords: rewind, edit, fork, restore
            self,
            self.memory,
            preview=self.choice.preview,
            branch_act=self.branches.act,
            edit_started=self.sending.edit_started,
            panel_refresh=lambda: self.panel.load(),
            bell=lambda: self.app.bell(),
        )
        self.view = ChatView(
            self,
            self.memory,
            previewed=self.choice.moved,
            changed=(self.branches.changed, self.search.changed),
            undo_label=lambda: "take back the last queued message" if self.queue else self.branches.undo_label(),
            show_turn=lambda: self.turns.show(self.refresh_bindings),
            reattach=self.turns.reattach,
            status_line=lambda: self.query_one(StatusLine),
            welcome=lambda: self.query_one(Welcome),
            new_below=lambda: self.query_one(NewBelow),
        )

    def _ask(self, screen: Any, answered: Any) -> None:
        """Push a modal screen; ``answered`` gets what it is dismissed with."""
        self.app.push_screen(screen, answered)

    def compose(self) -> ComposeResult:
        yield StatusLine(id="status")
        yield SessionsPanel(id="sessions", classes="hidden")
        yield HistoryNote(id="history-note")
        yield Welcome(id="welcome")
        yield Transcript(id="transcript")
        yield NewBelow(id="new-below")
        yield QueuedBar(id="queued")
        yield ModeBanner(id="banner")
        yield SearchBar(id="search", back_to="#composer")
        yield TurnBar(id="turn-bar")
        yield AttachmentBar(id="attachments")
        yield SlashMenu(id="slash-menu")
        yield Composer(id="composer")
        yield KeyFooter()

    def on_mount(self) -> None:
        self.query_one(StatusLine).show(self.status)
        self.composer.take_queued = self._take_queued
        self.composer.menu = menu = self.query_one(SlashMenu)
        menu.available = self.offers  # only what the gate allows now
        self.composer.focus()

    def on_resize(self, event: events.Resize) -> None:
        self.query_one(Welcome).fit(event.size.height)

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

    # -- state: what runs is the runner's (rewindtui.tui.operations), read here -----------------
    @property
    def rewind_mode(self) -> bool:
        """The rewind preview is shown (rewindtui.tui.rewind_choice)."""
        return self.choice.active

    @property
    def replying(self) -> bool:
        """A reply is streaming in (the turn has not ended)."""
        return self.ops.replying

    @property
    def rewinding(self) -> bool:
        """A rewind, an edit-and-resend, a fork, an undo or a redo is in flight."""
        return self.ops.rewinding

    @property
    def busy(self) -> bool:
        return self.ops.busy

    @property
    def keymap(self) -> dict[str, str]:
        """The user's keymap (binding id → keys): what shown keys follow."""
        return getattr(self.app, "keymap_overrides", {}) or {}

    # -- showing the chat (rewindtui.tui.chat_view) ----------------------------------------------
    @property
    def status(self) -> Status:
        return self.view.status

    def attach(self, chat: Chat) -> None:
        """Show a connected chat (its session already opened)."""
        self.view.attach(chat)
        if self.panel.shown:
            self.panel.load()  # F2 pressed while connecting: the list fills now

    def show_conversation(self) -> None:
        self.view.show()

    @on(Transcript.Following)
    def _following(self, event: Transcript.Following) -> None:
        if event.following:
            self.query_one(NewBelow).show_marker(False)

    def follow_new_turn(self) -> None:
        """A message was sent: the view goes to the bottom and follows the reply."""
        self.transcript.follow_bottom()
        self.query_one(NewBelow).show_marker(False)

    def refresh_status(self) -> None:
        self.view.refresh()

    # -- drafts and prompts (rewindtui.tui.composer_memory): kept per server and session ----------
    def _history_key(self) -> tuple[str, str] | None:
        chat = self.chat
        if chat is None or not chat.session_id:
            return None
        # the embedded server listens on a new port each start: its drafts and prompts are keyed
        # by what it is (its data dir holds both), not by its address
        stable = getattr(self.app, "server_key", "")
        return stable or chat.client.config.url, chat.session_id

    # -- what may be done now (rewindtui.tui.screen_gate) ----------------------------------------
    def why_not(self, action: Action) -> str:
        return self.gate.why_not(action)

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        return self.gate.shows_key(action)

    def action_rewind_unavailable(self) -> None:
        reason = self.gate.why_never_rewind() or "Rewind is unavailable."
        self.notify(sentence(reason), title="Rewind unavailable", severity="warning")

    # -- slash commands, the palette (rewindtui.tui.slash) ----------------------------------------
    def say(self, text: str, *, warning: bool = False) -> None:
        self.notify(text, severity="warning" if warning else "information", timeout=6, markup=False)

    def offers(self, command: interaction.Command) -> bool:
        """Whether the palette and the slash menu offer ``command`` now: the gate allows it."""
        if command.id == "chat.undo_rewind":
            return self.gate.can_undo()
        if command.id == "chat.rewind_mode":
            return not self.gate.why_not_preview()
        return self.ops.offers(command.id)

    @on(Composer.Submitted)
    def _submitted(self, event: Composer.Submitted) -> None:
        self.composer.taken()
        self.sending.submitted(event.text)

    @on(Composer.PageRequested)
    def _page(self, event: Composer.PageRequested) -> None:
        self.transcript.action_page(event.direction)

    @on(TextArea.Changed, "#composer")
    def _composer_changed(self) -> None:
        self.composer.update_menu(self.keymap)
        if self.rewind_mode and self.composer.text:
            self.leave_mode()  # typing means writing, not choosing a turn
        if self.banner.kind == "hint":
            self.banner.hide()

    def action_retry(self) -> None:
        """/retry: the failed last turn again, as one clean turn (the model sees its message once)."""
        self.sending.retry()

    # -- the running turn (rewindtui.tui.turn_control) -------------------------------------------
    def action_stop_reply(self) -> None:
        """/stop, the palette's "Stop the reply": says so when there is nothing to stop."""
        if not self.turns.stop_reply():
            self.notify("No reply is streaming in.", title="Stop")

    def action_answer(self, approve: bool) -> None:
        self.turns.answer(approve)

    @on(TurnBar.Stop)
    @on(TurnBar.Answer)
    @on(TurnBar.Reattach)
    def _turn_bar(self, event: TurnBar.Stop | TurnBar.Answer | TurnBar.Reattach) -> None:
        self.composer.focus()  # the bar goes away once the turn has ended
        if isinstance(event, TurnBar.Answer):
            self.turns.answer(event.approve)
        elif isinstance(event, TurnBar.Stop):
            self.turns.stop_reply()
        else:
            self.turns.reattach()

    # -- choosing a rewind point (rewindtui.tui.rewind_choice), Esc (rewindtui.tui.escape_key) ----
    def enter_rewind_mode(self, index: int | None = None) -> bool:
        """Show the preview on the turn holding item ``index`` (default: the last turn). Handed to
        the branches and Esc before the rewind choice exists (it needs the branches): bound late."""
        return self.choice.enter(index)

    def leave_mode(self, *, focus: bool = True) -> None:
        self.choice.leave(focus=focus)

    def action_rewind_mode(self, step: int) -> None:
        self.choice.step(step)

    @on(Transcript.Confirm)
    @on(ModeBanner.Confirm)
    @on(Transcript.Leave)
    @on(Transcript.TypeAhead)
    def _choosing(
        self, event: Transcript.Confirm | ModeBanner.Confirm | Transcript.Leave | Transcript.TypeAhead
    ) -> None:
        self.choice.handle(event)

    @on(Transcript.Moved)
    def _moved(self) -> None:
        self.choice.moved()
        self.refresh_bindings()  # Enter reads Rewind or Restore as the turn chosen is

    @on(ModeBanner.Cancel)
    def _banner_cancel(self) -> None:
        self.escape.back_out()

    def action_escape(self) -> None:
        self.escape.press()

    # -- ctrl+c, ctrl+d, /quit (rewindtui.tui.interrupt_key) --------------------------------------
    def action_interrupt(self) -> None:
        self.interrupt.press()

    @on(Composer.EndOfInput)
    def _end_of_input(self) -> None:
        self.interrupt.end_of_input()

    # -- a turn's actions (rewindtui.tui.turn_actions), branches (rewindtui.tui.branches) ----------
    def handle_action(self, action: str, item: Item) -> None:
        """A message's button (rewind: the preview), a chord while choosing, /edit, /fork. Handed to
        the branches and slash commands before the turn actions exist (they need both): bound late."""
        self.actions.handle(action, item)

    @on(Transcript.Action)
    def _message_action(self, event: Transcript.Action) -> None:
        if event.action == "save":
            self.files.save(event.item)
        else:
            self.handle_action(event.action, event.item)

    def action_undo_rewind(self) -> None:
        if self.sending.take_back_queued():  # a queued message first: the newest thing done
            return
        self.branches.undo()

    # -- queued messages (rewindtui.tui.message_queue) ----------------------------------------------
    def _queue_changed(self) -> None:
        try:
            self.query_one(QueuedBar).show_queue(self.queue.texts)
        except NoMatches:
            return  # not composed yet, or being taken down
        self.refresh_bindings()
        if self.chat is not None:
            self.refresh_status()  # the status names what ctrl+z does now

    def _queue_loaded(self) -> None:
        """A session's memory was loaded: its queue as kept; one kept from before a restart is
        not sent unasked. The same session shown again keeps the queue it has (and asks nothing)."""
        self.opened()
        if self.queue.load() and self.queue and not self.replying:
            self.call_later(lambda: self.sending.queue_left("", restored=True))

    def _take_queued(self) -> str | None:
        """↑ on an empty composer with messages queued: the last one back to edit."""
        text = self.queue.take_last()
        if text is not None:
            self.notify(
                "Taken out of the queue: edit it and press Enter, or ctrl+c to drop it.", title="Queued", timeout=4
            )
        return text

    def action_redo(self) -> None:
        self.branches.redo()

    def action_toggle_rewound(self) -> None:
        self.branches.toggle_rewound()

    def action_turns(self) -> None:
        self.branches.open_picker()

    # -- search (rewindtui.tui.search_control) ---------------------------------------------------
    def action_search(self) -> None:
        self.search.open()

    @on(SearchBar.Changed)
    @on(SearchBar.Step)
    @on(SearchBar.Closed)
    def _search(self, event: SearchBar.Changed | SearchBar.Step | SearchBar.Closed) -> None:
        self.search.handle(event)

    # -- copy, export, files and the agent card (rewindtui.tui.copy_export, file_actions) ----------
    def action_copy(self) -> None:
        self.exports.copy()

    def action_export(self, fmt: str) -> None:
        self.exports.export(fmt)

    def action_attach(self) -> None:
        self.files.attach()

    def action_save_parts(self) -> None:
        self.files.save()

    def action_show_card(self) -> None:
        self.files.show_card()

    def action_show_state(self) -> None:
        from rewindtui.tui.screens.state import open_state  # the agent's session state (/state)

        open_state(self)

    def action_compact(self) -> None:
        from rewindtui.tui.compact import start_compact  # the turns so far into one summary turn

        start_compact(self)

    def action_kagent(self) -> None:
        from rewindtui.tui.screens.kagent import open_kagent  # kagent 1.0's checkpoints and shares

        open_kagent(self)

    @on(AttachmentBar.Changed)
    def _attachments_changed(self, event: AttachmentBar.Changed) -> None:
        self.composer.attachments_pending = event.count > 0

    # -- sessions (rewindtui.tui.sessions_control, session_switch) --------------------------------
    def action_toggle_sessions(self) -> None:
        self.panel.toggle()

    def action_rename_session(self) -> None:
        self.panel.rename_open()

    @on(SessionsPanel.Open)
    @on(SessionsPanel.New)
    @on(SessionsPanel.Close)
    @on(SessionsPanel.TypeAhead)
    @on(SessionsPanel.Rename)
    @on(SessionsPanel.Delete)
    def _panel(self, event: PanelMessage) -> None:
        self.panel.handle(event)

    def action_new_session(self) -> None:
        self.switching.request(None)

    def action_clear_session(self) -> None:
        """/clear: a new, empty session; the one left stays on the server (F2 lists it)."""
        chat = self.chat
        self.switching.clear((self.status.session_name or (chat.session_id or "")[:8]) if chat is not None else "")
