"""Several agents at once: tabs, one chat screen each.

Each tab is a :class:`~rewindtui.tui.screens.chat.ChatScreen` of its own -- its session, draft,
rewind state, undo and queue are the screen's, untouched by the others -- with its own
connection (its connector and client: two tabs can talk to two servers). A tab lives in a
Textual *mode* of its own (the first one in the app's default mode), so a dialog opened in a tab
stays with that tab, and a tab that is not shown keeps its workers: its reply goes on streaming.

This module is the list itself (which tab is shown, the next one, what a tab is called, whether a
hidden one has news), kept free of the app so it can be tested without a terminal. The app's
tab control (:mod:`rewindtui.tui.tab_control`) opens, shows and closes tabs; the strip
(:mod:`rewindtui.tui.widgets.tab_strip`) shows them when there are two or more.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from rewindtui.base.textsafe import sanitize_line

if TYPE_CHECKING:
    from rewindtui.chat import Chat
    from rewindtui.tui.push_notices import PushNotices
    from rewindtui.tui.screens.chat import ChatScreen

#: the mode of the first tab (Textual's own default mode: the app with one tab is the app as it was)
FIRST_MODE = "_default"
#: at most this many tabs: each holds a connection, and alt+1..9 style numbering stays readable
MAX_TABS = 9
#: a tab's name in the strip is cut to this many characters
LABEL_LIMIT = 24

Closer = Callable[[], Awaitable[None]]


@dataclass(eq=False)
class Tab:
    """One tab: its screen (None until the app has mounted), its connection and its chat."""

    mode: str
    connector: Any = None
    screen: ChatScreen | None = None
    chat: Chat | None = None
    closer: Closer | None = None
    push_notices: PushNotices | None = None
    #: what drafts and prompt histories are keyed by when the address is not stable ("": the URL)
    server_key: str = ""
    #: a connect is under way (see ``RewindApp.connecting``)
    connecting: bool = False
    #: the session and "new" of the connection in progress (for a retry after a canceled sign-in)
    pending: tuple[str | None, bool] = (None, False)
    #: the saved agent this tab was opened for ("" : the app's own agent)
    agent: str = ""
    #: what the tab showed when it was last looked at (see :func:`fingerprint`)
    seen: tuple[Any, ...] | None = None
    #: the tab was closed: its workers must not write into it any more
    closed: bool = False

    @property
    def connect_group(self) -> str:
        """The worker group of this tab's connect (one at a time per tab, never another tab's)."""
        return "connect" if self.mode == FIRST_MODE else f"connect-{self.mode}"

    @property
    def busy(self) -> bool:
        """A reply is coming in, or a rewind is in flight."""
        screen = self.screen
        return screen is not None and (screen.replying or screen.rewinding)

    def label(self) -> str:
        """What the strip calls the tab: the agent's name and the session's (or its id's start)."""
        screen = self.screen
        status = screen.status if screen is not None else None
        # a saved agent by the name the user gave it; else the name its card gives
        agent = sanitize_line(self.agent or (status.agent if status is not None else "")) or "agent"
        if self.chat is None:
            session = "connecting…" if self.connecting else "not connected"
        else:
            name = status.session_name if status is not None else ""
            session = sanitize_line(name) or (self.chat.session_id or "")[:8] or "new"
        text = f"{agent} · {session}"
        return text if len(text) <= LABEL_LIMIT else text[: LABEL_LIMIT - 1] + "…"


def fingerprint(tab: Tab) -> tuple[Any, ...]:
    """What a hidden tab's news is measured against: its session, how many items it shows, the
    state of its turn and how long its last item is (a streamed reply grows)."""
    chat = tab.chat
    if chat is None:
        return ()
    items = chat.conversation.items
    last = items[-1] if items else None
    return (chat.session_id, len(items), chat.conversation.turn_state, len(getattr(last, "text", "") or ""))


@dataclass(eq=False)
class Tabs:
    """The tabs in order and the one shown."""

    tabs: list[Tab] = field(default_factory=list)
    index: int = 0
    _made: int = 0

    def __iter__(self) -> Iterator[Tab]:
        return iter(self.tabs)

    def __len__(self) -> int:
        return len(self.tabs)

    @property
    def current(self) -> Tab:
        return self.tabs[self.index]

    def new_mode(self) -> str:
        """A mode name no tab has had (closed tabs' modes are not reused)."""
        self._made += 1
        return f"tab-{self._made}"

    def add(self, tab: Tab) -> int:
        """Put ``tab`` after the current one; its position."""
        position = self.index + 1 if self.tabs else 0
        self.tabs.insert(position, tab)
        return position

    def step(self, delta: int) -> int:
        """The position ``delta`` tabs away from the shown one, round the end."""
        return (self.index + delta) % len(self.tabs) if self.tabs else 0

    def remove(self, tab: Tab) -> int:
        """Take ``tab`` out; the position of the tab to show then (the one after it, else before)."""
        position = self.tabs.index(tab)
        self.tabs.remove(tab)
        if not self.tabs:
            self.index = 0
            return 0
        if position < self.index:
            self.index -= 1
        elif position == self.index:
            self.index = min(position, len(self.tabs) - 1)
        return self.index

    def position_of_session(self, server: str, session_id: str, key: Callable[[Tab], str]) -> int | None:
        """The tab that has ``session_id`` of ``server`` open, if one has."""
        for position, tab in enumerate(self.tabs):
            if tab.chat is not None and tab.chat.session_id == session_id and key(tab) == server:
                return position
        return None

    def news(self, tab: Tab, *, asking: bool = False) -> str:
        """The strip's marker for a tab: "" (shown, or nothing new), "asks" (a dialog of its own
        waits), "streaming" or "news"."""
        if tab is self.current:
            return ""
        if asking:
            return "asks"
        if tab.busy:
            return "streaming"
        return "news" if tab.seen is not None and fingerprint(tab) != tab.seen else ""

    def looked_at(self, tab: Tab) -> None:
        tab.seen = fingerprint(tab)
