"""The rewindtui app: connects (or starts the embedded server), opens a session, shows ChatScreen."""

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
from textual.screen import Screen
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

Closer = Callable[[], Awaitable[None]]
#: Opens a connected client; returns it and a coroutine function that releases everything.
Connector = Callable[[], Awaitable[tuple[A2AClient, Closer]]]

#: Signals that end the app the way ctrl+q does (terminal restored, embedded server stopped).
EXIT_SIGNALS = (signal.SIGTERM, signal.SIGHUP)
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
        self.connector = connector
        self.session_id = session_id
        self.chat = chat
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
        #: what drafts and prompt histories are keyed by when the address is not stable ("": the URL)
        target = connector.target if isinstance(connector, AppConnector) else None
        self.server_key = "embedded" if target is not None and target.kind == "embedded" else ""
        #: binding id → keys, as the user remapped them: every key shown follows it
        self.keymap_overrides: dict[str, str] = dict(keymap or {})
        self._closer: Closer | None = None
        self._signals: list[int] = []
        #: push notifications of turns the app did not see end (set up with the chat screen)
        self.push_notices: PushNotices | None = None
        #: follows other clients' changes and the embedded server's health (``live``: on)
        self.live = LiveView(self) if live else None
        #: the session and "new" of the connection in progress (for a retry after a canceled sign-in)
        self._connecting: tuple[str | None, bool] = (session_id, new_session)
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

    @property
    def chat_screen(self) -> ChatScreen:
        screen = self.get_screen("chat")
        assert isinstance(screen, ChatScreen)
        return screen

    async def on_mount(self) -> None:
        self._catch_signals()
        theme_memory.start(self)  # a theme picked from now on is saved in the config file
        screen = ChatScreen(self.prompt_store, self.draft_store, self.queued_store)
        if self.data_dir is not None:
            screen.exports.files_dir = self.data_dir  # a copy's fallback file stays in the data dir
        screen.opened = self.remember_session
        self.install_screen(screen, name="chat")
        await self.push_screen("chat")
        self.push_notices = PushNotices(self, screen)
        if self.live is not None:
            self.live.start()
        if self.chat is not None:
            self.chat_screen.attach(self.chat)
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
            self.exit(0)  # ctrl+q again: yes
            return
        if screen is not None and screen.composer.text and not (screen.replying or screen.rewinding):
            self._quit_with_draft(screen)
            return
        if screen is not None and not screen.composer.text:
            screen.memory.forget_kept_draft()  # cleared: an older kept draft must not come back
        if screen is not None and (screen.replying or screen.rewinding):
            what = "A reply is still coming in" if screen.replying else "A rewind is in flight"

            def answered(go: bool | None) -> None:
                if go:
                    self.exit(0)

            self.push_screen(
                ConfirmScreen(
                    f"{what}. Quit anyway?",
                    "Its stream stops here; the server may still finish it, and reopening the session shows "
                    "what it kept. (ctrl+q again quits.)",
                    go="Quit",
                    purpose="quit",
                ),
                answered,
            )
            return
        self.exit(0)

    def _quit_with_draft(self, screen: ChatScreen) -> None:
        """ctrl+q with a draft: keep it for this session and say so; without a place to keep it, ask."""
        if screen.keep_draft():
            self.exit(0, message="Your unsent draft is kept; it comes back when you open this session again.")
            return

        def answered(go: bool | None) -> None:
            if go:
                self.exit(0)

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

    # -- connecting ----------------------------------------------------------------------------
    @work(group="connect", exclusive=True)
    async def connect(self, session_id: str | None, new: bool = False) -> None:
        await self._open(session_id, new)

    async def _open(self, session_id: str | None, new: bool) -> None:
        self.connecting = True
        try:
            await self._open_chat(session_id, new)
        finally:
            self.connecting = False

    async def _open_chat(self, session_id: str | None, new: bool) -> None:
        assert self.connector is not None
        self._connecting = (session_id, new)
        if isinstance(self.connector, AppConnector):
            self.connector.device_prompt = self._device_prompt  # an OAuth2 device-code sign-in shows here
        try:
            try:
                client, self._closer = await self.connector()
            finally:
                self._close_device_screen()
            chat = Chat(client)
            chat.open_newest_first = True  # the newest turns are shown first, older ones come in behind
            if new and session_id is None:
                await client.connect()
                await chat.open(None)
            else:
                if session_id is None:
                    session_id = await self._remembered(chat)
                await chat.connect_and_open(session_id)
        except ClientError as exc:
            await self._release()
            self._connect_failed(str(exc), getattr(exc, "part", ""), session_id, new)
            return
        self.chat = chat
        # the server's front answered: its agent runtime is still loading, and the first turn
        # waits for it -- the status line says "starting the agent…" until that turn is answered
        self.chat_screen.status.starting = client.capabilities is not None and client.capabilities.starting
        self.chat_screen.attach(chat)
        if self.push_notices is not None:
            self.push_notices.hook(client)

    def _server_key(self, chat: Chat) -> str:
        return self.server_key or chat.client.config.url

    async def _remembered(self, chat: Chat) -> str | None:
        """The session that was open when the app last ended on this server, if it still has it."""
        remembered = self.last_session.load(self._server_key(chat))
        if remembered is None:
            return None
        await chat.client.connect()
        live = {s.id for s in await chat.list_sessions() if not s.gone}
        return remembered if remembered in live else None

    def remember_session(self) -> None:
        """The open session is the one a restart opens (called as each session is shown)."""
        chat = self.chat
        if chat is not None and chat.session_id:
            self.last_session.save(self._server_key(chat), chat.session_id)

    def _connect_failed(self, error: str, part: str, session_id: str | None, new: bool) -> None:
        self.chat_screen.show_failure(error)
        movable = self.connector if isinstance(self.connector, AppConnector) else None
        screen = ConnectErrorScreen(
            error,
            self.hint,
            part=part,
            target=movable.target if movable is not None else None,
            check=self._check_target if movable is not None else None,
        )
        self.push_screen(screen, lambda answer: self._after_error(answer, session_id, new))

    # -- the OAuth2 device-code sign-in (rewindtui.tui.screens.device_code) ------------------------
    def _device_prompt(self, uri: str, code: str, complete: str | None) -> None:
        """The connection asks the user to sign in: the address and code, until it has a token."""
        agent = self.connector.settings.url if isinstance(self.connector, AppConnector) else ""
        self.push_screen(DeviceCodeScreen(uri, code, complete, agent=agent or ""), self._device_answer)

    def _device_answer(self, signed_in: bool | None) -> None:
        if signed_in:
            return  # closed by the app once connected (or failed)
        self.workers.cancel_group(self, "connect")  # stops the polling of the token endpoint
        session_id, new = self._connecting
        self._connect_failed("The sign-in was canceled: the app is not connected.", REFUSED, session_id, new)

    def _close_device_screen(self) -> None:
        for screen in list(self.screen_stack):
            if isinstance(screen, DeviceCodeScreen) and screen is self.screen:
                screen.dismiss(True)

    def _check_target(self, target: Target) -> str:
        """Why the connector cannot be pointed at ``target`` ("" if it can)."""
        assert isinstance(self.connector, AppConnector)
        try:
            self.connector.retarget(target)
        except SettingsError as exc:
            return str(exc)
        return ""

    def _after_error(self, answer: bool | Target | None, session_id: str | None, new: bool) -> None:
        """The connect screen's answer: quit, retry, or connect to the corrected address (the
        connector is rebuilt from the corrected settings; no restart)."""
        if isinstance(answer, Target) and isinstance(self.connector, AppConnector):
            self.connector = connector = self.connector.retarget(answer)
            self.hint = connector.hint
            self.connect(session_id, new=new)
        elif answer:
            self.connect(session_id, new=new)
        else:
            self.exit(1)

    def reconnect(self) -> Worker[None] | None:
        """Connect again (a fresh embedded server when we started one) and reopen this session;
        for a server that died or a network that dropped, without quitting."""
        screen = self.chat_screen
        if self.connector is None:
            self.notify("This app was given its connection; it cannot reconnect by itself.", severity="warning")
            return None
        if screen.busy:
            self.notify("Wait for the request in flight to finish (Esc stops a reply).", severity="warning")
            return None
        session_id = self.chat.session_id if self.chat is not None else self.session_id
        return self._reconnect(session_id)

    @work(group="connect", exclusive=True)
    async def _reconnect(self, session_id: str | None) -> None:
        self.chat_screen.show_failure("reconnecting…")
        self.chat = self.chat_screen.chat = None  # until connected again, sends keep the draft
        await self._release()
        await self._open(session_id, False)

    async def _release(self) -> None:
        if self.push_notices is not None:
            await self.push_notices.release()  # its receiver (also when turned on from the palette)
        closer, self._closer = self._closer, None
        if closer is not None:
            await closer()

    async def on_unmount(self) -> None:
        self.remember_session()
        loop = asyncio.get_running_loop()
        for signum in self._signals:
            loop.remove_signal_handler(signum)
        await self._release()

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
