"""How one item of the transcript is drawn -- its header with the buttons, its body, tool lines,
files and data -- for :class:`~rewindtui.tui.widgets.transcript.Transcript`, which decides
where and when (layout, cache, selection)."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from rich.console import Group, RenderableType
from rich.segment import Segment
from rich.style import Style
from rich.text import Text
from textual.strip import Strip

from rewindtui.base.textsafe import sanitize
from rewindtui.model import Item, ItemKind
from rewindtui.output.export import local_time
from rewindtui.output.pasted import fold
from rewindtui.tui.transcript_layout import CONTINUATION, START, turn_has_user
from rewindtui.tui.turn_buttons import TurnButtons
from rewindtui.tui.widgets.part_view import PartStyles, render_parts

if TYPE_CHECKING:
    from rewindtui.tui.widgets.transcript import Transcript

_ACTION = "rt_action"
_KEY = "rt_key"
_QUIET = "rt_quiet"  # a per-message button, dimmed until its item is hovered or selected
_TOOL_RESULT_LIMIT = 4000
_BAR = "▏ "

__all__ = ["CONTINUATION", "START", "ItemPainter"]


class ItemPainter:
    def __init__(self, transcript: Transcript) -> None:
        self.t = transcript

    def _render_item(self, index: int, item: Item, width: int, role: str) -> list[Strip]:
        console = self.t.app.console
        options = console.options.update(width=max(1, width - 2), highlight=False, markup=False)
        bar_style = self.t.get_component_rich_style("transcript--bar")
        if role == CONTINUATION:
            strips = [Strip(self._continuation_line(item, width, bar_style))]
        else:
            strips = [Strip.blank(0), Strip(self._header(index, item, width))]
        body = self._body(item, width)
        if body is not None:
            base = self.t.rich_style
            for line in console.render_lines(body, options, pad=False):
                strips.append(Strip([Segment(_BAR, bar_style), *line]).apply_style(base))
        if item.rewound is not None:
            # shown in place, dimmed: not part of the conversation (its header keeps its buttons)
            dim = self.t.get_component_rich_style("transcript--rewound").color
            strips = [
                strip
                if (role != CONTINUATION and n == 1)
                else Strip(Segment.apply_style(iter(strip), None, Style(color=dim, bold=False)), strip.cell_length)
                for n, strip in enumerate(strips)
            ]
        return strips

    def _continuation_line(self, item: Item, width: int, bar_style: Style) -> list[Segment]:
        """A further message of a group: the bar, and its own quiet "Rewind to here" button (its
        label says what it does; the bare ⟲ only where the line has no room for it)."""
        line = Text(_BAR, style=bar_style)
        button = Text()
        if item.rewind_target is not None:
            label = "⟲ Rewind to here" if width - line.cell_len > len("[⟲ Rewind to here]") + 1 else "⟲"
            self._button(button, label, "rewind", item, quiet=True)
        line.append(" " * max(1, width - line.cell_len - button.cell_len - 1))
        line.append_text(button)
        return list(line.render(self.t.app.console))

    def _header(self, index: int, item: Item, width: int) -> list[Segment]:
        if item.kind is ItemKind.ERROR:
            who, style = "error", "transcript--error"
        elif item.kind is ItemKind.UNKNOWN:
            who, style = "unrecognised event", "transcript--system"
        elif item.role == "user":
            who, style = "you", "transcript--user"
        else:
            who, style = (
                sanitize(item.author or ("artifact" if item.kind is ItemKind.ARTIFACT else "agent")),
                "transcript--agent",
            )
        left = Text(who, style=self.t.get_component_rich_style(style))
        if item.rewound is not None:
            left.stylize(self.t.get_component_rich_style("transcript--rewound"))
            left.append(f"  {_rewound_label(item)}", self.t.get_component_rich_style("transcript--rewound-mark"))
        if item.streaming:
            left.append("  streaming…", self.t.get_component_rich_style("transcript--muted"))
        elif getattr(item, "stopped", False):
            left.append("  ■ stopped — what came before the stop", self.t.get_component_rich_style("transcript--muted"))
        buttons = self._buttons(index, item)
        room = width - left.cell_len - buttons.cell_len - 1
        if room < 1:
            buttons = self._buttons(index, item, short=True)
            room = width - left.cell_len - buttons.cell_len - 1
        if room < 1:
            buttons = Text("")
            room = max(1, width - left.cell_len)
        left.append(" " * room)
        left.append_text(buttons)
        return list(left.render(self.t.app.console))

    def _button(self, text: Text, label: str, action: str, item: Item, *, quiet: bool) -> None:
        enabled, soon = self.t.buttons.shown(action)  # the chat's permissions gate, as last read
        if not enabled and soon:
            style = self.t.get_component_rich_style("transcript--quiet")  # not now, but soon
        elif not enabled:
            style = self.t.get_component_rich_style("transcript--disabled")
        elif quiet:
            style = self.t.get_component_rich_style("transcript--quiet")
        else:
            style = self.t.get_component_rich_style("transcript--button")
        meta: dict[str, Any] = {_ACTION: action, _KEY: item.key}
        if quiet and enabled:
            meta[_QUIET] = True
        if text:
            text.append(" ")
        text.append(f"[{label}]", style + Style.from_meta(meta))

    def _buttons(self, index: int, item: Item, *, short: bool = False) -> Text:
        """A user message's own (quiet) buttons, or the turn's actions on a group's header."""
        text = Text()
        if item.rewound is not None and item.role == "user":
            # a rewound turn: bring its branch back (redo its rewind), or fork a session from it
            self._button(text, "fork" if short else "fork branch", "fork_branch", item, quiet=False)
            self._button(text, "⟲" if short else "⟲ Restore", "restore", item, quiet=False)
            return text
        if item.rewind_target is None or item.kind not in (ItemKind.MESSAGE, ItemKind.ARTIFACT):
            return text
        quiet = item.role == "user"
        if item.role == "user" or turn_has_user(self.t.conversation.items, index):
            self._button(text, "edit", "edit", item, quiet=quiet)
        self._button(text, "fork", "fork", item, quiet=quiet)
        self._button(text, "⟲" if short else "⟲ Rewind to here", "rewind", item, quiet=quiet)
        return text

    def _body(self, item: Item, width: int = 80) -> RenderableType | None:
        parts: list[RenderableType] = []
        text = sanitize(item.text)
        if item.kind is ItemKind.ERROR:
            parts.append(Text(text, style=self.t.get_component_rich_style("transcript--error")))
        elif item.kind is ItemKind.UNKNOWN:
            parts.append(Text(text, style=self.t.get_component_rich_style("transcript--muted")))
        elif text:
            folded = fold(text) if item.role == "user" and item.key not in self.t.expanded else None
            if folded is not None:  # a big paste: its first lines and a fold line that opens it
                parts.extend(
                    _folded_paste(
                        folded.head, folded.label, self.t.get_component_rich_style("transcript--muted"), item.key
                    )
                )
            elif item.role == "user" or item.streaming:
                parts.append(Text(text))
            else:
                from rich.markdown import Markdown  # markdown-it and pygments: not for the first frame

                parts.append(Markdown(text))
        shown_before = (
            self.t.conversation.stopped_shown.get(item.task_id or "") if getattr(item, "stopped", False) else None
        )
        if shown_before and shown_before != text:
            muted = self.t.get_component_rich_style("transcript--muted")
            parts.append(
                Text(f"(the server kept less; before the stop this was shown: {sanitize(shown_before)})", style=muted)
            )
        if item.kind is ItemKind.MESSAGE and item.raw is not None:
            expanded = item.key in self.t.expanded
            muted = self.t.get_component_rich_style("transcript--muted")
            for call in item.tools:
                parts.append(_tool_line(call, expanded, muted, item.key, width - len(_BAR)))
        if item.kind in (ItemKind.MESSAGE, ItemKind.ARTIFACT) and item.raw is not None:
            parts.extend(self._part_lines(item))
        if not parts:
            return None
        return Group(*parts)

    def _part_lines(self, item: Item) -> list[RenderableType]:
        """Its files and data (see ``part_view``), with their save and show-more actions."""
        other = item.other_parts
        if not other:
            return []
        muted = self.t.get_component_rich_style("transcript--muted")
        styles = PartStyles(
            muted=muted,
            label=self.t.get_component_rich_style("transcript--agent") if item.role != "user" else muted,
            button=self.t.get_component_rich_style("transcript--button")
            + Style.from_meta({_ACTION: "save", _KEY: item.key}),
            toggle=muted + Style.from_meta({_ACTION: "tools", _KEY: item.key}),
        )
        return render_parts(other, styles, expanded=item.key in self.t.expanded, savable=item.role != "user")


