"""The tab strip: one line at the top of each chat screen while two or more tabs are open.

Each tab shows its number, its agent and session, and a marker when it is not shown and something
happens in it: ``?`` when a dialog of its own is open there, ``⋯`` while its reply is coming in (or
a rewind is in flight), ``●`` when it changed since it was last looked at. The shown tab is
highlighted. A click on a tab shows it. The strip holds no state of its own: the app gives it the
entries (:meth:`TabStrip.show`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from rich.style import Style
from rich.text import Text
from textual.widgets import Static

from rewindtui.tui import interaction

#: the marker of a hidden tab, by what happened in it (rewindtui.tui.tabs.Tabs.news)
MARKERS = {"asks": ("?", "bold magenta"), "streaming": ("⋯", "bold yellow"), "news": ("●", "bold cyan")}


@dataclass(frozen=True)
class TabEntry:
    label: str  #: already safe to show (rewindtui.tui.tabs.Tab.label)
    news: str = ""  #: "", "asks", "streaming" or "news"
    shown: bool = False


class TabStrip(Static):
    DEFAULT_CSS = """
    TabStrip { height: 1; width: 100%; background: $panel; color: $text-muted; }
    """

    def show(self, entries: Sequence[TabEntry], keymap: Mapping[str, str] | None = None) -> None:
        drawn = (tuple(entries), tuple(sorted((keymap or {}).items())), self.size.width)
        if drawn == self._drawn:
            return  # the app asks twice a second: drawn again only when something changed
        self._drawn = drawn
        self.entries = list(entries)
        out = Text(no_wrap=True, overflow="ellipsis")
        for number, entry in enumerate(entries, 1):
            if number > 1:
                out.append("│", style="dim")
            click = Style(meta={"@click": f"app.show_tab({number - 1})"})
            style = Style(bold=True, reverse=True) if entry.shown else Style()
            out.append(f" {number} {entry.label}", style=style + click)
            if entry.news:
                mark, mark_style = MARKERS[entry.news]
                out.append(f" {mark}", style=Style.parse(mark_style) + click)
            out.append(" ", style=style + click)
        keys = [interaction.keys_of(i, keymap) for i in ("app.new_tab", "app.next_tab", "app.close_tab")]
        hint = f"  {keys[0]} new · {keys[1]} next · {keys[2]} close"
        if out.cell_len + len(hint) <= max(self.size.width, 0):
            out.append(hint, style="dim")
        self.update(out)

    entries: list[TabEntry] = []
    _drawn: tuple[object, ...] = ()
