"""The rewindtui app: connects (or starts the embedded server), opens a session, shows ChatScreen."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterable
from typing import Any

from textual import work
from textual.app import App, SystemCommand
from textual.binding import Binding
from textual.screen import Screen

from rewindtui.chat import Chat
from rewindtui.client import A2AClient, ClientError
from rewindtui.tui.screens.chat import ChatScreen
from rewindtui.tui.screens.connect_error import ConnectErrorScreen
from rewindtui.tui.screens.help import HelpScreen

Closer = Callable[[], Awaitable[None]]
#: Opens a connected client; returns it and a coroutine function that releases everything.
Connector = Callable[[], Awaitable[tuple[A2AClient, Closer]]]


class RewindApp(App[int]):
    CSS_PATH = "app.tcss"
    TITLE = "rewindtui"
    BINDINGS = [
        Binding("ctrl+q", "quit", "Quit", id="app.quit", tooltip="Quit rewindtui", priority=True),
    ]

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
    ) -> None:
        super().__init__()
        self.connector = connector
        self.session_id = session_id
        self.chat = chat
        self.hint = hint
        self.new_session = new_session
        self._closer: Closer | None = None
        if theme:
            self.theme = theme
        if keymap:
            self.set_keymap(keymap)

    @property
    def chat_screen(self) -> ChatScreen:
        screen = self.get_screen("chat")
        assert isinstance(screen, ChatScreen)
        return screen

    async def on_mount(self) -> None:
        self.install_screen(ChatScreen(), name="chat")
        await self.push_screen("chat")
        if self.chat is not None:
            self.chat_screen.attach(self.chat)
        else:
            self.connect()

    @work(group="connect", exclusive=True)
    async def connect(self) -> None:
        assert self.connector is not None
        try:
            client, self._closer = await self.connector()
            chat = Chat(client)
            if self.new_session and self.session_id is None:
                await client.connect()
                await chat.open(None)
            else:
                await chat.connect_and_open(self.session_id)
        except ClientError as exc:
            await self._release()
            self.chat_screen.show_failure(str(exc))
            self.push_screen(ConnectErrorScreen(str(exc), self.hint), self._after_error)
            return
        self.chat = chat
        self.chat_screen.attach(chat)

    def _after_error(self, retry: bool | None) -> None:
        if retry:
            self.connect()
        else:
            self.exit(1)

    async def _release(self) -> None:
        closer, self._closer = self._closer, None
        if closer is not None:
            await closer()

    async def on_unmount(self) -> None:
        await self._release()

    def action_help(self) -> None:
        if isinstance(self.screen, HelpScreen):
            return
        self.push_screen(HelpScreen(list(self._binding_rows(self.screen))))

    def _binding_rows(self, screen: Screen) -> Iterable[tuple[str, str, str]]:
        """(keys, what it does, binding id) for the bindings of the screen's parts."""
        nodes: list[Any] = [screen, self]
        if isinstance(screen, ChatScreen):
            nodes = [screen.transcript, screen.composer, screen.sessions, screen, self]
        rows: dict[str, tuple[list[str], str]] = {}
        for node in nodes:
            for bindings in node._bindings.key_to_bindings.values():
                for binding in bindings:
                    if not binding.id:
                        continue
                    keys, text = rows.setdefault(binding.id, ([], binding.tooltip or binding.description))
                    shown = self.get_key_display(binding)
                    if shown not in keys:
                        keys.append(shown)
        for binding_id, (keys, text) in rows.items():
            yield " / ".join(keys), text, binding_id

    def get_system_commands(self, screen: Screen) -> Iterable[SystemCommand]:
        yield from super().get_system_commands(screen)
        if not isinstance(screen, ChatScreen):
            return
        transcript = screen.transcript

        def on_selected(action: str) -> Callable[[], None]:
            def run() -> None:
                item = transcript.selected() or (transcript.conversation.items[-1] if transcript.conversation.items else None)
                if item is not None:
                    screen.handle_action(action, item)

            return run

        yield SystemCommand("Rewind last turn", "Rewind to before the last turn (Esc Esc)", screen.rewind_last_turn)
        yield SystemCommand("Rewind to selected message", "Rewind to before the selected message's turn (r)", on_selected("rewind"))
        yield SystemCommand("Edit and resend selected", "Edit the selected turn's message and resend it (e)", on_selected("edit"))
        yield SystemCommand("Fork from selected", "Fork a new session from before the selected turn (f)", on_selected("fork"))
        yield SystemCommand("Sessions panel", "Show or hide the sessions panel (F2)", screen.action_toggle_sessions)
        yield SystemCommand("New session", "Start a new session (ctrl+n)", screen.action_new_session)
        yield SystemCommand("Help", "Keys and how rewind works (F1)", self.action_help)


def run_app(settings: Any) -> int:
    """Run the app with the given settings (see ``rewindtui.settings``)."""
    from rewindtui.connection import app_connector

    connector, hint = app_connector(settings)
    app = RewindApp(
        connector,
        session_id=getattr(settings, "session", None),
        theme=getattr(settings, "theme", None),
        keymap=getattr(settings, "keymap", None) or None,
        hint=hint,
    )
    result = app.run()
    return int(result or 0)
