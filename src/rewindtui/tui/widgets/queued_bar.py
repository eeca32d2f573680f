"""The messages queued while a reply streams in, shown under the reply, above the composer."""

from __future__ import annotations

from rich.text import Text
from textual.widgets import Static

from rewindtui.base.textsafe import sanitize_line

_EXCERPT = 80


class QueuedBar(Static):
    DEFAULT_CSS = """
    QueuedBar { height: auto; max-height: 6; padding: 0 1; color: $text-muted; display: none; }
    QueuedBar.-shown { display: block; }
    """

    def show_queue(self, texts: list[str], *, waiting: bool = True) -> None:
        if not texts:
            self.set_class(False, "-shown")
            self.update("")
            return
        out = Text()
        when = "sent in order when the reply ends" if waiting else "not sent yet"
        out.append(f"queued ({len(texts)}, {when}; ctrl+z or ↑ takes the last back to edit or cancel)", style="bold")
        for number, text in enumerate(texts, 1):
            line = sanitize_line(text.replace("\n", " ⏎ "))
            line = line if len(line) <= _EXCERPT else line[: _EXCERPT - 1] + "…"
            out.append(f"\n ⏳ {number}. {line}")
        self.update(out)
        self.set_class(True, "-shown")
