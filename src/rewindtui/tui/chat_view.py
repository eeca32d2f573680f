"""Showing the chat on the screen: a connected chat attached, its conversation drawn (the
transcript follows the model's changes), older turns loaded in front, and the status line, welcome,
turn bar and footer kept to what the chat says now."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from urllib.parse import urlsplit

from textual.css.query import NoMatches

from rewindtui.chat import Chat
from rewindtui.client.a2a_client import ClientError
from rewindtui.client.errors import user_message
from rewindtui.model import Change
from rewindtui.tui import interaction
from rewindtui.tui.composer_memory import ComposerMemory
from rewindtui.tui.host import ScreenHost
from rewindtui.tui.widgets.new_below import NewBelow
from rewindtui.tui.widgets.status_line import Status, StatusLine
from rewindtui.tui.widgets.welcome import Welcome


class ChatView:
    def __init__(
        self,
        host: ScreenHost,
        memory: ComposerMemory,
        *,
        previewed: Callable[[], None],
        changed: Sequence[Callable[[Change], None]],
        undo_label: Callable[[], str],
        show_turn: Callable[[], None],
        reattach: Callable[[], None],
        status_line: Callable[[], StatusLine],
        welcome: Callable[[], Welcome],
        new_below: Callable[[], NewBelow],
    ) -> None:
        self.host = host
        self.memory = memory
        self.previewed = previewed  # the rewind preview's banner counts what would go again
        self.changed = changed  # after the view has followed a change (rewound turns, titles; the search)
        self.undo_label = undo_label  # what ctrl+z undoes now, in words ("": nothing)
        self.show_turn = show_turn  # the turn bar, the transcript's buttons, the footer's keys
        self.reattach = reattach
        self.status_line = status_line
        self.welcome = welcome
        self.new_below = new_below
        self.status = Status(turn="connecting…")

    def attach(self, chat: Chat) -> None:
        """Show a connected chat (its session already opened)."""
        host = self.host
        host.chat = chat
        chat.listener = self.follow  # one path from the core's changes to the widgets
        caps = chat.client.capabilities
        server = urlsplit(chat.client.config.url)
        self.status.server = server.netloc or chat.client.config.url
        self.status.note = ""
        host.ops.reset()
        if caps is not None:
            self.status.agent = caps.name
            self.status.dialect = caps.dialect.value
            self.status.rewind = caps.rewind_mode or "unavailable"
        self.show()

    def show(self) -> None:
        """Draw the chat's conversation afresh (a session opened, re-read, forked)."""
        host = self.host
        chat = host.chat
        assert chat is not None
        host.leave_mode(focus=False)
        if chat.edit is None and self.memory.stash.holding:
            # an edit ended under the screen (a reconnect opened the session afresh): no "Enter
            # resends" any more, and the draft it set aside comes back before the edit's text
            host.banner.hide()
            self.memory.restore_stash()
        host.transcript.set_conversation(chat.conversation)
        self.memory.load()
        self.refresh()
        if chat.conversation.running_task_id is not None:
            self.reattach()  # the session's last turn is still running on the server: follow it
        if chat.conversation.older_token is not None:
            self.host.run_worker(self._load_older, group="older", exclusive=True)

    async def _load_older(self) -> None:
        """The open session's older turns, a page at a time, in front of what is shown (the
        history note says they are loading; rewind, edit and fork wait for them)."""
        chat = self.host.chat
        assert chat is not None
        try:
            await chat.load_older()
        except ClientError as exc:
            self.host.notify(
                f"Older turns could not be loaded: {user_message(exc)}",
                title="Open session",
                severity="error",
                timeout=10,
            )

    def follow(self, change: Change) -> None:
        """A change of the chat's conversation (or a new conversation): the chat's listener, straight
        to the widgets (the transcript, the preview's banner, the status, the "new below" marker)
        and the features that follow changes (rewound turns, the search)."""
        host = self.host
        chat = host.chat
        assert chat is not None
        if host.transcript.conversation is not chat.conversation:
            host.leave_mode(focus=False)
            host.transcript.set_conversation(chat.conversation)
            self.memory.load()
        else:
            host.transcript.apply_change(change)
            self.previewed()
        self.refresh()
        for changed in self.changed:
            changed(change)
        if (
            not (host.transcript.follow or host.rewind_mode)
            and not change.prepended
            and (change.first is not None or change.updated)
        ):
            self.new_below().show_marker(True)  # the user scrolled up: say there is more

    def refresh(self) -> None:
        chat = self.host.chat
        status = self.status
        if chat is not None:
            session = chat.session
            status.session = chat.session_id or ""
            status.session_name = session.name if session and session.name else ""
            status.turn = self.host.ops.activity or self.host.ops.outcome or chat.conversation.turn_state
            status.mode = "rewind" if self.host.rewind_mode else ("edit" if chat.edit else "")
            self.host.composer.editing_turn(chat.edit is not None)
            label = self.undo_label()
            status.undo = f"{interaction.keys_of('chat.undo_rewind', self.host.keymap)}: {label}" if label else ""
            redo = chat.redo_label()
            status.redo = f"{self._redo_keys()}: {redo}" if redo else ""
            status.rewind = chat.rewind_words()
            try:
                empty = not chat.conversation.items and chat.conversation.older_token is None and not chat.sending
                self.welcome().show_for(empty, status.agent, self.host.keymap)
                self.show_turn()
            except NoMatches:
                return  # the screen is being taken down (a worker ending as the app quits)
        self.status_line().show(status)

    def _redo_keys(self) -> str:
        return interaction.keys_of("chat.redo", self.host.keymap).split(" / ")[-1]  # "ctrl+r", not both

    def failure(self, text: str) -> None:
        self.status.turn = "disconnected"
        self.status.note = text
        self.status_line().show(self.status)
