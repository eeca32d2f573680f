"""One line that says where we are: server, agent, dialect, session, turn state, rewind.

On a narrow terminal the line abbreviates rather than cuts: labels go first, then the agent and
dialect, then the session's name (its id stays), so that server, session, turn state and the
rewind mode still show at 60 columns. A note (e.g. why we are disconnected) comes last.
"""

from __future__ import annotations

from dataclasses import dataclass

from rich.text import Text
from textual.widgets import Static

from rewindtui.base.textsafe import sanitize_line

_TURN_STYLES = {
    "rewinding…": "bold reverse",
    "stopping…": "bold reverse",
    "failed": "bold red",
    "canceled": "bold yellow",
    "interrupted": "bold yellow",
    "input-required": "bold magenta",
    "stopped": "bold yellow",
    "working": "bold",
    "submitted": "bold",
    "sending…": "bold",
    "starting the agent…": "bold",
}
#: what a first turn says while it waits for the agent to start (the card said it was starting)
STARTING = "starting the agent…"


@dataclass
class Status:
    server: str = ""
    agent: str = ""
    dialect: str = ""
    session: str = ""  # the session's id
    session_name: str = ""
    turn: str = "idle"
    rewind: str = "unknown"  # what the server offers: a2a, rest, unavailable, off
    mode: str = ""  # the screen's mode: "rewind", "edit" or ""
    note: str = ""
    undo: str = ""  # what ctrl+z undoes now ("" : the composer's text undo)
    redo: str = ""  # what ctrl+r does again now ("" : nothing)
    starting: bool = False  # the agent was still starting when we connected (contract.PARAM_STARTING)


_MODE_LABELS = {"rewind": ("⟲ REWIND MODE", "⟲ REWIND"), "edit": ("✎ EDITING", "✎ EDIT")}


def _middle(text: str, width: int) -> str:
    """``text`` shortened in the middle to ``width`` cells (hosts and ids keep both ends)."""
    if len(text) <= width:
        return text
    if width <= 1:
        return text[:width]
    head = (width - 1) // 2
    return text[:head] + "…" + text[len(text) - (width - 1 - head) :]


def status_text(status: Status, width: int) -> Text:
    """The status line for ``width`` cells: the fullest form that fits."""
    server = sanitize_line(status.server)
    sid = sanitize_line(status.session)[:8]
    name = sanitize_line(status.session_name)
    turn = sanitize_line(status.turn)
    if status.starting and turn == "submitted":  # the server holds the turn until its agent runs
        turn = STARTING
    rewind = sanitize_line(status.rewind)
    note = sanitize_line(status.note)
    mode = _MODE_LABELS.get(status.mode)
    session = f"{name} ({sid})" if name and sid else (name or sid)

    def build(level: int, server_width: int | None = None) -> Text:
        labels = level == 0
        text = Text(no_wrap=True, overflow="ellipsis")
        sep = "  " if labels else " · "

        def field(label: str, value: str, style: str = "") -> None:
            if not value:
                return
            if text:
                text.append(sep, style="dim")
            if labels and label:
                text.append(f"{label} ", style="dim")
            text.append(value, style=style)

        if mode:
            text.append(mode[0] if level < 2 else mode[1], style="bold reverse")
        field("server", server if server_width is None else _middle(server, server_width))
        if level < 2:
            field("agent", sanitize_line(status.agent), "bold")
            field("A2A", sanitize_line(status.dialect))
        # the session's name stays at any width, shortened (issue 33): which session is open is
        # what a narrow pane needs most after the server
        room = 12 if level == 2 else 8
        brief = name if len(name) <= room else name[: room - 1].rstrip() + "…"
        named = f"{brief} ({sid})" if name and sid else (brief or sid)
        field("session", session if level < 2 else (named if level < 4 else sid))
        field("turn", turn, _TURN_STYLES.get(turn, ""))
        field("rewind", rewind if labels else f"⟲ {rewind}")
        if status.undo:
            field("", sanitize_line(status.undo), "bold")
        if status.redo:
            field("", sanitize_line(status.redo), "bold")
        if note:
            text.append("  " + note, style="bold italic")
        return text

    for level in (0, 1, 2, 3):  # 2, 3: the session's name shortened, never dropped
        text = build(level)
        if text.cell_len - (len(note) + 2 if note else 0) <= width:
            break
    else:
        # still too wide: shorten the server's address in the middle, never drop it; the session's
        # name goes only when the turn state and rewind would not fit with it
        for level in (3, 4):
            essentials = build(level).cell_len - len(server) - (len(note) + 2 if note else 0)
            text = build(level, server_width=max(6, width - essentials))
            if text.cell_len - (len(note) + 2 if note else 0) <= width:
                break
    text.truncate(width, overflow="ellipsis")
    return text


class StatusLine(Static):
    DEFAULT_CSS = """
    StatusLine { height: 1; background: $panel; color: $text-muted; padding: 0 1; }
    """

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.status = Status()

    def show(self, status: Status) -> None:
        if status.starting and self.status.turn == "submitted" and status.turn != "submitted":
            status.starting = False  # the first turn got its first answer: the agent has started
        self.status = Status(**vars(status))
        self.refresh()

    def render(self) -> Text:
        return status_text(self.status, self.content_region.width or self.size.width or 80)
