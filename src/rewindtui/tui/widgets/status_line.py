"""One line that says where we are: server, agent, dialect, session, turn state, rewind."""

from __future__ import annotations

from dataclasses import dataclass

from rich.text import Text
from textual.widgets import Static

from rewindtui.textsafe import sanitize_line


@dataclass
class Status:
    server: str = ""
    agent: str = ""
    dialect: str = ""
    session: str = ""
    turn: str = "idle"
    rewind: str = "unknown"
    note: str = ""


class StatusLine(Static):
    DEFAULT_CSS = """
    StatusLine { height: 1; background: $panel; color: $text-muted; padding: 0 1; }
    """

    def show(self, status: Status) -> None:
        text = Text(no_wrap=True, overflow="ellipsis")

        def field(label: str, value: str, style: str = "") -> None:
            if not value:
                return
            if text:
                text.append("  ")
            text.append(f"{label} ", style="dim")
            text.append(sanitize_line(value), style=style)

        if status.note:
            text.append(sanitize_line(status.note) + "  ", style="bold italic")
        field("server", status.server)
        field("agent", status.agent, "bold")
        field("A2A", status.dialect)
        field("session", status.session)
        turn_style = {"rewinding…": "bold reverse", "failed": "bold red", "working": "bold", "submitted": "bold"}
        field("turn", status.turn, turn_style.get(status.turn, ""))
        field("rewind", status.rewind)
        self.update(text)
