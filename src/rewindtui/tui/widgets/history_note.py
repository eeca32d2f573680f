"""A plain line above the transcript that says what the server could not give back (e.g. a server
with no REST API and no A2A ListTasks cannot return a session's earlier turns), so that a short
transcript is never mistaken for the whole conversation. Hidden when there is nothing to say."""

from __future__ import annotations

from rich.text import Text
from textual.widgets import Static

from rewindtui.base.textsafe import sanitize_line


class HistoryNote(Static):
    DEFAULT_CSS = """
    HistoryNote { height: auto; display: none; padding: 0 1; background: $warning 15%; color: $text; }
    HistoryNote.-shown { display: block; }
    """

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.note = ""

    def show_note(self, note: str) -> None:
        if note == self.note:
            return
        self.note = note
        self.set_class(bool(note), "-shown")
        text = Text()
        if note:
            text.append("ⓘ History: ", style="bold")
            text.append(sanitize_line(note))
        self.update(text)
