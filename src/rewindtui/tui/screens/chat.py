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

import time
from dataclasses import dataclass
from urllib.parse import urlsplit

from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.css.query import NoMatches
from textual.screen import Screen
from textual.widgets import Footer, TextArea
from textual.worker import Worker

from rewindtui.attachments import Attachment
from rewindtui.chat import Action, Chat, QuestionWaiting, RewindOutcomeUnknown, TurnInterrupted
from rewindtui.client import ClientError
from rewindtui.conversation import Change, Item
from rewindtui.errors import user_message
from rewindtui.prompt_history import PromptHistory, PromptStore
from rewindtui.tui import interaction, slash
from rewindtui.tui.branches import Branches
from rewindtui.tui.commands import ChatCommands
from rewindtui.tui.drafts import DraftKeeper, DraftStash
from rewindtui.tui.file_actions import FileActions
from rewindtui.tui.screens.confirm import ConfirmScreen
from rewindtui.tui.widgets.attachment_bar import AttachmentBar
from rewindtui.tui.widgets.composer import Composer
from rewindtui.tui.widgets.history_note import HistoryNote
from rewindtui.tui.widgets.mode_banner import ModeBanner
from rewindtui.tui.widgets.sessions_panel import SessionsPanel
from rewindtui.tui.widgets.slash_menu import SlashMenu
from rewindtui.tui.widgets.status_line import Status, StatusLine
from rewindtui.tui.widgets.transcript import Permissions, Transcript
from rewindtui.tui.widgets.turn_bar import TurnBar
from rewindtui.tui.widgets.welcome import Welcome

#: Two presses of Escape within this many seconds make an Esc Esc.
DOUBLE_ESCAPE_SECONDS = 0.6


@dataclass(frozen=True)
class RewindOutcome:
    """A confirmed rewind that the server carried out: what the toast reports, and what an undo
    would need (undo comes with server-side redo; see :meth:`ChatScreen.undo_hint`)."""

    session_id: str
    invocation_id: str
    turns: int


def _plural(count: int, word: str) -> str:
    return f"{count} {word}{'' if count == 1 else 's'}"


def _sentence(text: str) -> str:
    """``text`` as a sentence: a first word capitalised (not a name), a full stop."""
    text = text.strip()
    if not text:
        return text
    first = text.split(" ", 1)[0]
    if first.isalpha() and first.islower():  # a word, not a name like "echo-sdk-03"
        text = text[0].upper() + text[1:]
    return text if text.endswith((".", "!", "?")) else text + "."


def _finished(worker: Worker | None) -> bool:
    return worker is None or worker.is_finished


