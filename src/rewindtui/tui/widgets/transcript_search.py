"""The search's hits in the transcript (:class:`~rewindtui.tui.widgets.transcript.Transcript`):
each occurrence of the query in a drawn message highlighted, the current hit more strongly, and the
view brought to a hit -- also one far off-screen in a long session, whose items above are measured
only by estimate (the line it lands on is where the layout puts it; the view does not jump when the
items around it are drawn).

Occurrences are found in the lines as drawn (case-insensitive, within a line, in the messages'
bodies: not in headers or buttons). Which hit is current is said as (item, n-th occurrence in the
item) by the search (``model/search.py``, over the items' text); a message drawn differently from
its text (Markdown, a tool line cut short) may show fewer occurrences: the view then goes to the
item and marks its last drawn occurrence; one whose tool lines, cut short, show none has them
shown whole (as alt+t does)."""

from __future__ import annotations

import unicodedata
from typing import TYPE_CHECKING

from rich.segment import Segment
from rich.style import Style
from textual.strip import Strip

from rewindtui.model import ItemKind
from rewindtui.tui.transcript_layout import START, group_role

if TYPE_CHECKING:
    from rewindtui.tui.widgets.transcript import Transcript


def occurrences(text: str, query: str) -> list[tuple[int, int]]:
    """(start, end) of the non-overlapping, case-insensitive occurrences of ``query`` (folded) in
    one drawn line, compared composed (NFC) as the search compares them; none where lower case
    changes the line's length (offsets would not match)."""
    if not query:
        return []
    lowered = text.lower()
    if len(lowered) != len(text):
        return []
    starts: list[int] | None = None
    if not unicodedata.is_normalized("NFC", lowered):
        lowered, starts = _composed(lowered)
    found = []
    at = lowered.find(query)
    while at >= 0:
        found.append((at, at + len(query)))
        at = lowered.find(query, at + len(query))
    if starts is not None:
        found = [(starts[a], starts[b]) for a, b in found]
    return found


def _composed(text: str) -> tuple[str, list[int]]:
    """``text`` composed (NFC), a character and the combining marks after it at a time, and where
    each composed character starts in ``text`` (one entry more: the end)."""
    pieces: list[str] = []
    starts: list[int] = []
    i, n = 0, len(text)
    while i < n:
        j = i + 1
        while j < n and unicodedata.combining(text[j]):
            j += 1
        piece = unicodedata.normalize("NFC", text[i:j])
        pieces.append(piece)
        starts.extend(range(i, j) if len(piece) == j - i else [i] * len(piece))
        i = j
    starts.append(n)
    return "".join(pieces), starts


def restyle(strip: Strip, spans: list[tuple[int, int, Style]]) -> Strip:
    """``strip`` with the characters of each (start, end) span (offsets in ``strip.text``, sorted,
    not overlapping) drawn in its style on top of their own."""
    if not spans:
        return strip
    out: list[Segment] = []
    pos = 0
    k = 0
    for segment in strip:
        text, style, control = segment
        end = pos + len(text)
        if control or k >= len(spans) or spans[k][0] >= end:
            out.append(segment)
            pos = end
            continue
        cut = pos
        while k < len(spans) and spans[k][0] < end:
            start, stop, extra = spans[k]
            if start > cut:
                out.append(Segment(text[cut - pos : start - pos], style))
                cut = start
            upto = min(stop, end)
            if upto > cut:
                out.append(Segment(text[cut - pos : upto - pos], (style or Style()) + extra))
                cut = upto
            if stop <= end:
                k += 1
            else:
                break
        if cut < end:
            out.append(Segment(text[cut - pos :], style))
        pos = end
    return Strip(out, strip.cell_length)


class SearchMarks:
    """What the search shows in the transcript: its query, its current hit."""

    def __init__(self, transcript: Transcript) -> None:
        self.t = transcript
        self.query = ""  #: folded ("": nothing marked)
        self.current: tuple[int, int] | None = None  #: (item index, n-th occurrence in it)
        self._located: tuple[object, tuple[int, int, int] | None] | None = None

    def show(self, query: str, current: tuple[int, int] | None) -> None:
        """Mark the occurrences of ``query`` (folded); ``current`` is the hit to mark strongly."""
        if query == self.query and current == self.current:
            return
        self.query, self.current = query, current
        self._located = None
        self.t.refresh()

    def clear(self) -> None:
        self.show("", None)

    def body_start(self, index: int) -> int:
        """The first line of item ``index`` that shows its content (after its header)."""
        return 2 if group_role(self.t.conversation.items, index) == START else 1

    def locate(self, index: int, nth: int) -> tuple[int, int, int] | None:
        """(line in the item, start, end) of the ``nth`` drawn occurrence in item ``index`` (the
        last drawn one if it shows fewer; None if it shows none)."""
        t = self.t
        items = t.conversation.items
        if not 0 <= index < len(items):
            return None
        item = items[index]
        key = (item, item.rev, t._layout_width, index, nth, self.query, item.key in t.expanded)
        if self._located is not None and self._located[0] == key:
            return self._located[1]
        strips = t._strips(index, t._layout_width)
        last = None
        count = 0
        found: tuple[int, int, int] | None = None
        for line in range(self.body_start(index), len(strips)):
            for start, end in occurrences(strips[line].text, self.query):
                last = (line, start, end)
                if count == nth:
                    found = last
                    break
                count += 1
            if found is not None:
                break
        result = found or last
        self._located = (key, result)
        return result

    def mark(self, strip: Strip, index: int, line: int) -> Strip:
        """Line ``line`` of item ``index`` with the query's occurrences highlighted."""
        if not self.query or line < self.body_start(index):
            return strip
        spans = occurrences(strip.text, self.query)
        if not spans:
            return strip
        hit = self.t.get_component_rich_style("transcript--search-hit")
        current = self.t.get_component_rich_style("transcript--search-current")
        here = self.locate(index, self.current[1]) if self.current is not None and self.current[0] == index else None
        return restyle(
            strip, [(a, b, current if here is not None and here[0] == line and here[1] == a else hit) for a, b in spans]
        )

    def bring_into_view(self, index: int, nth: int) -> None:
        """Scroll so that the ``nth`` occurrence in item ``index`` is in view, a third down the
        view; an item far off-screen is drawn first so that its line is known."""
        t = self.t
        t._check_width()
        if not 0 <= index < len(t.conversation.items):
            return
        t._make_exact(index, index + 1)
        found = self.locate(index, nth)
        item = t.conversation.items[index]
        if (
            found is None
            and item.key not in t.expanded
            and item.kind is ItemKind.MESSAGE
            and item.raw is not None
            and item.tools
        ):
            # the hit is in a tool call's arguments or result, cut short on its one line: shown whole
            t.expanded.add(item.key)
            t._remeasure(item)
            t._make_exact(index, index + 1)
            found = self.locate(index, nth)
        line = found[0] if found is not None else 0
        view = max(1, t._view_height)
        if not t.scroll_y <= t._starts[index] + line < t.scroll_y + view:
            # the items between the new top and the hit are drawn now: the hit's line is then
            # where the frame shows it (the items further up keep their estimates)
            for _ in range(3):
                before = t._starts[index]
                above = t.lines.item_at(max(0, before + line - view // 3))
                t._make_exact(above[0] if above is not None else 0, index + 1)
                if t._starts[index] == before:
                    break
            t._set_y(max(0, t._starts[index] + line - view // 3))
        t.follow = t.scroll_y >= t.max_scroll_y
        t.refresh()
