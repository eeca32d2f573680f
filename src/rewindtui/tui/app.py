"""The rewindtui app: connects (or starts the embedded server), opens a session, shows ChatScreen.

Several agents at once: each tab is a chat screen with its own connection (:mod:`rewindtui.tui.tabs`);
``chat``, ``chat_screen``, ``connector`` and the rest below are the shown tab's."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterable
from pathlib import Path
from typing import Any

from textual import work
from textual.app import App, SystemCommand
from textual.driver import Driver
from textual.drivers.linux_driver import LinuxDriver
from textual.notifications import SeverityLevel
from textual.screen import Screen
from textual.worker import Worker

from rewindtui.chat import Chat
from rewindtui.chat.drafts import DraftStore
from rewindtui.chat.prompt_history import PromptStore
from rewindtui.client.a2a_client import A2AClient
from rewindtui.tui import interaction, theme_memory
from rewindtui.tui.connect_control import ConnectControl
from rewindtui.tui.last_session import LastSession
from rewindtui.tui.leaving import Leaving
from rewindtui.tui.live_view import LiveView
from rewindtui.tui.paste import PasteSafeDriver
from rewindtui.tui.push_notices import PushNotices
from rewindtui.tui.screens.chat import ChatScreen
from rewindtui.tui.screens.help import HelpScreen
from rewindtui.tui.system_commands import system_commands, toggle_push
from rewindtui.tui.tab_control import TabControl, server_key_of
from rewindtui.tui.tabs import FIRST_MODE, Tab, Tabs
from rewindtui.tui.widgets.sessions_panel import SessionsPanel

Closer = Callable[[], Awaitable[None]]
#: Opens a connected client; returns it and a coroutine function that releases everything.
Connector = Callable[[], Awaitable[tuple[A2AClient, Closer]]]

PROMPTS_DIR = "prompts"
DRAFTS_DIR = "drafts"
QUEUED_DIR = "queued"


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
        self.tabs = Tabs([Tab(FIRST_MODE, connector=connector, chat=chat, server_key=server_key_of(connector))])
        #: binding id → keys, as the user remapped them: every key shown follows it
        self.keymap_overrides: dict[str, str] = dict(keymap or {})
        #: the features of the app's own (each its module): the tabs, connecting, leaving
        self.tab_control = TabControl(self)
        self.connect_control = ConnectControl(self)
        self.leaving = Leaving(self)
        #: follows other clients' changes and the embedded server's health (``live``: on)
        self.live = LiveView(self) if live else None
        self.tabs.current.pending = (session_id, new_session)
        #: a connect is under way (the first one starts after the first frame): False once it ended,
        #: connected or failed -- what a script or a test waits for before it looks at ``chat``
        self.connecting = self.chat is None and connector is not None
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

    async def on_mount(self) -> None:
        self.leaving.catch_signals()
        theme_memory.start(self)  # a theme picked from now on is saved in the config file
        first = self.tabs.current
        screen = self.tab_control.make_screen(first)
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

    # -- leaving (rewindtui.tui.leaving) ---------------------------------------------------------
    async def action_quit(self) -> None:
        self.leaving.quit()

    async def on_unmount(self) -> None:
        for tab in self.tabs:
            self.remember_session(tab)
        self.leaving.release_signals()
        for tab in list(self.tabs):
            await self.connect_control.release(tab)

    # -- connecting (rewindtui.tui.connect_control: each tab its own connection) -----------------
    def connect(self, session_id: str | None, new: bool = False, *, tab: Tab | None = None) -> Worker[None]:
        """Connect the tab (default: the shown one) and open ``session_id``; see ``ConnectControl.connect``."""
        return self.connect_control.connect(session_id, new, tab=tab)

    def reconnect(self) -> Worker[None] | None:
        """Connect again and reopen this session (the palette's Reconnect, the live view)."""
        return self.connect_control.reconnect()

    def remember_session(self, tab: Tab | None = None) -> None:
        """The tab's open session is the one a restart opens."""
        self.connect_control.remember_session(tab)

    # -- tabs: several agents at once (rewindtui.tui.tab_control) -----------------------------------
    def push_screen(
        self, screen: Any, callback: Any = None, wait_for_dismiss: bool = False, *, mode: str | None = None
    ) -> Any:
        """As Textual's, but a dialog a tab not shown opens (a question after its reply ended) goes
        on that tab's own stack: it is there when the tab is shown, never over another tab."""
        if mode is None:
            mode = self.tab_control.hidden_caller_mode()
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
        mode = self.tab_control.hidden_caller_mode()
        if mode is not None:
            label = f"Tab {self.tab_control.tab_number(mode)}"
            title = f"{label} · {title}" if title else label
        super().notify(message, title=title, severity=severity, timeout=timeout, markup=markup)

    async def open_tab(
        self, connector: Any, *, session_id: str | None = None, agent: str = "", chat: Chat | None = None
    ) -> Tab:
        """A new tab after the shown one, shown; see ``TabControl.open_tab``."""
        return await self.tab_control.open_tab(connector, session_id=session_id, agent=agent, chat=chat)

    def action_new_tab(self) -> None:
        self.tab_control.new_tab()

    async def action_next_tab(self, delta: int) -> None:
        await self.tab_control.next_tab(delta)

    async def action_show_tab(self, position: int) -> None:
        await self.tab_control.show_tab(position)

    def action_close_tab(self) -> None:
        self.tab_control.close_tab()

    def on_sessions_panel_open_tab(self, event: SessionsPanel.OpenTab) -> None:
        """F2, ``t``: the highlighted session in a new tab (or the tab that has it open already)."""
        event.stop()
        self.tab_control.open_session(event.session_id)

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
        if isinstance(screen, ChatScreen):
            yield from system_commands(self, screen)  # rewindtui.tui.system_commands

    @work(group="push-toggle", exclusive=True)
    async def toggle_push(self) -> None:
        """The palette's push switch (the ``push`` setting turns it on at start)."""
        await toggle_push(self)


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
