"""Connecting a tab: its connection opened (or the embedded server started), its session opened
(the one open last time on that server, unless told otherwise), a failure shown with a way to
retry or correct the address, an OAuth2 device-code sign-in, a reconnect, and the connection
released. Each tab connects on its own; the worker writes into its own tab only.

The app holds one :class:`ConnectControl`; its ``connect`` and ``reconnect`` are the app's.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from textual.worker import Worker

from rewindtui.chat import Chat
from rewindtui.chat.history import SessionNotFound
from rewindtui.client.a2a_client import ClientError
from rewindtui.client.errors import HTTPStatusFailed
from rewindtui.config.connection import REFUSED, AppConnector, Target
from rewindtui.config.settings import SettingsError
from rewindtui.tui.screens.connect_error import SESSION, ConnectErrorScreen
from rewindtui.tui.screens.device_code import DeviceCodeScreen
from rewindtui.tui.tabs import FIRST_MODE, Tab

#: the connect screen's advice when the agent answered but has no session of the id given
SESSION_HINT = (
    "The agent answered but has no session of that id for you: check the id given with --session (any "
    "unique start of it works), or leave --session out. On a team server another user's session is "
    "unknown to you unless its owner shares it with you."
)
#: the connect screen's advice when the agent answered but refused the credentials (401/403)
REFUSED_HINT = (
    "The agent answered but refused the credentials: check them (--bearer-env VAR or --bearer-file PATH, "
    "--api-key-env VAR, --basic-user NAME --basic-password-env VAR, or [auth] in the config file); "
    "a server with users takes each user's own token."
)

if TYPE_CHECKING:
    from rewindtui.tui.app import RewindApp


class ConnectControl:
    """Connects, reconnects and releases each tab's connection."""

    def __init__(self, app: RewindApp) -> None:
        self.app = app

    def connect(self, session_id: str | None, new: bool = False, *, tab: Tab | None = None) -> Worker[None]:
        """Connect the tab (default: the shown one) and open ``session_id`` (None: the session
        open last time, or with ``new`` a new one). One connect at a time per tab."""
        tab = tab or self.app.tabs.current
        return self.app.run_worker(self._open(tab, session_id, new), group=tab.connect_group, exclusive=True)

    async def _open(self, tab: Tab, session_id: str | None, new: bool) -> None:
        tab.connecting = True
        try:
            await self._open_chat(tab, session_id, new)
        finally:
            tab.connecting = False
            self.app.tab_control.sync_strips()

    async def _open_chat(self, tab: Tab, session_id: str | None, new: bool) -> None:
        connector = tab.connector
        assert connector is not None and tab.screen is not None
        tab.pending = (session_id, new)
        if isinstance(connector, AppConnector):
            # an OAuth2 device-code sign-in shows here
            connector.device_prompt = lambda uri, code, complete: self._device_prompt(tab, uri, code, complete)
        try:
            try:
                client, tab.closer = await connector()
            finally:
                self._close_device_screen()
            chat = Chat(client)
            chat.open_newest_first = True  # the newest turns are shown first, older ones come in behind
            if new and session_id is None:
                await client.connect()
                await chat.open(None)
            else:
                if session_id is None:
                    session_id = await self._remembered(tab, chat)
                await chat.connect_and_open(session_id)
        except ClientError as exc:
            await self.release(tab)
            part, hint = getattr(exc, "part", ""), None
            if isinstance(exc, SessionNotFound):  # it answered: the session id, not the address
                part, hint = SESSION, SESSION_HINT
            elif part == REFUSED or (isinstance(exc, HTTPStatusFailed) and exc.status in (401, 403)):
                # it answered (the card is public; the sessions were refused): the credentials, not the address
                part, hint = REFUSED, REFUSED_HINT
            self._connect_failed(tab, str(exc), part, session_id, new, hint)
            return
        if tab.closed:  # the tab was closed while it connected: its connection goes with it
            await self.release(tab)
            return
        tab.chat = chat
        # the server's front answered: its agent runtime is still loading, and the first turn
        # waits for it -- the status line says "starting the agent…" until that turn is answered
        tab.screen.status.starting = client.capabilities is not None and client.capabilities.starting
        tab.screen.attach(chat)
        if tab.push_notices is not None:
            tab.push_notices.hook(client)

    # -- the session a restart opens again (rewindtui.tui.last_session) ---------------------------
    def server_key(self, chat: Chat, tab: Tab | None = None) -> str:
        return (tab or self.app.tabs.current).server_key or chat.client.config.url

    async def _remembered(self, tab: Tab, chat: Chat) -> str | None:
        """The session that was open when the app last ended on this server, if it still has it
        (and no other tab has it open: two tabs on one session would write over each other)."""
        tabs = self.app.tabs
        key = self.server_key(chat, tab)
        remembered = self.app.last_session.load(key)
        if remembered is None:
            return None
        others = {t.chat.session_id for t in tabs if t is not tab and t.chat is not None and t.chat.session_id}
        if remembered in others and any(self.server_key(t.chat, t) == key for t in tabs if t.chat is not None):
            return None
        await chat.client.connect()
        live = {s.id for s in await chat.list_sessions() if not s.gone}
        return remembered if remembered in live else None

    def remember_session(self, tab: Tab | None = None) -> None:
        """The tab's open session is the one a restart opens (called as each session is shown)."""
        tab = tab or self.app.tabs.current
        chat = tab.chat
        if chat is not None and chat.session_id and not tab.closed:
            self.app.last_session.save(self.server_key(chat, tab), chat.session_id)

    # -- a failed connect: retry, correct the address, or leave ------------------------------------
    def _connect_failed(
        self, tab: Tab, error: str, part: str, session_id: str | None, new: bool, hint: str | None = None
    ) -> None:
        assert tab.screen is not None
        tab.screen.view.failure(error)
        movable = tab.connector if isinstance(tab.connector, AppConnector) else None
        if hint is None:
            hint = movable.hint if movable is not None and tab.mode != FIRST_MODE else self.app.hint
        screen = ConnectErrorScreen(
            error,
            hint,
            part=part,
            target=movable.target if movable is not None else None,
            check=(lambda target: self._check_target(tab, target)) if movable is not None else None,
            leave="Quit" if tab.mode == FIRST_MODE else "Close tab",
        )
        self.app.push_screen(screen, lambda answer: self._after_error(tab, answer, session_id, new), mode=tab.mode)

    def _check_target(self, tab: Tab, target: Target) -> str:
        """Why the tab's connector cannot be pointed at ``target`` ("" if it can)."""
        assert isinstance(tab.connector, AppConnector)
        try:
            tab.connector.retarget(target)
        except SettingsError as exc:
            return str(exc)
        return ""

    def _after_error(self, tab: Tab, answer: bool | Target | None, session_id: str | None, new: bool) -> None:
        """The connect screen's answer: quit (a tab of several: close it), retry, or connect to
        the corrected address (the connector is rebuilt from the corrected settings; no restart)."""
        app = self.app
        if isinstance(answer, Target) and isinstance(tab.connector, AppConnector):
            tab.connector = connector = tab.connector.retarget(answer)
            if tab.mode == FIRST_MODE:
                app.hint = connector.hint
            self.connect(session_id, new=new, tab=tab)
        elif answer:
            self.connect(session_id, new=new, tab=tab)
        elif len(app.tabs) > 1:
            app.call_later(app.tab_control.close, tab)
        else:
            app.exit(1)

    # -- the OAuth2 device-code sign-in (rewindtui.tui.screens.device_code) ------------------------
    def _device_prompt(self, tab: Tab, uri: str, code: str, complete: str | None) -> None:
        """The connection asks the user to sign in: the address and code, until it has a token."""
        agent = tab.connector.settings.url if isinstance(tab.connector, AppConnector) else ""
        self.app.push_screen(
            DeviceCodeScreen(uri, code, complete, agent=agent or ""),
            lambda signed_in: self._device_answer(tab, signed_in),
            mode=tab.mode,
        )

    def _device_answer(self, tab: Tab, signed_in: bool | None) -> None:
        if signed_in:
            return  # closed by the app once connected (or failed)
        self.app.workers.cancel_group(self.app, tab.connect_group)  # stops the polling of the token endpoint
        session_id, new = tab.pending
        self._connect_failed(tab, "The sign-in was canceled: the app is not connected.", REFUSED, session_id, new)

    def _close_device_screen(self) -> None:
        app = self.app
        for screen in list(app.screen_stack):
            if isinstance(screen, DeviceCodeScreen) and screen is app.screen:
                screen.dismiss(True)

    # -- again, and the end ----------------------------------------------------------------------
    def reconnect(self) -> Worker[None] | None:
        """Connect again (a fresh embedded server when we started one) and reopen this session;
        for a server that died or a network that dropped, without quitting."""
        app = self.app
        tab = app.tabs.current
        screen = app.chat_screen
        if tab.connector is None:
            app.notify("This app was given its connection; it cannot reconnect by itself.", severity="warning")
            return None
        if screen.busy:
            app.notify("Wait for the request in flight to finish (Esc stops a reply).", severity="warning")
            return None
        session_id = tab.chat.session_id if tab.chat is not None else app.session_id
        return app.run_worker(self._reconnect(tab, session_id), group=tab.connect_group, exclusive=True)

    async def _reconnect(self, tab: Tab, session_id: str | None) -> None:
        assert tab.screen is not None
        tab.screen.view.failure("reconnecting…")
        tab.chat = tab.screen.chat = None  # until connected again, sends keep the draft
        await self.release(tab)
        await self._open(tab, session_id, False)

    async def release(self, tab: Tab | None = None) -> None:
        """Close the tab's connection (default: the shown one's) and its push receiver."""
        tab = tab or self.app.tabs.current
        if tab.push_notices is not None:
            await tab.push_notices.release()  # its receiver (also when turned on from the palette)
        closer, tab.closer = tab.closer, None
        if closer is not None:
            await closer()
