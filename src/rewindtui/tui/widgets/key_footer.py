"""The footer with the quit key first: Textual's footer lists the focused widget's keys, then the
screen's, then the app's, and cuts what does not fit at the right, so ctrl+q (the app's) went
first at narrow widths. Here the app's quit key leads, whatever the width."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.widget import Widget
from textual.widgets import Footer

#: the footer keys that lead (their Textual action names)
FIRST = ("quit",)


def leading(widgets: list[Widget]) -> list[Widget]:
    """``widgets`` with the footer keys of :data:`FIRST` moved to the front, in their order."""
    first = [w for w in widgets if getattr(w, "action", None) in FIRST]
    return first + [w for w in widgets if w not in first]


class KeyFooter(Footer):
    def compose(self) -> ComposeResult:
        yield from leading(list(super().compose()))
