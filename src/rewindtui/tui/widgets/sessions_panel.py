"""The sessions panel: the user's sessions, newest first.

Each entry shows the session's title and when it was last used; a fork says which session and
turn it came from (the server names a fork "Fork of <title> @ turn N"; the panel adds the
original's title as it is now, ``↳ fork of <title> @ turn N``, which a rename keeps); a session
with rewound branches (kept on the server, restorable) says how many; a session this client
remembers but the server no longer knows is shown marked "gone". Enter opens one, ``t`` opens it
in a new tab (the app's tabs), ``n`` starts a new one, ``r`` renames, ``d`` deletes (after a question).
"""

from __future__ import annotations

from rich.console import Group
from rich.padding import Padding
from rich.text import Text
from textual import events
from textual.message import Message
from textual.widgets import OptionList
from textual.widgets.option_list import Option

from rewindtui.a2a import contract
from rewindtui.base.textsafe import sanitize_line
from rewindtui.client.a2a_client import Session
from rewindtui.output.export import local_time
from rewindtui.tui import interaction
from rewindtui.tui.keys import run_binding_now

#: the original's title is cut to this many characters in a fork's "from" line
ORIGIN_LIMIT = 18


def fork_origin(session: Session, titles: dict[str, str]) -> tuple[str, int | None] | None:
    """(the original's title, or "a deleted session"; the turn) for a fork, else None.
    ``titles`` are the listed sessions' titles, already made safe to show."""
    origin = session.raw.get(contract.SESSION_FORKED_FROM_FIELD)
    if not isinstance(origin, str) or not origin:
        return None
    turn = session.raw.get(contract.SESSION_FORK_TURN_FIELD)
    title = titles.get(origin)
    return (_short(title) if title else "a deleted session"), (
        turn if isinstance(turn, int) and not isinstance(turn, bool) else None
    )


def _short(text: str, limit: int = ORIGIN_LIMIT) -> str:
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"


def rewound_branches(session: Session) -> int:
    count = session.raw.get(contract.SESSION_BRANCHES_FIELD)
    return count if isinstance(count, int) and not isinstance(count, bool) else 0


def session_lines(session: Session, current: str | None, titles: dict[str, str]) -> list[Text]:
    """``● title``, then ``↳ fork of <original> @ turn N`` for a fork, when it was last used, its
    rewound branches, and whether the server still has it: one short line each."""
    first = Text("● " if session.id == current else "", style="bold", no_wrap=True, overflow="ellipsis")
    first.append(sanitize_line(session.name) or "(untitled)", style="strike dim" if session.gone else "")
    lines = [first]

    def more(text: str, style: str = "dim") -> Text:
        line = Text(text, style=style, no_wrap=True, overflow="ellipsis")
        lines.append(line)
        return line

    origin = fork_origin(session, titles)
    if origin is not None:
        original, turn = origin
        line = more("↳ fork of ")
        line.append(original, style="italic")
        if turn is not None:
            line.append(f" @ turn {turn}")
    when = local_time(session.updated_at or session.created_at)[5:]
    if when:
        more(when)
    branches = rewound_branches(session)
    if branches:
        more(f"⟲ {branches} rewound branch{'es' if branches != 1 else ''}")
    if session.gone:
        more("gone from the server")
    return lines


def session_label(session: Session, current: str | None, titles: dict[str, str]) -> Group:
    """The entry: its first line (``●`` marks the open session), the others indented under it."""
    first, *rest = session_lines(session, current, titles)
    head = first if session.id == current else Padding(first, (0, 0, 0, 2))
    return Group(head, *(Padding(line, (0, 0, 0, 2)) for line in rest))


class SessionsPanel(OptionList):
    BINDINGS = interaction.bindings("sessions")

    DEFAULT_CSS = """
    SessionsPanel {
        width: 30%; min-width: 18; max-width: 48; height: 100%; max-height: 100%;
        dock: left; border-right: tall $panel-lighten-1;
    }
    """

    class Open(Message):
        def __init__(self, session_id: str) -> None:
            super().__init__()
            self.session_id = session_id

    class New(Message):
        pass

    class OpenTab(Message):
        """Open a session in a new tab (handled by the app: the chat screen lets it through)."""

        def __init__(self, session_id: str) -> None:
            super().__init__()
            self.session_id = session_id

    class Close(Message):
        pass

    class TypeAhead(Message):
        """A printable key that is no command of the panel: text for the composer."""

        def __init__(self, text: str) -> None:
            super().__init__()
            self.text = text

    class Rename(Message):
        def __init__(self, session: Session) -> None:
            super().__init__()
            self.session = session

    class Delete(Message):
        def __init__(self, session: Session) -> None:
            super().__init__()
            self.session = session

    def __init__(self, *, id: str | None = None, classes: str | None = None) -> None:
        super().__init__(id=id, classes=classes)
        self.sessions: list[Session] = []
        self.current: str | None = None  # the open session when the list was last shown

    def show_sessions(self, sessions: list[Session], current: str | None) -> None:
        """List ``sessions`` (newest first), keeping the highlight on the same session if it is
        still there, else on the open one, else (a new session, not listed until it has a turn) on
        the newest: Enter opens it."""
        # the open session changed since the last listing (a new one, a fork): highlight it, so r,
        # d and Enter act on the session the user is in, not the one they left
        moved = current != self.current
        keep = self.highlighted_session.id if self.highlighted_session is not None and not moved else current
        self.current = current
        self.clear_options()
        self.sessions = sorted(sessions, key=lambda s: s.updated_at or s.created_at or "", reverse=True)
        titles = {s.id: sanitize_line(s.name) or "(untitled)" for s in self.sessions}
        self.add_options([Option(session_label(s, current, titles), id=s.id) for s in self.sessions])
        for index, session in enumerate(self.sessions):
            if session.id == keep:
                self.highlighted = index
                break
        else:
            self.highlighted = 0 if self.sessions else None

    def show_note(self, text: str) -> None:
        self.clear_options()
        self.sessions = []
        self.add_option(Option(Text(text, style="dim"), disabled=True))

    @property
    def highlighted_session(self) -> Session | None:
        index = self.highlighted
        if index is None or not 0 <= index < len(self.sessions):
            return None
        return self.sessions[index]

    async def _on_key(self, event: events.Key) -> None:
        if await run_binding_now(self, event):
            return
        if event.is_printable and event.character and not event.key.startswith(("alt+", "ctrl+")):
            event.stop()
            event.prevent_default()
            self.post_message(self.TypeAhead(event.character))
            return
        await super()._on_key(event)

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        event.stop()
        if event.option.id:
            self.post_message(self.Open(event.option.id))

    def action_new(self) -> None:
        self.post_message(self.New())

    def action_open_tab(self) -> None:
        session = self.highlighted_session
        if session is None or session.gone:
            self.app.bell()
            return
        self.post_message(self.OpenTab(session.id))

    def action_rename(self) -> None:
        session = self.highlighted_session
        if session is None:
            self.app.bell()
            return
        self.post_message(self.Rename(session))

    def action_delete(self) -> None:
        session = self.highlighted_session
        if session is None:
            self.app.bell()
            return
        self.post_message(self.Delete(session))

    def action_close(self) -> None:
        self.post_message(self.Close())