def _folded_paste(head: str, label: str, muted: Style, key: str) -> list[RenderableType]:
    toggle = Style.from_meta({_ACTION: "tools", _KEY: key})
    line = Text(f"▸ {label}", style=muted + toggle)
    line.append(" click (or alt+t while choosing) shows it all", style=muted)
    return [Text(head), line]


def _rewound_label(item: Item) -> str:
    """``⟲ rewound 14:05``: when the turn was rewound (local time)."""
    when = local_time(item.rewound.at)[11:] if item.rewound is not None else ""
    return f"⟲ rewound{' ' + when if when else ''} · not in the conversation"


def _tooltip(action: str, buttons: TurnButtons) -> str:
    reason = buttons.why_not(action)
    if reason:
        what = {"edit": "Rewind", "fork_branch": "Fork"}.get(action, action.capitalize())
        return f"{what} unavailable: {reason}"
    return {
        "restore": (
            "Bring this rewound branch back up to this turn: undo the rewind that took it away "
            "(its later turns stay rewound)"
        ),
        "fork_branch": "Fork a new session holding this rewound branch up to and including this turn",
        "rewind": "Rewind to here: shows what would go (this turn and everything after it); Enter confirms",
        "edit": "Edit this turn's message and resend it; the turn and everything after it are replaced",
        "fork": "Fork a new session holding what came before this turn; this one stays as it is",
        "tools": "Show or hide tool details (or a big paste)",
        "save": "Save this message's files and data to disk (ctrl+s)",
    }.get(action, action)


