"""The sessions panel: the user's sessions, newest first; Enter opens one, n starts a new one."""

from __future__ import annotations

from rich.text import Text
from textual.binding import Binding
from textual.message import Message
from textual.widgets import OptionList
from textual.widgets.option_list import Option

from rewindtui.client import Session
from rewindtui.textsafe import sanitize_line


class SessionsPanel(OptionList):
    BINDINGS = [
        Binding("n", "new", "New session", id="sessions.new", tooltip="Start a new session"),
        Binding("escape", "close", "Close", id="sessions.close", tooltip="Close the sessions panel"),
    ]

    DEFAULT_CSS = """
    SessionsPanel { width: 34; dock: left; border-right: tall $panel-lighten-1; }
    """

    class Open(Message):
        def __init__(self, session_id: str) -> None:
            super().__init__()
            self.session_id = session_id

    class New(Message):
        pass

    class Close(Message):
        pass

    def show_sessions(self, sessions: list[Session], current: str | None) -> None:
        self.clear_options()
        ordered = sorted(sessions, key=lambda s: s.updated_at or s.created_at or "", reverse=True)
        highlight = None
        for index, session in enumerate(ordered):
            label = Text(no_wrap=True, overflow="ellipsis")
            label.append("● " if session.id == current else "  ", style="bold")
            label.append(sanitize_line(session.name or "(untitled)"))
            when = (session.updated_at or session.created_at or "")[:16].replace("T", " ")
            if when:
                label.append(f"\n  {when}", style="dim")
            self.add_option(Option(label, id=session.id))
            if session.id == current:
                highlight = index
        if highlight is not None:
            self.highlighted = highlight

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        event.stop()
        if event.option.id:
            self.post_message(self.Open(event.option.id))

    def action_new(self) -> None:
        self.post_message(self.New())

    def action_close(self) -> None:
        self.post_message(self.Close())