async def _wait_for(worker: Worker | None) -> None:
    """Wait until ``worker`` is done, however it ends."""
    if worker is not None and not worker.is_finished:
        try:
            await worker.wait()
        except Exception:  # its own handler reported the failure; we only waited for it
            pass


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
        self.drafts = drafts  # the session's unsent draft, kept across restarts
        self.stash = DraftStash()  # the draft set aside while an edit uses the composer
        self.cleared_draft = ""  # the draft Esc Esc cleared last (the composer's ctrl+z brings it back)
        self._escape_burst = False  # Esc left a mode: Escs in the same burst do nothing more
        self.chat: Chat | None = None
        self.status = Status(turn="connecting…")
        self.prompt_store = prompt_store
        self.rewind_mode = False
        self._last_escape = 0.0
        self._kept_draft: str | None = None  # what _keep_draft last put in the composer
        self._activity: str | None = None  # what we are doing right now ("rewinding…"), shown as the turn state
        self._outcome: str | None = None  # how the last request ended when the conversation can't say ("failed")
        self._turn_worker: Worker | None = None
        self._rewind_worker: Worker | None = None
        self._switch_worker: Worker | None = None
        self._edit_turns = 0  # turns an edit in progress has set aside
        self._stop_worker: Worker | None = None
        self._answering: bool | None = None  # the answer on its way (approve?), None: none
        self._shown_permissions: tuple[object, ...] | None = None
        self.branches = Branches(self)  # redo, rewound turns, the turn picker, copy/export, sessions
        self.files = FileActions(self)

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
        return chat is not None and not _finished(self._turn_worker) and chat.sending and chat.conversation.busy

    @property
    def rewinding(self) -> bool:
        """A rewind, an edit-and-resend or a fork is in flight."""
        chat = self.chat
        return not _finished(self._rewind_worker) or (chat is not None and chat.rewinding)

    @property
    def busy(self) -> bool:
        return not _finished(self._turn_worker) or self.rewinding or not _finished(self._switch_worker)

    # -- wiring a chat -------------------------------------------------------------------------
    def attach(self, chat: Chat) -> None:
        """Show a connected chat (its session already opened)."""
        self.chat = chat
        chat.listener = self._on_change
        caps = chat.client.capabilities
        server = urlsplit(chat.client.config.url)
        self.status.server = server.netloc or chat.client.config.url
        self.status.note = ""
        self._activity = self._outcome = None
        if caps is not None:
            self.status.agent = caps.name
            self.status.dialect = caps.dialect.value
            self.status.rewind = caps.rewind_mode or "unavailable"
        self._show_conversation()

    def _show_conversation(self) -> None:
        assert self.chat is not None
        self._leave_mode(focus=False)
        self.transcript.set_conversation(self.chat.conversation)
        self._load_prompt_history()
        self._load_draft()
        self._refresh_status()
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
            self._leave_mode(focus=False)
            self.transcript.set_conversation(self.chat.conversation)
            self._load_prompt_history()
        else:
            self.transcript.apply_change(change)
            if self.rewind_mode:
                self._show_rewind_banner()
        self._refresh_status()
        self.branches.changed(change)

    def _refresh_status(self) -> None:
        chat = self.chat
        if chat is not None:
            session = chat.session
            self.status.session = chat.session_id or ""
            self.status.session_name = session.name if session and session.name else ""
            self.status.turn = self._activity or self._outcome or chat.conversation.turn_state
            self.status.mode = "rewind" if self.rewind_mode else ("edit" if chat.edit else "")
            label = self.branches.undo_label()
            self.status.undo = f"{interaction.keys_of('chat.undo_rewind', self.keymap)}: {label}" if label else ""
            try:
                self.query_one(Welcome).show_for(
                    not chat.conversation.items and chat.conversation.older_token is None and not chat.sending,
                    self.status.agent,
                    self.keymap,
                )
            except NoMatches:
                return
            try:
                self._show_turn_state()
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

    def _load_draft(self) -> None:
        """The opened session's kept draft, when the composer holds nothing."""
        key = self._history_key()
        if self.drafts is None or key is None or self.composer.text:
            return
        text = self.drafts.load(*key)
        if text:
            self.composer.set_draft(text)
            self.composer.history.clear()
            self.notify("Your unsent draft of this session is back in the composer.", title="Draft", timeout=4)

    def keep_draft(self) -> bool:
        """Keep the composer's draft for this session (ctrl+q, a session switch); True if kept
        on disk. On a switch the composer then starts from the next session's draft."""
        key = self._history_key()
        text = self.composer.text if not self.stash.holding else self.stash.take()
        if self.drafts is None or key is None:
            return False
        try:
            self.drafts.save(*key, text)
        except OSError as exc:
            self.notify(f"Draft not kept: {exc}", severity="warning", timeout=6)
            return False
        if text:
            self.composer.clear_draft()
            self.composer.history.clear()
        return bool(text)

    def _restore_stash(self) -> None:
        """Put back the draft an edit set aside (before anything typed since)."""
        if self.stash.holding:
            text = self.stash.take()
            if text:
                self._keep_draft(text)

    # -- slash commands (rewindtui.tui.slash) ------------------------------------------------------
    def say(self, text: str, *, warning: bool = False) -> None:
        self.notify(text, severity="warning" if warning else "information", timeout=6, markup=False)

    def run_command(self, command: interaction.Command) -> None:
        if command.id == "chat.undo_rewind" and not self.branches.can_undo():
            self.say("Nothing to undo here: " + (self.branches.why_not_undo() or "no rewind of this session to undo."), warning=True)
            return
        if command.owner == "transcript":
            self.act_on_turn_back(command.action.split("'")[1], 1)
            return
        self.call_later(self.run_action, command.action)

    def _turn_starts(self) -> list[int]:
        items = self.chat.conversation.items if self.chat is not None else []
        starts: list[int] = []
        last: str | None = None
        for index, item in enumerate(items):
            target = item.rewind_target
            if target is not None and target != last:
                starts.append(index)
            last = target if target is not None else last
        return starts

    def preview_turn_back(self, count: int) -> None:
        """/rewind N: the preview of going back N turns (1: the last); Enter then rewinds."""
        starts = self._turn_starts()
        if not starts:
            self.say("Nothing to rewind yet.")
            return
        index = starts[-min(count, len(starts))]
        if self.rewind_mode:
            self.transcript.select_turn(index)
        else:
            self.enter_rewind_mode(index)

    def act_on_turn_back(self, action: str, count: int) -> None:
        """/edit N, /fork N: the selected turn while choosing, else the turn N back."""
        item = self.transcript.selected() if self.rewind_mode else None
        if item is None:
            starts = self._turn_starts()
            if not starts:
                self.say(f"Nothing to {action} yet.")
                return
            item = self.chat.conversation.items[starts[-min(count, len(starts))]] if self.chat is not None else None
        if item is not None:
            self.handle_action(action, item)

    def export_transcript(self, fmt: str) -> None:
        self.branches.export(fmt)

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
        return chat.client.config.url, chat.session_id

    def _load_prompt_history(self) -> None:
        key = self._history_key()
        store = self.prompt_store
        self.composer.prompts = store.load(*key) if store is not None and key is not None else PromptHistory()

    def _remember_prompt(self, text: str) -> None:
        if not self.composer.prompts.add(text):
            return
        key = self._history_key()
        if self.prompt_store is not None and key is not None:
            try:
                self.prompt_store.append(*key, text)
            except OSError as exc:
                self.notify(f"Prompt history not saved: {exc}", severity="warning", timeout=4)

    # -- sending -------------------------------------------------------------------------------
    @on(Composer.Submitted)
    def _submitted(self, event: Composer.Submitted) -> None:
        chat = self.chat
        if self.rewind_mode:
            self._leave_mode()
        text = event.text  # the composer is already empty: it is put back unless it is sent
        if slash.parse(text) is not None:
            if not slash.run(self, text):
                self._keep_draft(text)
            return
        text = slash.literal(text)
        if chat is None:
            self._keep_draft(text)
            self.notify("Not connected yet; your draft is kept.", severity="warning")
            return
        if self.rewinding or not _finished(self._switch_worker):
            self._keep_draft(text)
            self.notify("Wait for the rewind or session switch to finish; your draft is kept.", severity="warning")
            return
        if self.replying:
            self._keep_draft(text)
            self.notify("A reply is still coming in (Esc stops it); your draft is kept.", severity="warning")
            return
        if chat.edit is not None and not text.strip():
            self._keep_draft(text)
            self.notify("An edited turn needs its text (attachments go with the next new message).", severity="warning")
            return
        self._remember_prompt(text)
        self._outcome = None
        self.branches.disarm_undo()  # a new turn: the rewind before it is no longer the last thing done
        if chat.edit is not None:
            # the edit's rewind-and-send: a rewind in flight until the server has answered
            self.banner.hide()
            self._activity = "rewinding…"
            self._refresh_status()
            self._rewind_worker = self._resend(text)
            return
        # a turn that has just ended may still be closing its stream: this send waits for it
        self._turn_worker = self._send(text, self._turn_worker, self.files.bar.take())

    @work(group="turn")
    async def _send(self, text: str, after: Worker | None, attachments: list[Attachment] | None = None) -> None:
        assert self.chat is not None
        await _wait_for(after)
        try:
            await self.chat.send(text, attachments or ())
        except TurnInterrupted as exc:
            self._interrupted(exc)  # the server has the message: no draft to give back
        except QuestionWaiting as exc:  # nothing was sent: the draft comes back, no "failed"
            self._keep_draft(text)
            self.files.bar.restore(attachments or ())
            self.notify(user_message(exc), title="A question waits", severity="warning", timeout=8)
        except ClientError as exc:
            self._outcome = "failed"
            self._keep_draft(text)
            self.files.bar.restore(attachments or ())
            self.notify(f"{user_message(exc)}{self._reconnect_hint(exc)}", title="Send failed", severity="error", timeout=8)
        finally:
            self._refresh_status()

    @work(group="rewind")
    async def _resend(self, text: str) -> None:
        assert self.chat is not None
        try:
            await self.chat.send(text)
        except TurnInterrupted as exc:
            self._interrupted(exc)
            return
        except RewindOutcomeUnknown as exc:
            self._keep_draft(text)
            self._rewind_unknown(exc)
            return
        except ClientError as exc:
            self._outcome = "failed"
            self._keep_draft(text)
            self.notify(user_message(exc), title="Edit and resend failed", severity="error", timeout=8)
            return
        finally:
            self._activity = None
            self._refresh_status()
        self._restore_stash()
        self.notify(f"Rewound {_plural(self._edit_turns, 'turn')} and sent the edited message.", title="Rewind", timeout=6)

    def _keep_draft(self, text: str) -> None:
        """Put a text that was not sent back in the composer: before anything typed since, after
        texts put back before it (several refused in a row keep their order)."""
        current = self.composer.text
        if not current:
            draft = text
        elif current == self._kept_draft:
            draft = f"{current}\n{text}"
        else:
            draft = f"{text}\n{current}"
        self.composer.set_draft(draft)
        self._kept_draft = draft

    def _reconnect_hint(self, exc: ClientError) -> str:
        reason = str(exc).lower()
        if "connect" in reason or "reach" in reason or "connection refused" in reason:
            return " — “Reconnect” (ctrl+p) restarts or reconnects the server."
        return ""

    def stop_reply(self) -> bool:
        """Stop the reply streaming in (Esc, the turn bar's Stop, the palette): the server is asked
        to cancel the turn, and the stream is closed if it does not end within a grace period
        (:meth:`Chat.stop`). The turn then shows as the server ended it (canceled), or as stopped
        here. True if there was a reply to stop."""
        chat = self.chat
        if chat is None or not self.replying:
            return False
        if _finished(self._stop_worker):
            self._activity = "stopping…"
            self._refresh_status()
            self._stop_worker = self._stop()
        return True

    @work(group="stop")
    async def _stop(self) -> None:
        assert self.chat is not None
        try:
            await self.chat.stop()
            await _wait_for(self._turn_worker)  # the turn settles what the view shows
        finally:
            self._activity = None
            self._refresh_status()
        state = self.chat.conversation.turn_state
        self.notify(f"Stopped: the turn is {state}; the view shows what the server holds.", title="Stopped", timeout=5)

    def action_stop_reply(self) -> None:
        """The palette's "Stop the reply": says so when there is nothing to stop."""
        if not self.stop_reply():
            self.notify("No reply is streaming in.", title="Stop")

    # -- the running turn: interrupted, reattach, approve / reject -----------------------------
    def _interrupted(self, exc: TurnInterrupted) -> None:
        """The stream stopped before the turn ended and could not be resumed: the view shows what
        the server holds (the turn marked interrupted), and the notice says so."""
        self._outcome = None
        running = self.chat is not None and self.chat.interrupted_task_id is not None
        hint = " “Reattach” (the turn bar or ctrl+p) follows it again." if running else ""
        self.notify(f"{_sentence(str(exc))}{hint}", title="Interrupted", severity="warning", timeout=10)

    def reattach(self) -> None:
        """Follow again a turn the server still runs (the session's last turn, or one whose
        stream was cut): streamed where the server can, else re-read until it ends."""
        chat = self.chat
        if chat is None or not (chat.conversation.running_task_id or chat.interrupted_task_id):
            self.notify("No turn of this session is running on the server.", title="Reattach")
            return
        if not _finished(self._turn_worker) or self.rewinding:
            return
        self._turn_worker = self._reattach()
        self._refresh_status()

    @work(group="turn")
    async def _reattach(self) -> None:
        assert self.chat is not None
        self.notify("Following the turn the server is still running (Esc stops it).", title="Reattached", timeout=4)
        try:
            await self.chat.resume()
        except ClientError as exc:
            self.notify(user_message(exc), title="Reattach failed", severity="error", timeout=8)
        finally:
            self._refresh_status()

    def action_answer(self, approve: bool) -> None:
        """alt+y / alt+n, the turn bar's buttons: answer the agent's question."""
        chat = self.chat
        if chat is None:
            return
        perms = chat.permissions()
        if not perms.can_confirm or not _finished(self._turn_worker):
            self.notify(perms.confirm_reason or "Wait for the current turn to finish.", title="Approve / reject", severity="warning")
            return
        self._answering = approve
        self._refresh_status()
        self._turn_worker = self._answer(approve)

    @work(group="turn")
    async def _answer(self, approve: bool) -> None:
        assert self.chat is not None
        try:
            await self.chat.confirm(approve)
        except TurnInterrupted as exc:
            self._interrupted(exc)
        except ClientError as exc:
            self.notify(f"Not answered: {user_message(exc)}", title="Approve / reject", severity="error", timeout=8)
        finally:
            self._answering = None
            self._refresh_status()

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

    def _show_turn_state(self) -> None:
        """What the chat's permissions and turn say, everywhere it shows: the transcript's
        buttons, the footer's keys, the turn bar and the history note."""
        chat = self.chat
        assert chat is not None
        perms = chat.permissions()
        self.transcript.set_permissions(Permissions.of(perms))
        question = chat.pending_confirmation() if perms.can_confirm else None
        shown = (perms.can_rewind, perms.can_fork, perms.rewind_reason, perms.fork_reason, question is not None)
        if shown != self._shown_permissions:
            self._shown_permissions = shown
            self.refresh_bindings()
        bar = self.turn_bar
        if self._answering is not None:
            bar.show_answering(self._answering)
        elif self._activity == "stopping…":
            bar.show_stopping()
        elif not _finished(self._turn_worker) and chat.conversation.busy:
            bar.show_replying()
        elif question is not None:
            bar.show_question(question)
        elif chat.interrupted_task_id is not None and not chat.sending:
            bar.show_running("the stream was cut; the server is still running this turn.")
        else:
            bar.hide()
        self.query_one(HistoryNote).show_note(perms.history_note)

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
        self.notify(_sentence(reason), title="Rewind unavailable", severity="warning")

    # -- rewind mode ---------------------------------------------------------------------------
    def why_not(self, action: Action) -> str:
        """Why ``action`` can't run now ("" if it can): the core's permissions gate, the one place
        that decides; the screen adds only the work it has queued that the core cannot see yet."""
        chat = self.chat
        if chat is None:
            return "Not connected."
        if not _finished(self._switch_worker):
            return "A session is opening; wait for it."
        if not _finished(self._rewind_worker):
            return "A rewind is in flight; wait for it to finish."
        return _sentence(chat.why_not(action))

    def _why_not_preview(self) -> str:
        """Why no rewind point can be chosen now: neither rewind nor fork allowed, or an edit runs."""
        rewind, fork = self.why_not(Action.REWIND), self.why_not(Action.FORK)
        if rewind and fork:
            return rewind
        if self.chat is not None and self.chat.edit is not None:
            return "You are editing a turn: Enter resends it, Esc cancels the edit."
        return ""

    def enter_rewind_mode(self, index: int | None = None) -> bool:
        """Enter rewind mode on the turn holding item ``index`` (default: the last turn)."""
        reason = self._why_not_preview()
        if reason:
            self.notify(reason, title="Rewind", severity="warning")
            return False
        transcript = self.transcript
        selected = transcript.select_last_turn() if index is None else transcript.select_turn(index)
        if not selected:
            items = self.chat.conversation.items if self.chat is not None else []
            if not items or self.chat is None:
                self.notify("Nothing to rewind yet.", title="Rewind")
            else:
                # messages, but none the server can rewind to: say why (e.g. no invocation ids)
                reason = self.chat.why_not_rewind_to(items[-1] if index is None else items[index])
                self.notify(_sentence(reason or "Nothing to rewind here."), title="Rewind unavailable", severity="warning")
            return False
        self.rewind_mode = True
        transcript.preview = True
        transcript.focus()
        self._show_rewind_banner()
        self._refresh_status()
        # the banner takes room from the transcript: bring the turn into view again after layout
        self.call_after_refresh(transcript.scroll_to_turn)
        return True

    def _show_rewind_banner(self) -> None:
        transcript = self.transcript
        item = transcript.selected()
        if item is None or self.chat is None:
            self._leave_mode()
            return
        index = transcript.cursor or 0
        chat = self.chat
        self.banner.show_rewind(
            transcript.turns_from(index),
            len(chat.conversation.items) - index,
            chat.conversation.user_text_of(item.rewind_target or "") or item.text,
            blocked=self.why_not(Action.REWIND),
        )

    def _leave_mode(self, *, focus: bool = True) -> None:
        was = self.rewind_mode
        self.rewind_mode = False
        transcript = self.transcript
        transcript.preview = False
        transcript.cursor = None
        if self.banner.kind == "rewind":
            self.banner.hide()
        if was:
            transcript.follow_bottom()
        if focus:
            self.composer.focus()
        self._refresh_status()

    def confirm_rewind(self) -> None:
        """Rewind to before the selected turn (what the preview shows), then leave the mode."""
        if not self.rewind_mode:
            return
        item = self.transcript.selected()
        reason = self.why_not(Action.REWIND)
        if item is None or item.rewind_target is None or reason:
            self.notify(reason or "No turn selected.", title="Rewind", severity="warning")
            return
        self._leave_mode()  # first: keys typed from now on go to the composer
        self._start_rewind(item.rewind_target)

    def _start_rewind(self, invocation_id: str) -> None:
        self._outcome = None
        self._activity = "rewinding…"  # shown before the optimistic cut is drawn
        self._refresh_status()
        self._rewind_worker = self._rewind(invocation_id)

    @work(group="rewind")
    async def _rewind(self, invocation_id: str) -> None:
        chat = self.chat
        assert chat is not None
        before = len(chat.conversation.turn_invocations())
        session_id = chat.session_id or ""
        try:
            await chat.rewind(invocation_id)
        except RewindOutcomeUnknown as exc:
            self._rewind_unknown(exc)
            return
        except ClientError as exc:
            self.notify(user_message(exc), title="Rewind failed", severity="error", timeout=8)
            return
        finally:
            self._activity = None
            self._refresh_status()
        turns = before - len(chat.conversation.turn_invocations())
        self.rewound(RewindOutcome(session_id, invocation_id, turns))

    def _rewind_unknown(self, exc: RewindOutcomeUnknown) -> None:
        """The rewind's answer was lost: say that what is shown was re-read from the server
        (or that it could not be)."""
        if exc.reread:
            text = f"The view was re-read from the server and shows what it holds: {exc}."
        else:
            text = f"{_sentence(str(exc))} The view is as it was before the rewind."
        self.notify(text, title="Rewind: outcome unknown", severity="warning", timeout=10)

    def rewound(self, outcome: RewindOutcome) -> None:
        """After a confirmed rewind: say exactly how much went (never a silent multi-turn loss)."""
        text = f"Rewound {_plural(outcome.turns, 'turn')}"
        hint = self.undo_hint(outcome)
        self.notify(f"{text} — {hint}." if hint else f"{text}.", title="Rewind", timeout=6)
        self._refresh_status()  # the status line names what ctrl+z undoes

    def undo_hint(self, outcome: RewindOutcome) -> str:
        """How to undo ``outcome``, for the toast: ctrl+z, where the server can redo a rewind."""
        return self.branches.undo_hint(outcome)

    def action_undo_rewind(self) -> None:
        self.branches.undo()

    def action_redo(self) -> None:
        self.branches.redo()

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
        """A message's button (rewind: preview it in rewind mode) or a key in rewind mode."""
        if action in ("restore", "fork_branch"):  # a rewound turn's buttons
            self.branches.act(action, item)
            return
        target = item.rewind_target
        if target is None:
            self.app.bell()
            return
        if action == "rewind":
            items = self.chat.conversation.items if self.chat is not None else []
            index = next((i for i in range(len(items) - 1, -1, -1) if items[i] is item), None)
            if index is None:
                return
            if self.rewind_mode:
                self.transcript.select_turn(index)
            else:
                self.enter_rewind_mode(index)
            return
        reason = self.why_not(Action.EDIT if action == "edit" else Action.FORK)
        if reason:
            title = "Rewind unavailable" if action in ("rewind", "edit") else action.capitalize()
            self.notify(reason, title=title, severity="warning")
            return
        if self.rewind_mode:
            self._leave_mode()
        assert self.chat is not None
        if action == "edit":
            if self.chat.edit is not None:
                self.chat.cancel_edit()
            else:
                self.stash.put(self.composer.text)  # the draft waits while the edit uses the composer
                if self.stash.holding and self.composer.text:
                    self.notify("Your draft is set aside; it comes back when the edit is sent or cancelled.", timeout=4)
            before = len(self.chat.conversation.turn_invocations())
            text = self.chat.begin_edit(target)
            self._edit_turns = before - len(self.chat.conversation.turn_invocations())
            self.composer.set_draft(text)
            self.composer.focus()
            self.banner.show_edit(text, self._edit_turns)
            self._refresh_status()
        elif action == "fork":
            self._activity = "forking…"
            self._refresh_status()
            self._rewind_worker = self._fork(target)

    @work(group="rewind")
    async def _fork(self, invocation_id: str) -> None:
        assert self.chat is not None
        original = self.chat.session_id
        try:
            session = await self.chat.fork(invocation_id)
        except ClientError as exc:
            self.notify(user_message(exc), title="Fork failed", severity="error", timeout=8)
            return
        finally:
            self._activity = None
            self._refresh_status()
        self._show_conversation()
        self.notify(f"Forked into “{session.name or session.id}”; the original ({(original or '')[:8]}) is in the sessions panel (F2).")
        if not self.sessions.has_class("hidden"):
            self._load_sessions()

    @on(Transcript.Confirm)
    @on(ModeBanner.Confirm)
    def _confirm(self) -> None:
        self.confirm_rewind()

    @on(Transcript.Moved)
    def _moved(self) -> None:
        if self.rewind_mode:
            self._show_rewind_banner()

    @on(Transcript.Leave)
    def _leave_transcript(self) -> None:
        if self.rewind_mode:
            self._escape_burst = True
            self._last_escape = time.monotonic()
        self._leave_mode()

    @on(ModeBanner.Cancel)
    def _banner_cancel(self) -> None:
        self.action_escape_mode()

    @on(Transcript.TypeAhead)
    def _type_ahead(self, event: Transcript.TypeAhead) -> None:
        if self.rewind_mode:
            self._leave_mode()
        self.composer.focus()
        self.composer.insert(event.text)

    @on(TextArea.Changed, "#composer")
    def _composer_changed(self) -> None:
        self.query_one(SlashMenu).show_for(self.composer.slash_prefix(), self.keymap)
        if self.rewind_mode and self.composer.text:
            self._leave_mode()  # typing means writing, not choosing a turn
        if self.banner.kind == "hint":
            self.banner.hide()

    def action_rewind_mode(self, step: int) -> None:
        """alt+↑: enter rewind mode on the last turn, or select the turn before; alt+↓: the turn after."""
        if self.rewind_mode:
            self.transcript.focus()
            self.transcript.action_cursor(step)
        elif step < 0:
            self.enter_rewind_mode()

    # -- Escape --------------------------------------------------------------------------------
    def action_escape(self) -> None:
        now = time.monotonic()
        burst = self._escape_burst and now - self._last_escape <= DOUBLE_ESCAPE_SECONDS
        if self.stop_reply():
            self._last_escape = 0.0
            return
        if self.action_escape_mode():
            self._last_escape = now
            return
        if burst:
            self._last_escape = now  # Esc backs out one level: the rest of a burst re-arms nothing
            return
        self._escape_burst = False
        if now - self._last_escape > DOUBLE_ESCAPE_SECONDS:
            self._last_escape = now
            draft = bool(self.composer.text)
            self.banner.show_hint("Esc again clears the draft" if draft else "Esc again: choose a turn to rewind to")
            self.set_timer(DOUBLE_ESCAPE_SECONDS, self._end_hint)
            return
        self._last_escape = 0.0
        if self.banner.kind == "hint":
            self.banner.hide()
        if self.composer.text:
            self.cleared_draft = self.composer.clear_draft()  # kept: ctrl+z brings it back
            self.notify("Draft cleared; ctrl+z brings it back.", timeout=3)
        else:
            self.enter_rewind_mode()

    def action_escape_mode(self) -> bool:
        """Leave rewind mode or cancel an edit (nothing changes on the server). True if it did."""
        chat = self.chat
        if self.rewind_mode:
            self._leave_mode()
            self._escape_burst = True
            return True
        if chat is not None and chat.edit is not None and _finished(self._rewind_worker):
            chat.cancel_edit()
            self.composer.clear_draft()
            self.banner.hide()
            self._escape_burst = True
            self._restore_stash()
            self._refresh_status()
            self.notify("Edit cancelled; the conversation and your draft are back as they were.")
            return True
        return False

    def _end_hint(self) -> None:
        if self.banner.kind == "hint" and time.monotonic() - self._last_escape >= DOUBLE_ESCAPE_SECONDS:
            self.banner.hide()

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
        """Open another session (None: a new one) without dropping work unseen: during a reply,
        ask; during a rewind or fork, open it once that is done."""
        if self.chat is None:
            return
        if self.rewinding:
            self.notify("Opening it once the rewind in flight is done.", title="Sessions")
            self._switch_worker = self._switch(session_id, self._rewind_worker)
            return
        if self.replying:

            def answered(go: bool | None) -> None:
                if go:
                    self.stop_reply()
                    self._switch_worker = self._switch(session_id, self._turn_worker)

            self.app.push_screen(
                ConfirmScreen(
                    "A reply is still coming in",
                    "Leave this session anyway? Its stream stops here; the server may still finish the turn, "
                    "and reopening the session shows what it kept.",
                    go="Stop it and switch",
                    purpose="switch",
                ),
                answered,
            )
            return
        self._switch_worker = self._switch(session_id, self._turn_worker)

    @work(group="session", exclusive=True)
    async def _switch(self, session_id: str | None, after: Worker | None = None) -> None:
        chat = self.chat
        if chat is None:
            return
        await _wait_for(after)
        if chat.edit is not None:
            chat.cancel_edit()
            self.composer.clear_draft()
            self.banner.hide()
            self._restore_stash()
        self.keep_draft()  # this session's draft stays with it
        self._activity = "opening…"
        self._refresh_status()
        try:
            await chat.open(session_id)
        except ClientError as exc:
            self.notify(user_message(exc), title="Open session", severity="error")
            return
        finally:
            self._activity = None
            self._outcome = None
            self._refresh_status()
        self._show_conversation()
        if not self.sessions.has_class("hidden"):
            self._load_sessions()
        self.composer.focus()

    def reload(self) -> None:
        """Re-read this session from the server (what it holds is the truth)."""
        if self.busy:
            self.notify("Wait for the current request to finish.", severity="warning")
            return
        self._switch_worker = self._reload()

    @work(group="session", exclusive=True)
    async def _reload(self) -> None:
        chat = self.chat
        if chat is None:
            return
        self._activity = "opening…"
        self._refresh_status()
        try:
            await chat.refresh()
        except ClientError as exc:
            self.notify(user_message(exc), title="Reload", severity="error")
        finally:
            self._activity = None
            self._outcome = None
            self._refresh_status()