def _excerpt_json(value: Any, limit: int = _TOOL_RESULT_LIMIT) -> str:
    try:
        text = json.dumps(value, ensure_ascii=False, indent=None, default=str)
    except (TypeError, ValueError):
        text = repr(value)
    return text if len(text) <= limit else text[:limit] + "…"


_PENDING = " (no result yet)"


def _tool_line(call: Any, expanded: bool, muted: Style, key: str, width: int = 124) -> Text:
    """A tool call on one line (the call, then its result) using the width there is: a wide
    terminal shows it all; a cut shows ``…`` once, where it is cut."""
    toggle = Style.from_meta({_ACTION: "tools", _KEY: key})
    args = _excerpt_json(call.args) if call.args is not None else ""
    if expanded:
        out = Text("▾ ", style=muted + toggle)
        out.append(sanitize(f"{call.name}({args})"), style=toggle)
        result = _excerpt_json(call.result) if call.has_result else "(no result yet)"
        out.append("\n  → " + sanitize(result), style=muted)
        return out
    room = max(20, width - 2)
    out = Text("▸ ", style=muted + toggle)
    summary = sanitize(f"{call.name}({args})")
    result = sanitize(_excerpt_json(call.result)) if call.has_result else ""
    # the words saying there is no result yet, where they leave the call half the line at least
    pending = _PENDING if not call.has_result and room - len(_PENDING) >= room // 2 else ""
    # the call gets what the result (or those words) leaves it, and at least half the line
    call_room = max(room // 2, room - len(result) - 3) if result else room - max(2, len(pending))
    summary = summary if len(summary) <= call_room else summary[: call_room - 1] + "…"
    out.append(summary, style=toggle)
    if call.has_result:
        left = room - len(summary) - 3
        out.append(" → " + (result if len(result) <= left else result[: max(1, left - 1)] + "…"), style=muted)
    else:
        out.append(pending, style=muted)
    out.no_wrap = True
    out.overflow = "crop"
    return out
