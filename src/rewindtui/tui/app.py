"""The rewindtui app: connects (or starts the embedded server), opens a session, shows ChatScreen.

Several agents at once: each tab is a chat screen with its own connection (:mod:`rewindtui.tui.tabs`);
``chat``, ``chat_screen``, ``connector`` and the rest below are the shown tab's."""

from __future__ import annotations

import asyncio
import os
import signal
import sys
import termios
from collections.abc import Awaitable, Callable, Iterable
from pathlib import Path
from typing import Any

from textual import work
from textual.app import App, SystemCommand
from textual.driver import Driver
from textual.drivers.linux_driver import LinuxDriver
from textual.notifications import SeverityLevel
from textual.screen import ModalScreen, Screen
from textual.timer import Timer
from textual.widget import Widget
from textual.worker import Worker

from rewindtui.chat import Chat
from rewindtui.chat.drafts import DraftStore
from rewindtui.chat.prompt_history import PromptStore
from rewindtui.client.a2a_client import A2AClient, ClientError
from rewindtui.config.connection import REFUSED, AppConnector, Target
from rewindtui.config.settings import SettingsError
from rewindtui.tui import interaction, theme_memory
from rewindtui.tui.last_session import LastSession
from rewindtui.tui.live_view import LiveView
from rewindtui.tui.paste import PasteSafeDriver
from rewindtui.tui.push_notices import PushNotices
from rewindtui.tui.screens.chat import ChatScreen
from rewindtui.tui.screens.confirm import ConfirmScreen
from rewindtui.tui.screens.connect_error import ConnectErrorScreen
from rewindtui.tui.screens.device_code import DeviceCodeScreen
from rewindtui.tui.screens.help import HelpScreen
from rewindtui.tui.tabs import FIRST_MODE, MAX_TABS, Tab, Tabs
from rewindtui.tui.widgets.sessions_panel import SessionsPanel
from rewindtui.tui.widgets.tab_strip import TabEntry, TabStrip

Closer = Callable[[], Awaitable[None]]
#: Opens a connected client; returns it and a coroutine function that releases everything.
Connector = Callable[[], Awaitable[tuple[A2AClient, Closer]]]

#: Signals that end the app the way ctrl+q does (terminal restored, embedded server stopped).
EXIT_SIGNALS = (signal.SIGTERM, signal.SIGHUP)
PROMPTS_DIR = "prompts"
DRAFTS_DIR = "drafts"
QUEUED_DIR = "queued"
#: seconds between refreshes of the tab strip's markers (a local look: no request)
STRIP_TICK = 0.5
#: seconds a closing tab waits for its stopped reply to end before its connection is closed
CLOSE_WAIT = 10.0


