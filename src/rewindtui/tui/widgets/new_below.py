"""A one-line marker under the transcript: new content came in below while the user reads above."""

from __future__ import annotations

from textual.widgets import Static

TEXT = "↓ new below — PgDn or scroll down to follow"


class NewBelow(Static):
    DEFAULT_CSS = """
    NewBelow { height: 1; display: none; color: $accent; text-style: bold; padding: 0 1; }
    NewBelow.-shown { display: block; }
    """

    def show_marker(self, shown: bool) -> None:
        if shown == self.has_class("-shown"):
            return  # as it is: each change that came in below asks again (an update lays out the screen)
        self.update(TEXT if shown else "")
        self.set_class(shown, "-shown")
