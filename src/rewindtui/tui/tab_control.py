"""The app's tabs in action: opening one (ctrl+t, the sessions panel's ``t``), showing another
(ctrl+PgUp/PgDn, a click on the strip), closing one (alt+w), and the strip on every tab's screen.

The list itself (which tab is shown, names, news) is :mod:`rewindtui.tui.tabs`, kept free of
Textual; each tab connects through :mod:`rewindtui.tui.connect_control`. The app holds one
:class:`TabControl` and hands its tab actions and the panel's message to it.
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Any

from textual.screen import ModalScreen
from textual.timer import Timer
from textual.widget import Widget

from rewindtui.chat import Chat
from rewindtui.config.connection import AppConnector
from rewindtui.config.settings import SettingsError
from rewindtui.tui import interaction
from rewindtui.tui.push_notices import PushNotices
from rewindtui.tui.screens.chat import ChatScreen
from rewindtui.tui.screens.confirm import ConfirmScreen
from rewindtui.tui.tabs import FIRST_MODE, MAX_TABS, Tab, Tabs
from rewindtui.tui.widgets.tab_strip import TabEntry, TabStrip

if TYPE_CHECKING:
    from rewindtui.tui.app import RewindApp

#: seconds between refreshes of the tab strip's markers (a local look: no request)
STRIP_TICK = 0.5
#: seconds a closing tab waits for its stopped reply to end before its connection is closed
CLOSE_WAIT = 10.0


def server_key_of(connector: Any) -> str:
    """What drafts and prompt histories are keyed by when the address is not stable: the embedded
    server listens on a new port each start ("": its URL)."""
    target = connector.target if isinstance(connector, AppConnector) else None
    return "embedded" if target is not None and target.kind == "embedded" else ""


def fresh_connector(connector: Any) -> Any:
    """A connector for another tab on the same agent: its own connection (an embedded server
    already running on the data dir is found again and shared, not started twice)."""
    return AppConnector(connector.settings) if isinstance(connector, AppConnector) else connector


class TabControl:
    """Opens, shows and closes the app's tabs; keeps the strip on each tab's screen current."""

    def __init__(self, app: RewindApp) -> None:
        self.app = app
        self._strip_timer: Timer | None = None

    @property
    def tabs(self) -> Tabs:
        return self.app.tabs

    def make_screen(self, tab: Tab) -> ChatScreen:
        """The tab's chat screen, with the app's stores; it remembers its session as each is shown."""
        app = self.app
        screen = ChatScreen(app.prompt_store, app.draft_store, app.queued_store)
        if app.data_dir is not None:
            screen.exports.files_dir = app.data_dir  # a copy's fallback file stays in the data dir
        screen.opened = lambda: app.connect_control.remember_session(tab)
        tab.screen = screen
        tab.push_notices = PushNotices(app, screen)
        return screen

    # -- which tab a dialog or a notice belongs to -------------------------------------------------
    def hidden_caller_mode(self) -> str | None:
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

    def tab_number(self, mode: str) -> int:
        """The tab's number as the strip shows it (1 is the first), 0 if no tab has that mode."""
        return next((n for n, tab in enumerate(self.tabs, 1) if tab.mode == mode), 0)

    def asking(self, tab: Tab) -> bool:
        """A dialog waits on the tab (its stack holds more than its chat screen)."""
        stack = self.app._screen_stacks.get(tab.mode, [])  # Textual's stacks, one per mode
        return any(isinstance(screen, ModalScreen) for screen in stack)

    # -- opening a tab ---------------------------------------------------------------------------
    def saved_agents(self) -> list[tuple[str, str]]:
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

    def agent_connector(self, name: str) -> AppConnector:
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

    def why_no_new_tab(self) -> str:
        if self.tabs.current.connector is None:
            return "This app was given its connection; it cannot open another tab."
        if len(self.tabs) >= MAX_TABS:
            keys = interaction.keys_of("app.close_tab", self.app.keymap_overrides)
            return f"At most {MAX_TABS} tabs are open at once: close one first ({keys})."
        return ""

    def new_tab(self) -> None:
        """ctrl+t: a new tab -- this agent with a new session, or a saved agent chosen from a list."""
        app = self.app
        why = self.why_no_new_tab()
        if why:
            app.notify(why, title="Tabs", severity="warning", markup=False)
            return
        saved = self.saved_agents()
        if not saved:
            current = self.tabs.current
            app.run_worker(self.open_tab(fresh_connector(current.connector), agent=current.agent), group="tabs")
            return
        from rewindtui.tui.screens.new_tab import NewTabScreen

        this = app.chat_screen.status.agent or "this agent"
        app.push_screen(NewTabScreen(this, saved), self._new_tab_chosen)

    def _new_tab_chosen(self, choice: str | None) -> None:
        if choice is None:
            return  # backed out: no tab
        if not choice:
            connector: Any = fresh_connector(self.tabs.current.connector)
        else:
            try:
                connector = self.agent_connector(choice)
            except SettingsError as exc:
                self.app.notify(f"No tab opened: {exc}", title="Tabs", severity="error", markup=False)
                return
        self.app.run_worker(self.open_tab(connector, agent=choice or self.tabs.current.agent), group="tabs")

    async def open_tab(
        self, connector: Any, *, session_id: str | None = None, agent: str = "", chat: Chat | None = None
    ) -> Tab:
        """A new tab after the shown one, shown, connecting on its own connection to open
        ``session_id`` (None: a new session); or showing ``chat``, a connected chat given as is."""
        tab = Tab(self.tabs.new_mode(), connector=connector, agent=agent, server_key=server_key_of(connector))
        screen = self.make_screen(tab)
        self.app.add_mode(tab.mode, lambda: screen)
        tab.connecting = chat is None
        position = self.tabs.add(tab)
        await self.show(position)
        if chat is not None:
            tab.chat = chat
            screen.attach(chat)
            if tab.push_notices is not None:
                tab.push_notices.hook(chat.client)
            self.sync_strips()
        else:
            self.app.connect_control.connect(session_id, new=session_id is None, tab=tab)
        return tab

    def open_session(self, session_id: str) -> None:
        """F2, ``t``: the highlighted session in a new tab (or the tab that has it open already)."""
        app = self.app
        current = self.tabs.current
        if current.chat is not None:
            key = app.connect_control.server_key(current.chat, current)
            position = self.tabs.position_of_session(
                key, session_id, lambda t: app.connect_control.server_key(t.chat, t) if t.chat is not None else ""
            )
            if position is not None:
                app.notify(f"That session is open in tab {position + 1}.", title="Tabs", markup=False)
                app.run_worker(self.show(position), group="tabs")
                return
        why = self.why_no_new_tab()
        if why:
            app.notify(why, title="Tabs", severity="warning", markup=False)
            return
        connector = fresh_connector(current.connector)
        app.run_worker(self.open_tab(connector, session_id=session_id, agent=current.agent), group="tabs")

    # -- showing a tab ---------------------------------------------------------------------------
    async def show(self, position: int) -> None:
        """Show the tab at ``position``; the one left keeps running (its reply goes on streaming)."""
        left, shown = self.tabs.current, self.tabs.tabs[position]
        if left is not shown:
            self.tabs.looked_at(left)  # its news from now on is what changes after this
        self.tabs.index = position
        if self.app.current_mode != shown.mode:
            await self.app.switch_mode(shown.mode)
        self.sync_strips()

    async def next_tab(self, delta: int) -> None:
        if len(self.tabs) < 2:
            keys = interaction.keys_of("app.new_tab", self.app.keymap_overrides)
            self.app.notify(f"This is the only tab ({keys} opens another).", title="Tabs", markup=False)
            return
        await self.show(self.tabs.step(delta))

    async def show_tab(self, position: int) -> None:
        """A click on the strip: show that tab."""
        if 0 <= position < len(self.tabs):
            await self.show(position)

    # -- closing a tab ---------------------------------------------------------------------------
    def close_tab(self) -> None:
        """Close the shown tab: its draft is kept for its session; during a reply it asks first and
        then stops the reply cleanly; a rewind in flight is let finish."""
        app = self.app
        tab = self.tabs.current
        screen = tab.screen
        if len(self.tabs) < 2 or screen is None:
            keys = interaction.keys_of("app.quit", app.keymap_overrides)
            app.notify(f"This is the only tab; {keys} quits.", title="Tabs", markup=False)
            return
        if screen.rewinding:
            app.notify(
                "A rewind is in flight in this tab: close it once it has finished.",
                title="Tabs",
                severity="warning",
                markup=False,
            )
            return
        if isinstance(app.screen, ConfirmScreen) and app.screen.purpose == "close-tab":
            app.screen.dismiss(True)  # alt+w again: yes
            return
        kept = not screen.composer.text or (
            app.draft_store is not None and screen.chat is not None and bool(screen.chat.session_id)
        )
        if kept and not screen.replying:
            app.run_worker(self.close(tab), group="tabs")
            return
        reasons = []
        if screen.replying:
            reasons.append("Its reply is stopped (what came stays on the server as a stopped turn).")
        if not kept and app.draft_store is None:
            reasons.append("This app keeps no files (no data dir), so the draft in the composer cannot be kept.")
        elif not kept:
            reasons.append(
                "Nothing was sent in this tab yet (no session), so the draft in the composer cannot be kept."
            )

        def answered(go: bool | None) -> None:
            if go:
                app.run_worker(self.close(tab, lose_draft=not kept), group="tabs")

        app.push_screen(
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

    async def close(self, tab: Tab, *, lose_draft: bool = False) -> None:
        app = self.app
        screen = tab.screen
        assert screen is not None
        if screen.composer.text and not screen.memory.keep_draft() and not lose_draft:
            return  # it could not be kept after all (the store said why): the tab stays, the draft in it
        if screen.replying:
            screen.turns.stop_reply()
        for worker in list(screen.ops.workers.values()):
            if worker is not None and not worker.is_finished:
                try:
                    await asyncio.wait_for(worker.wait(), CLOSE_WAIT)
                except Exception:  # its own handler said what failed; the tab goes anyway
                    pass
        if tab not in self.tabs.tabs:
            return  # closed twice
        app.connect_control.remember_session(tab)
        tab.closed = True
        self.tabs.remove(tab)
        shown = self.tabs.current
        if app.current_mode != shown.mode:
            await app.switch_mode(shown.mode)
        if tab.mode != FIRST_MODE:
            await app.remove_mode(tab.mode)
        # the first tab's screen stays in the app's default mode, never shown again
        app.workers.cancel_group(app, tab.connect_group)
        await app.connect_control.release(tab)
        self.sync_strips()

    # -- the strip -------------------------------------------------------------------------------
    def sync_strips(self) -> None:
        """The strip on every tab's screen (two tabs or more), with each tab's name and news."""
        many = len(self.tabs) > 1
        entries = [
            TabEntry(tab.label(), self.tabs.news(tab, asking=self.asking(tab)), tab is self.tabs.current)
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
            strip.show(entries, self.app.keymap_overrides)
        if many and self._strip_timer is None:
            self._strip_timer = self.app.set_interval(STRIP_TICK, self.sync_strips, name="tab-strip")
        elif not many and self._strip_timer is not None:
            self._strip_timer.stop()
            self._strip_timer = None
