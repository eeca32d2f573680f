"""The sessions panel (F2), for the chat screen: opening and closing it, what it lists (re-read
after every turn while it shows; else the open session's title for the status line, once the
server has named it), opening a session from it, rename and delete. Opening a session itself is
:class:`~rewindtui.tui.session_switch.SessionSwitch`'s."""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from typing import Any, TypeAlias

from rewindtui.client.a2a_client import ClientError, Session
from rewindtui.client.errors import user_message
from rewindtui.tui.host import ScreenHost
from rewindtui.tui.screens.confirm import ConfirmScreen
from rewindtui.tui.screens.rename import RenameScreen
from rewindtui.tui.widgets.sessions_panel import SessionsPanel

#: what the panel asks of the chat screen (its ``OpenTab`` is the app's: a new tab)
PanelMessage: TypeAlias = (
    SessionsPanel.Open
    | SessionsPanel.New
    | SessionsPanel.Close
    | SessionsPanel.TypeAhead
    | SessionsPanel.Rename
    | SessionsPanel.Delete
)


class SessionsControl:
    def __init__(
        self,
        host: ScreenHost,
        *,
        ask: Callable[[Any, Callable[[Any], None]], object],
        switch: Callable[[str | None], None],
    ) -> None:
        self.host = host
        self.ask = ask  # push a modal screen and get its answer
        self.switch = switch  # open a session (None: a new one)

    def _notify(self, text: str, *, title: str, severity: str = "information", timeout: float = 6) -> None:
        self.host.notify(text, title=title, severity=severity, timeout=timeout, markup=False)

    def handle(self, event: PanelMessage) -> None:
        """The panel's messages: open, new, close (a letter typed there goes to the composer),
        rename, delete."""
        if isinstance(event, SessionsPanel.Open):
            self.open(event.session_id)
        elif isinstance(event, SessionsPanel.New):
            self.switch(None)
        elif isinstance(event, SessionsPanel.Close):
            self.close()
        elif isinstance(event, SessionsPanel.TypeAhead):
            self.close(event.text)
        elif isinstance(event, SessionsPanel.Rename):
            self.rename(event.session)
        else:
            self.delete(event.session)

    # -- the panel -------------------------------------------------------------------------------
    @property
    def shown(self) -> bool:
        return not self.host.sessions.has_class("hidden")

    def toggle(self) -> None:
        panel = self.host.sessions
        panel.toggle_class("hidden")
        if panel.has_class("hidden"):
            self.host.composer.focus()
        else:
            panel.focus()
            self.load()

    def close(self, text: str = "") -> None:
        """Close the panel; focus (and ``text`` typed there that is no key of its own) goes to the composer."""
        self.host.sessions.add_class("hidden")
        self.host.composer.focus()
        if text:
            self.host.composer.insert(text)

    def open(self, session_id: str) -> None:
        # the chosen session opens and the panel closes: focus is in the composer, and nothing
        # looks focused that is not (a d typed next is text, not a delete)
        self.close()
        self.switch(session_id)

    # -- what it lists ---------------------------------------------------------------------------
    def refresh(self) -> None:
        """Re-read the sessions when the panel shows them; else, for the status line, the open
        session's title once the server has named it."""
        chat = self.host.chat
        if chat is None:
            return
        if self.shown:
            self.load()
        elif chat.session_id and chat.client.has_api and not (chat.session and chat.session.name):
            # the work is handed over uncalled: a worker cancelled before it starts leaves no coroutine unawaited
            self.host.run_worker(self._load_title, group="title", exclusive=True, exit_on_error=False)

    def load(self) -> None:
        self.host.run_worker(self._load, group="sessions", exclusive=True, exit_on_error=False)

    async def _load(self) -> None:
        chat = self.host.chat
        panel = self.host.sessions
        if chat is None:
            panel.show_note("Connecting… the list shows once connected.")
            return  # the screen loads the list again when the chat is attached
        try:
            sessions = await chat.list_sessions()
        except ClientError as exc:
            self._notify(user_message(exc), title="Sessions", severity="error")
            return
        if not sessions:
            panel.show_note("No sessions yet." if chat.client.has_api else "No sessions used from here yet.")
            return
        panel.show_sessions(sessions, chat.session_id)
        self._adopt(next((s for s in sessions if s.id == chat.session_id and not s.gone), None))

    async def _load_title(self) -> None:
        chat = self.host.chat
        if chat is None or not chat.session_id:
            return
        try:
            self._adopt(await chat.client.get_session(chat.session_id))
        except ClientError:
            return  # only the status line's title; the next turn tries again

    def _adopt(self, session: Session | None) -> None:
        """The open session as the server lists it now (its title may have changed)."""
        chat = self.host.chat
        if chat is None or session is None or session.id != chat.session_id:
            return
        if chat.session is None or chat.session.name != session.name:
            chat.session = session
            self.host.refresh_status()

    # -- rename and delete -------------------------------------------------------------------------
    def rename_open(self) -> None:
        """/rename, the palette: rename the open session."""
        chat = self.host.chat
        session = chat.session if chat is not None else None
        if session is None:
            self._notify("This session has no name to change yet: send a first message.", title="", severity="warning")
            return
        self.rename(session)

    def rename(self, session: Session) -> None:
        chat = self.host.chat
        if chat is None:
            return
        if not chat.client.has_api:
            self._notify(
                "This server has no sessions API to rename a session with.", title="Rename", severity="warning"
            )
            return

        def named(name: str | None) -> None:
            if name:
                self.host.run_worker(partial(self._rename, session, name), group="sessions-edit", exit_on_error=False)

        self.ask(RenameScreen(session.name), named)

    async def _rename(self, session: Session, name: str) -> None:
        chat = self.host.chat
        assert chat is not None
        try:
            await chat.rename_session(session.id, name)
        except ClientError as exc:
            self._notify(user_message(exc), title="Rename failed", severity="error")
            return
        self.host.refresh_status()
        await self._load()
        if self.shown:
            self.host.sessions.focus()  # ↑ / Enter move the highlight again

    def delete(self, session: Session) -> None:
        chat = self.host.chat
        if chat is None:
            return
        if session.id == chat.session_id:
            self._notify(
                "This is the open session: open another one (or a new one, n) first.",
                title="Delete",
                severity="warning",
            )
            return
        title = session.name or session.id[:8]
        what = (
            "It is only forgotten here: the server no longer has it."
            if session.gone
            else "Its turns (rewound ones too) are deleted on the server. This cannot be undone."
        )

        def answered(go: bool | None) -> None:
            if go:
                self.host.run_worker(partial(self._delete, session), group="sessions-edit", exit_on_error=False)

        self.ask(ConfirmScreen(f"Delete “{title}”?", what, go="Delete", purpose="delete"), answered)

    async def _delete(self, session: Session) -> None:
        chat = self.host.chat
        assert chat is not None
        try:
            await chat.delete_session(session.id)
        except ClientError as exc:
            self._notify(user_message(exc), title="Delete failed", severity="error")
            return
        self._notify(f"Deleted “{session.name or session.id[:8]}”.", title="Sessions", timeout=4)
        await self._load()