class RewindApp(App[int]):
    CSS_PATH = "app.tcss"
    TITLE = "rewindtui"
    BINDINGS = interaction.bindings("app")

    def __init__(
        self,
        connector: Connector | None = None,
        *,
        session_id: str | None = None,
        chat: Chat | None = None,
        theme: str | None = None,
        keymap: dict[str, str] | None = None,
        hint: str = "",
        new_session: bool = False,
        data_dir: Path | None = None,
        live: bool = True,
    ) -> None:
        super().__init__()
        self.session_id = session_id
        self.hint = hint
        self.new_session = new_session
        # prompt history is kept on disk only when a data dir is given (the real app)
        self.prompt_store = PromptStore(data_dir / PROMPTS_DIR) if data_dir is not None else None
        # drafts per session across restarts (the core's store), kept only with a data dir
        self.draft_store = DraftStore(data_dir / DRAFTS_DIR) if data_dir is not None else None
        #: messages queued during a reply, per session across restarts (the same store, its own folder)
        self.queued_store = DraftStore(data_dir / QUEUED_DIR) if data_dir is not None else None
        self.data_dir = data_dir
        #: the session open when the app ended, per server: a restart opens it again
        self.last_session = LastSession(data_dir)
        #: the tabs (rewindtui.tui.tabs); the first one is the app as started. Its chat, its
        #: connection, its push notifications: see the properties below (the shown tab's)
        self.tabs = Tabs([Tab(FIRST_MODE, connector=connector, chat=chat, server_key=_server_key_of(connector))])
        #: binding id → keys, as the user remapped them: every key shown follows it
        self.keymap_overrides: dict[str, str] = dict(keymap or {})
        self._signals: list[int] = []
        #: follows other clients' changes and the embedded server's health (``live``: on)
        self.live = LiveView(self) if live else None
        self._connecting = (session_id, new_session)
        #: a connect is under way (the first one starts after the first frame): False once it ended,
        #: connected or failed -- what a script or a test waits for before it looks at ``chat``
        self.connecting = self.chat is None and connector is not None
        self._strip_timer: Timer | None = None
        if theme:
            self.theme = theme
        if keymap:
            self.set_keymap(keymap)

    def get_driver_class(self) -> type[Driver]:
        driver = super().get_driver_class()
        # on POSIX terminals: bracketed pastes keep the escape sequences they carry (see paste.py)
        return PasteSafeDriver if driver is LinuxDriver else driver

    # -- the shown tab's parts (rewindtui.tui.tabs) ----------------------------------------------
    @property
    def tab(self) -> Tab:
        return self.tabs.current

    @property
    def chat_screen(self) -> ChatScreen:
        screen = self.tabs.current.screen
        if screen is None:  # before the first mount: the screen installed as "chat"
            found = self.get_screen("chat")
            assert isinstance(found, ChatScreen)
            return found
        return screen

    @property
    def chat(self) -> Chat | None:
        return self.tabs.current.chat

    @chat.setter
    def chat(self, chat: Chat | None) -> None:
        self.tabs.current.chat = chat

    @property
    def connector(self) -> Any:
        return self.tabs.current.connector

    @connector.setter
    def connector(self, connector: Any) -> None:
        self.tabs.current.connector = connector

    @property
    def server_key(self) -> str:
        return self.tabs.current.server_key

    @property
    def push_notices(self) -> PushNotices | None:
        return self.tabs.current.push_notices

    @property
    def connecting(self) -> bool:
        return self.tabs.current.connecting

    @connecting.setter
    def connecting(self, connecting: bool) -> None:
        self.tabs.current.connecting = connecting

    @property
    def _connecting(self) -> tuple[str | None, bool]:
        return self.tabs.current.pending

    @_connecting.setter
    def _connecting(self, pending: tuple[str | None, bool]) -> None:
        self.tabs.current.pending = pending

    def _make_screen(self, tab: Tab) -> ChatScreen:
        screen = ChatScreen(self.prompt_store, self.draft_store, self.queued_store)
        if self.data_dir is not None:
            screen.exports.files_dir = self.data_dir  # a copy's fallback file stays in the data dir
        screen.opened = lambda: self.remember_session(tab)
        tab.screen = screen
        tab.push_notices = PushNotices(self, screen)
        return screen

    async def on_mount(self) -> None:
        self._catch_signals()
        theme_memory.start(self)  # a theme picked from now on is saved in the config file
        first = self.tabs.current
        screen = self._make_screen(first)
        self.install_screen(screen, name="chat")
        await self.push_screen("chat")
        # the first tab is Textual's default mode, which it knows by its screen stack only: named
        # so that switch_mode can come back to it from another tab (its stack exists: never built)
        self._modes.setdefault(FIRST_MODE, "chat")
        if self.live is not None:
            self.live.start()
        if self.chat is not None:
            self.chat_screen.attach(self.chat)
            if self.push_notices is not None:
                self.push_notices.hook(self.chat.client)
        else:
            # the first frame (the composer) first, then the connect's own work (its client, the
            # card, the session): the embedded server was started before the app loaded (cli/launch.py)
            self.call_after_refresh(self.connect, self.session_id, self.new_session)

    # -- leaving -------------------------------------------------------------------------------
    def _catch_signals(self) -> None:
        """SIGTERM / SIGHUP end the app like ctrl+q: the terminal is restored (alternate screen and
        mouse reporting off) and the embedded server is stopped, instead of dying mid-frame."""
        if self.is_headless:
            return
        loop = asyncio.get_running_loop()
        for signum in EXIT_SIGNALS:
            try:
                loop.add_signal_handler(signum, self._on_exit_signal, signum)
            except (NotImplementedError, RuntimeError, ValueError):  # not the main thread / not POSIX
                continue
            self._signals.append(signum)

    def _on_exit_signal(self, signum: int) -> None:
        if not _terminal_alive():
            # the terminal hung up: nothing to restore, and drawing the exit would block on a
            # terminal that takes no more output. The embedded server sees our end of its stdin
            # pipe close and shuts itself down.
            os._exit(128 + signum)
        self.exit(128 + signum)

    async def action_quit(self) -> None:
        screen = self.chat_screen if self.is_screen_installed("chat") else None
        if isinstance(self.screen, ConfirmScreen) and self.screen.purpose == "quit":
            self._leave()  # ctrl+q again: yes
            return
        lost = self._unkept_hidden_drafts()
        busy = [n for n, tab in enumerate(self.tabs, 1) if tab is not self.tabs.current and tab.busy]
        if screen is not None and screen.composer.text and not (screen.replying or screen.rewinding or busy or lost):
            self._quit_with_draft(screen)
            return
        if screen is not None and not screen.composer.text:
            screen.memory.forget_kept_draft()  # cleared: an older kept draft must not come back
        if screen is not None and (screen.replying or screen.rewinding or busy or lost):
            if screen.replying or screen.rewinding:
                what = "A reply is still coming in" if screen.replying else "A rewind is in flight"
            elif busy:
                what = f"A reply or rewind is still under way in tab {', '.join(map(str, busy))}"
            else:
                what = (
                    f"The draft in tab {', '.join(map(str, lost))} cannot be kept "
                    "(no data dir, or nothing sent there yet)"
                )

            def answered(go: bool | None) -> None:
                if go:
                    if (busy or lost) and screen.composer.text:
                        screen.keep_draft()  # this tab's draft is kept as a hidden tab's is
                    self._leave()

            self.push_screen(
                ConfirmScreen(
                    f"{what}. Quit anyway?",
                    "Its stream stops here; the server may still finish it, and reopening the session shows "
                    "what it kept. (ctrl+q again quits.)"
                    if screen.replying or screen.rewinding or busy
                    else "Quitting now loses that draft. (ctrl+q again quits.)",
                    go="Quit",
                    purpose="quit",
                ),
                answered,
            )
            return
        self._leave()

    def _hidden_drafts(self) -> list[tuple[int, ChatScreen]]:
        """(number, screen) of the tabs not shown that hold a draft."""
        return [
            (number, tab.screen)
            for number, tab in enumerate(self.tabs, 1)
            if tab is not self.tabs.current
            and tab.screen is not None
            and tab.screen.is_mounted
            and tab.screen.composer.text
        ]

    def _unkept_hidden_drafts(self) -> list[int]:
        """The tabs not shown whose draft quitting would lose: no data dir, or no session yet."""
        return [
            number
            for number, screen in self._hidden_drafts()
            if self.draft_store is None or screen.chat is None or not screen.chat.session_id
        ]

    def _leave(self, message: str | None = None) -> None:
        """Quit; the tabs not shown keep their drafts for their sessions first, as the shown one does."""
        for _number, screen in self._hidden_drafts():
            screen.keep_draft()
        if message is None:
            self.exit(0)
        else:
            self.exit(0, message=message)

    def _quit_with_draft(self, screen: ChatScreen) -> None:
        """ctrl+q with a draft: keep it for this session and say so; without a place to keep it, ask."""
        if screen.keep_draft():
            self._leave("Your unsent draft is kept; it comes back when you open this session again.")
            return

        def answered(go: bool | None) -> None:
            if go:
                self._leave()

        self.push_screen(
            ConfirmScreen(
                "Quit and lose your draft?",
                "This app keeps no files (no data dir), so the draft in the composer cannot be kept. (ctrl+q again "
                "quits.)",
                go="Quit",
                purpose="quit",
            ),
            answered,
        )

    # -- connecting (each tab its own connection; the worker writes into its own tab) -----------
    def connect(self, session_id: str | None, new: bool = False, *, tab: Tab | None = None) -> Worker[None]:
        """Connect the tab (default: the shown one) and open ``session_id`` (None: the session
        open last time, or with ``new`` a new one). One connect at a time per tab."""
        tab = tab or self.tabs.current
        return self.run_worker(self._open(tab, session_id, new), group=tab.connect_group, exclusive=True)

    async def _open(self, tab: Tab, session_id: str | None, new: bool) -> None:
        tab.connecting = True
        try:
            await self._open_chat(tab, session_id, new)
        finally:
            tab.connecting = False
            self._sync_strips()

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
            await self._release(tab)
            self._connect_failed(tab, str(exc), getattr(exc, "part", ""), session_id, new)
            return
        if tab.closed:  # the tab was closed while it connected: its connection goes with it
            await self._release(tab)
            return
        tab.chat = chat
        # the server's front answered: its agent runtime is still loading, and the first turn
        # waits for it -- the status line says "starting the agent…" until that turn is answered
        tab.screen.status.starting = client.capabilities is not None and client.capabilities.starting
        tab.screen.attach(chat)
        if tab.push_notices is not None:
            tab.push_notices.hook(client)

    def _server_key(self, chat: Chat, tab: Tab | None = None) -> str:
        return (tab or self.tabs.current).server_key or chat.client.config.url

    async def _remembered(self, tab: Tab, chat: Chat) -> str | None:
        """The session that was open when the app last ended on this server, if it still has it
        (and no other tab has it open: two tabs on one session would write over each other)."""
        key = self._server_key(chat, tab)
        remembered = self.last_session.load(key)
        if remembered is None:
            return None
        others = {t.chat.session_id for t in self.tabs if t is not tab and t.chat is not None and t.chat.session_id}
        if remembered in others and any(self._server_key(t.chat, t) == key for t in self.tabs if t.chat is not None):
            return None
        await chat.client.connect()
        live = {s.id for s in await chat.list_sessions() if not s.gone}
        return remembered if remembered in live else None

    def remember_session(self, tab: Tab | None = None) -> None:
        """The tab's open session is the one a restart opens (called as each session is shown)."""
        tab = tab or self.tabs.current
        chat = tab.chat
        if chat is not None and chat.session_id and not tab.closed:
            self.last_session.save(self._server_key(chat, tab), chat.session_id)

    def _connect_failed(self, tab: Tab, error: str, part: str, session_id: str | None, new: bool) -> None:
        assert tab.screen is not None
        tab.screen.show_failure(error)
        movable = tab.connector if isinstance(tab.connector, AppConnector) else None
        screen = ConnectErrorScreen(
            error,
            movable.hint if movable is not None and tab.mode != FIRST_MODE else self.hint,
            part=part,
            target=movable.target if movable is not None else None,
            check=(lambda target: self._check_target(tab, target)) if movable is not None else None,
            leave="Quit" if tab.mode == FIRST_MODE else "Close tab",
        )
        self.push_screen(screen, lambda answer: self._after_error(tab, answer, session_id, new), mode=tab.mode)

    # -- the OAuth2 device-code sign-in (rewindtui.tui.screens.device_code) ------------------------
    def _device_prompt(self, tab: Tab, uri: str, code: str, complete: str | None) -> None:
        """The connection asks the user to sign in: the address and code, until it has a token."""
        agent = tab.connector.settings.url if isinstance(tab.connector, AppConnector) else ""
        self.push_screen(
            DeviceCodeScreen(uri, code, complete, agent=agent or ""),
            lambda signed_in: self._device_answer(tab, signed_in),
            mode=tab.mode,
        )

    def _device_answer(self, tab: Tab, signed_in: bool | None) -> None:
        if signed_in:
            return  # closed by the app once connected (or failed)
        self.workers.cancel_group(self, tab.connect_group)  # stops the polling of the token endpoint
        session_id, new = tab.pending
        self._connect_failed(tab, "The sign-in was canceled: the app is not connected.", REFUSED, session_id, new)

    def _close_device_screen(self) -> None:
        for screen in list(self.screen_stack):
            if isinstance(screen, DeviceCodeScreen) and screen is self.screen:
                screen.dismiss(True)

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
        if isinstance(answer, Target) and isinstance(tab.connector, AppConnector):
            tab.connector = connector = tab.connector.retarget(answer)
            if tab.mode == FIRST_MODE:
                self.hint = connector.hint
            self.connect(session_id, new=new, tab=tab)
        elif answer:
            self.connect(session_id, new=new, tab=tab)
        elif len(self.tabs) > 1:
            self.call_later(self._close, tab)
        else:
            self.exit(1)

    def reconnect(self) -> Worker[None] | None:
        """Connect again (a fresh embedded server when we started one) and reopen this session;
        for a server that died or a network that dropped, without quitting."""
        tab = self.tabs.current
        screen = self.chat_screen
        if tab.connector is None:
            self.notify("This app was given its connection; it cannot reconnect by itself.", severity="warning")
            return None
        if screen.busy:
            self.notify("Wait for the request in flight to finish (Esc stops a reply).", severity="warning")
            return None
        session_id = tab.chat.session_id if tab.chat is not None else self.session_id
        return self.run_worker(self._reconnect(tab, session_id), group=tab.connect_group, exclusive=True)

    async def _reconnect(self, tab: Tab, session_id: str | None) -> None:
        assert tab.screen is not None
        tab.screen.show_failure("reconnecting…")
        tab.chat = tab.screen.chat = None  # until connected again, sends keep the draft
        await self._release(tab)
        await self._open(tab, session_id, False)

    async def _release(self, tab: Tab | None = None) -> None:
        tab = tab or self.tabs.current
        if tab.push_notices is not None:
            await tab.push_notices.release()  # its receiver (also when turned on from the palette)
        closer, tab.closer = tab.closer, None
        if closer is not None:
            await closer()

    async def on_unmount(self) -> None:
        for tab in self.tabs:
            self.remember_session(tab)
        loop = asyncio.get_running_loop()
        for signum in self._signals:
            loop.remove_signal_handler(signum)
        for tab in list(self.tabs):
            await self._release(tab)

    # -- tabs: several agents at once (rewindtui.tui.tabs) -------------------------------------
    def push_screen(
        self, screen: Any, callback: Any = None, wait_for_dismiss: bool = False, *, mode: str | None = None
    ) -> Any:
        """As Textual's, but a dialog a tab not shown opens (a question after its reply ended) goes
        on that tab's own stack: it is there when the tab is shown, never over another tab."""
        if mode is None:
            mode = self._hidden_caller_mode()
        return super().push_screen(screen, callback, wait_for_dismiss, mode=mode)  # type: ignore[call-overload]

    def notify(
        self,
        message: str,
        *,
        title: str = "",
        severity: SeverityLevel = "information",
        timeout: float | None = None,
        markup: bool = True,
    ) -> None:
        """As Textual's, but a notice from a tab not shown says which tab it comes from."""
        mode = self._hidden_caller_mode()
        if mode is not None:
            number = next((n for n, tab in enumerate(self.tabs, 1) if tab.mode == mode), 0)
            label = f"Tab {number}"
            title = f"{label} · {title}" if title else label
        super().notify(message, title=title, severity=severity, timeout=timeout, markup=markup)

    def _hidden_caller_mode(self) -> str | None:
        """The mode of the hidden tab whose screen (or a widget on it) is running now, if one is."""
        from textual._context import active_message_pump  # which node is handling a message now

        try:
            node = active_message_pump.get()
        except LookupError:
            return None
        for tab in self.tabs:
            screen = tab.screen
            if tab is not self.tabs.current and screen is not None:
                if node is screen or (isinstance(node, Widget) and screen in node.ancestors):
                    return tab.mode
        return None

    def _asking(self, tab: Tab) -> bool:
        """A dialog waits on the tab (its stack holds more than its chat screen)."""
        stack = self._screen_stacks.get(tab.mode, [])
        return any(isinstance(screen, ModalScreen) for screen in stack)

    def _fresh_connector(self, connector: Any) -> Any:
        """A connector for another tab on the same agent: its own connection (an embedded server
        already running on the data dir is found again and shared, not started twice)."""
        return AppConnector(connector.settings) if isinstance(connector, AppConnector) else connector

    def _saved_agents(self) -> list[tuple[str, str]]:
        """The saved agents (``rewindtui agents add``) a new tab may open: (name, URL)."""
        connector = self.tabs.current.connector
        if not isinstance(connector, AppConnector):
            return []
        from rewindtui.config.saved_agents import config_path, load_agents

        config = connector.settings.config_file
        try:
            agents = load_agents(config_path({"config": str(config)} if config is not None else None))
        except (SettingsError, OSError, ValueError):
            return []
        return [(name, agent.url) for name, agent in sorted(agents.items())]

    def _agent_connector(self, name: str) -> AppConnector:
        """A connector for the saved agent ``name``, with this app's config file, data dir and user."""
        from rewindtui.config.saved_agents import resolve_flags
        from rewindtui.config.settings import load_settings

        connector = self.tabs.current.connector
        settings = connector.settings if isinstance(connector, AppConnector) else None
        flags: dict[str, Any] = {"agent": name}
        if settings is not None:
            if settings.config_file is not None:
                flags["config"] = str(settings.config_file)
            if settings.data_dir is not None:
                flags["data_dir"] = str(settings.data_dir)
            if settings.user_id:
                flags["user_id"] = settings.user_id
        return AppConnector(load_settings(resolve_flags(flags)))

    def _why_no_new_tab(self) -> str:
        if self.tabs.current.connector is None:
            return "This app was given its connection; it cannot open another tab."
        if len(self.tabs) >= MAX_TABS:
            keys = interaction.keys_of("app.close_tab", self.keymap_overrides)
            return f"At most {MAX_TABS} tabs are open at once: close one first ({keys})."
        return ""

    def action_new_tab(self) -> None:
        """ctrl+t: a new tab -- this agent with a new session, or a saved agent chosen from a list."""
        why = self._why_no_new_tab()
        if why:
            self.notify(why, title="Tabs", severity="warning", markup=False)
            return
        saved = self._saved_agents()
        if not saved:
            current = self.tabs.current
            self.run_worker(self.open_tab(self._fresh_connector(current.connector), agent=current.agent), group="tabs")
            return
        from rewindtui.tui.screens.new_tab import NewTabScreen

        this = self.chat_screen.status.agent or "this agent"
        self.push_screen(NewTabScreen(this, saved), self._new_tab_chosen)

    def _new_tab_chosen(self, choice: str | None) -> None:
        if choice is None:
            return  # backed out: no tab
        if not choice:
            connector: Any = self._fresh_connector(self.tabs.current.connector)
        else:
            try:
                connector = self._agent_connector(choice)
            except SettingsError as exc:
                self.notify(f"No tab opened: {exc}", title="Tabs", severity="error", markup=False)
                return
        self.run_worker(self.open_tab(connector, agent=choice or self.tabs.current.agent), group="tabs")

    async def open_tab(
        self, connector: Any, *, session_id: str | None = None, agent: str = "", chat: Chat | None = None
    ) -> Tab:
        """A new tab after the shown one, shown, connecting on its own connection to open
        ``session_id`` (None: a new session); or showing ``chat``, a connected chat given as is."""
        tab = Tab(self.tabs.new_mode(), connector=connector, agent=agent, server_key=_server_key_of(connector))
        screen = self._make_screen(tab)
        self.add_mode(tab.mode, lambda: screen)
        tab.connecting = chat is None
        position = self.tabs.add(tab)
        await self._show(position)
        if chat is not None:
            tab.chat = chat
            screen.attach(chat)
            if tab.push_notices is not None:
                tab.push_notices.hook(chat.client)
            self._sync_strips()
        else:
            self.connect(session_id, new=session_id is None, tab=tab)
        return tab

    async def _show(self, position: int) -> None:
        """Show the tab at ``position``; the one left keeps running (its reply goes on streaming)."""
        left, shown = self.tabs.current, self.tabs.tabs[position]
        if left is not shown:
            self.tabs.looked_at(left)  # its news from now on is what changes after this
        self.tabs.index = position
        if self.current_mode != shown.mode:
            await self.switch_mode(shown.mode)
        self._sync_strips()

    async def action_next_tab(self, delta: int) -> None:
        if len(self.tabs) < 2:
            keys = interaction.keys_of("app.new_tab", self.keymap_overrides)
            self.notify(f"This is the only tab ({keys} opens another).", title="Tabs", markup=False)
            return
        await self._show(self.tabs.step(delta))

    async def action_show_tab(self, position: int) -> None:
        """A click on the strip: show that tab."""
        if 0 <= position < len(self.tabs):
            await self._show(position)

    def action_close_tab(self) -> None:
        """Close the shown tab: its draft is kept for its session; during a reply it asks first and
        then stops the reply cleanly; a rewind in flight is let finish."""
        tab = self.tabs.current
        screen = tab.screen
        if len(self.tabs) < 2 or screen is None:
            keys = interaction.keys_of("app.quit", self.keymap_overrides)
            self.notify(f"This is the only tab; {keys} quits.", title="Tabs", markup=False)
            return
        if screen.rewinding:
            self.notify(
                "A rewind is in flight in this tab: close it once it has finished.",
                title="Tabs",
                severity="warning",
                markup=False,
            )
            return
        if isinstance(self.screen, ConfirmScreen) and self.screen.purpose == "close-tab":
            self.screen.dismiss(True)  # alt+w again: yes
            return
        kept = not screen.composer.text or (
            self.draft_store is not None and screen.chat is not None and bool(screen.chat.session_id)
        )
        if kept and not screen.replying:
            self.run_worker(self._close(tab), group="tabs")
            return
        reasons = []
        if screen.replying:
            reasons.append("Its reply is stopped (what came stays on the server as a stopped turn).")
        if not kept and self.draft_store is None:
            reasons.append("This app keeps no files (no data dir), so the draft in the composer cannot be kept.")
        elif not kept:
            reasons.append(
                "Nothing was sent in this tab yet (no session), so the draft in the composer cannot be kept."
            )

        def answered(go: bool | None) -> None:
            if go:
                self.run_worker(self._close(tab, lose_draft=not kept), group="tabs")

        self.push_screen(
            ConfirmScreen(
                "A reply is still coming in. Close the tab?"
                if screen.replying
                else "Close the tab and lose your draft?",
                " ".join(reasons),
                go="Close tab",
                purpose="close-tab",
            ),
            answered,
        )

    async def _close(self, tab: Tab, *, lose_draft: bool = False) -> None:
        screen = tab.screen
        assert screen is not None
        if screen.composer.text and not screen.keep_draft() and not lose_draft:
            return  # it could not be kept after all (the store said why): the tab stays, the draft in it
        if screen.replying:
            screen.stop_reply()
        for worker in list(screen.ops.workers.values()):
            if worker is not None and not worker.is_finished:
                try:
                    await asyncio.wait_for(worker.wait(), CLOSE_WAIT)
                except Exception:  # its own handler said what failed; the tab goes anyway
                    pass
        if tab not in self.tabs.tabs:
            return  # closed twice
        self.remember_session(tab)
        tab.closed = True
        self.tabs.remove(tab)
        shown = self.tabs.current
        if self.current_mode != shown.mode:
            await self.switch_mode(shown.mode)
        if tab.mode != FIRST_MODE:
            await self.remove_mode(tab.mode)
        # the first tab's screen stays in the app's default mode, never shown again
        self.workers.cancel_group(self, tab.connect_group)
        await self._release(tab)
        self._sync_strips()

    def on_sessions_panel_open_tab(self, event: SessionsPanel.OpenTab) -> None:
        """F2, ``t``: the highlighted session in a new tab (or the tab that has it open already)."""
        event.stop()
        current = self.tabs.current
        if current.chat is not None:
            key = self._server_key(current.chat, current)
            position = self.tabs.position_of_session(
                key, event.session_id, lambda t: self._server_key(t.chat, t) if t.chat is not None else ""
            )
            if position is not None:
                self.notify(f"That session is open in tab {position + 1}.", title="Tabs", markup=False)
                self.run_worker(self._show(position), group="tabs")
                return
        why = self._why_no_new_tab()
        if why:
            self.notify(why, title="Tabs", severity="warning", markup=False)
            return
        connector = self._fresh_connector(current.connector)
        self.run_worker(self.open_tab(connector, session_id=event.session_id, agent=current.agent), group="tabs")

    def _sync_strips(self) -> None:
        """The strip on every tab's screen (two tabs or more), with each tab's name and news."""
        many = len(self.tabs) > 1
        entries = [
            TabEntry(tab.label(), self.tabs.news(tab, asking=self._asking(tab)), tab is self.tabs.current)
            for tab in self.tabs
        ]
        for tab in self.tabs:
            screen = tab.screen
            if screen is None or not screen.is_mounted:
                continue
            strips = screen.query(TabStrip)
            if not many:
                strips.remove()
                continue
            if strips:
                strip = strips.first()
            else:
                strip = TabStrip(id="tab-strip")
                screen.mount(strip, before=0)
            strip.show(entries, self.keymap_overrides)
        if many and self._strip_timer is None:
            self._strip_timer = self.set_interval(STRIP_TICK, self._sync_strips, name="tab-strip")
        elif not many and self._strip_timer is not None:
            self._strip_timer.stop()
            self._strip_timer = None

    # -- help and palette ----------------------------------------------------------------------
    def action_help(self) -> None:
        if isinstance(self.screen, HelpScreen):
            return
        self.push_screen(HelpScreen(self.keymap_overrides))

    def action_wire_console(self) -> None:
        from rewindtui.tui.screens.wire_console import WireConsoleScreen  # the one wiring of the console

        if not isinstance(self.screen, WireConsoleScreen):
            self.push_screen(WireConsoleScreen(self.data_dir))

    def action_answer_form(self) -> None:
        from rewindtui.tui.screens.form_answer import open_latest  # the one wiring of /form

        open_latest(self)

    def action_task_browser(self) -> None:
        from rewindtui.tui.screens.task_browser import TaskBrowserScreen  # the one wiring of the browser

        if self.chat is not None and not isinstance(self.screen, TaskBrowserScreen):
            self.push_screen(TaskBrowserScreen(self.chat, self.data_dir))

    def get_system_commands(self, screen: Screen) -> Iterable[SystemCommand]:
        yield from super().get_system_commands(screen)
        if not isinstance(screen, ChatScreen):
            return

        # the table's commands come from ChatScreen.COMMANDS (rewindtui.tui.commands); these have no key
        yield SystemCommand(
            "Reattach to the running turn", "Follow again a turn the server is still running", screen.reattach
        )
        yield SystemCommand("Reload session", "Re-read this session from the server", screen.reload)
        yield SystemCommand(
            "Reconnect", "Connect to the server again; restarts the embedded server if it died", self.reconnect
        )
        yield SystemCommand(
            "Export transcript as JSON",
            "Write the transcript to a .json file (asks where)",
            lambda: screen.action_export("json"),
        )
        yield SystemCommand(
            "Remove attachments", "Remove every file and data part waiting to be sent", screen.files.remove_all
        )
        if self.push_notices is not None and self.chat is not None:
            on = self.push_notices.on
            yield SystemCommand(
                f"Push notifications: turn {'off' if on else 'on'}",
                "Ask the agent to notify this app when each turn ends, so a turn whose stream is cut still shows",
                self.toggle_push,
            )

    @work(group="push-toggle", exclusive=True)
    async def toggle_push(self) -> None:
        """The palette's push switch (the ``push`` setting turns it on at start)."""
        notices, chat = self.push_notices, self.chat
        if notices is None or chat is None:
            return
        if notices.on:
            await notices.turn_off(chat.client)
            self.notify("Push notifications are off.", title="Push notification")
            return
        why = notices.why_not(chat.client)
        if why:
            self.notify(
                f"Push notifications cannot be turned on: {why}.",
                title="Push notification",
                severity="warning",
                markup=False,
            )
            return
        await notices.turn_on(chat.client)
        self.notify(
            "Push notifications are on: a turn whose stream is cut is shown when it ends.", title="Push notification"
        )


def _server_key_of(connector: Any) -> str:
    """What drafts and prompt histories are keyed by when the address is not stable: the embedded
    server listens on a new port each start ("": its URL)."""
    target = connector.target if isinstance(connector, AppConnector) else None
    return "embedded" if target is not None and target.kind == "embedded" else ""


def _terminal_alive() -> bool:
    """False once the terminal has hung up (its other side closed)."""
    stdin = sys.__stdin__
    try:
        termios.tcgetattr(stdin.fileno() if stdin is not None else 0)
    except (termios.error, OSError, ValueError):
        return False
    return True


def run_app(settings: Any) -> int:
    """Run the app with the given settings (see ``rewindtui.config.settings``)."""
    from rewindtui.config.connection import app_connector

    connector, hint = app_connector(settings)
    data_dir = settings.resolved_data_dir() if hasattr(settings, "resolved_data_dir") else None
    app = RewindApp(
        connector,
        session_id=getattr(settings, "session", None),
        theme=getattr(settings, "theme", None),
        keymap=getattr(settings, "keymap", None) or None,
        hint=hint,
        data_dir=data_dir,
    )
    theme_memory.configure(app, settings)
    result = app.run()
    return app.return_code or int(result or 0)  # an app that ended on an error exits non-zero
