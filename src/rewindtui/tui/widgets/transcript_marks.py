"""How a drawn line of the transcript is marked, on top of how its item is drawn
(:mod:`transcript_items`): the selected turn highlighted, its quiet buttons brightened (also when
hovered), and in rewind mode the selected turn and every turn after it dimmed under a "rewind
point" rule: what would go, shown before anything is sent."""

from __future__ import annotations

from typing import TYPE_CHECKING

from rich.segment import Segment
from rich.style import Style
from rich.text import Text
from textual.strip import Strip

from rewindtui.tui.widgets.transcript_items import _BAR, _QUIET

if TYPE_CHECKING:
    from rewindtui.tui.widgets.transcript import Transcript

_SELECTED_BAR = "┃ "


class LineMarks:
    def __init__(self, transcript: Transcript) -> None:
        self.t = transcript

    def mark(self, strip: Strip, index: int, line: int, width: int) -> Strip:
        """Line ``line`` of item ``index`` as the selection, the hover and the preview show it."""
        t = self.t
        cursor = t.cursor
        selected = False
        if cursor is not None:
            bounds = t.turn_bounds(cursor)
            selected = bounds is not None and bounds[0] <= index < bounds[1]
        if t.preview and cursor is not None and index == cursor and line == 0:
            items = t.conversation.items
            rewound = 0 <= cursor < len(items) and items[cursor].rewound is not None
            return self.rewind_point(width, t.turns_from(cursor), rewound=rewound)
        if selected or index == t.hover:
            strip = self.brighten(strip)
        if t.preview and cursor is not None and index >= cursor:
            strip = self.dim(strip)
        if selected:
            strip = self.highlight(strip, line > 0, width)
        return strip

    def brighten(self, strip: Strip) -> Strip:
        """Quiet buttons drawn as active ones (their item is hovered or selected)."""
        on = self.t.get_component_rich_style("transcript--button")
        segments = []
        changed = False
        for segment in strip:
            style = segment.style
            if style is not None and style._meta and style.meta.get(_QUIET):
                segments.append(Segment(segment.text, style + Style(color=on.color, bold=True)))
                changed = True
            else:
                segments.append(segment)
        return Strip(segments, strip.cell_length) if changed else strip

    def dim(self, strip: Strip) -> Strip:
        color = self.t.get_component_rich_style("transcript--preview").color
        return Strip(Segment.apply_style(iter(strip), None, Style(color=color, bold=False)), strip.cell_length)

    def highlight(self, strip: Strip, bar: bool, width: int) -> Strip:
        t = self.t
        background = Style(bgcolor=t.get_component_rich_style("transcript--cursor").bgcolor)
        segments = list(strip)
        if bar and segments and segments[0].text == _BAR:
            segments[0] = Segment(_SELECTED_BAR, t.get_component_rich_style("transcript--cursor-bar"))
        highlighted = Strip(Segment.apply_style(iter(segments), None, background), strip.cell_length)
        return highlighted.extend_cell_length(max(strip.cell_length, width), t.rich_style + background)

    def rewind_point(self, width: int, turns: int, *, rewound: bool = False) -> Strip:
        """The rule above the selected turn in rewind mode: from here down (``turns`` turns) goes
        away; on a rewound turn (F4), nothing goes: it is a branch to restore or fork."""
        style = self.t.get_component_rich_style("transcript--rewind-point")
        plural = "s" if turns != 1 else ""
        if rewound:
            label, short = (
                " ⟲ rewound branch up to this turn: restore or fork it (nothing is removed) ",
                " ⟲ rewound branch ",
            )
        elif self.t.rewind_forks:  # kagent 1.0: nothing is removed, a new session starts here
            label, short = (
                f" ⟲ fork point: a new session without the {turns} turn{plural} below; the original keeps them ",
                " ⟲ fork here ",
            )
        else:
            label, short = (
                f" ⟲ rewind point: {turns} turn{plural} below will be removed ",
                f" ⟲ {turns} turn{plural} go ",
            )
        if len(label) + 4 > width:
            label = short
        text = Text("──" + label, style=style, no_wrap=True, overflow="crop")
        text.append("─" * max(0, width - text.cell_len), style)
        text.truncate(width)
        return Strip(list(text.render(self.t.app.console)), min(width, text.cell_len))
