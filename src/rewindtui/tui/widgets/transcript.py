"""The conversation pane: a windowed, line-API view over the conversation model.

Nothing is mounted per message. The pane keeps one height per item (estimated until the item is
first drawn, then exact), renders only the items that reach the viewport (cached by key, revision
and width), and maps clicks on an item's action buttons back to the item. So opening, streaming
into and rewinding a session of thousands of messages costs about what a short one does, and
every message stays reachable by scrolling.
"""

from __future__ import annotations

import json
from bisect import bisect_right
from dataclasses import dataclass
from itertools import accumulate, islice
from typing import Any

from rich.console import Group, RenderableType
from rich.markdown import Markdown
from rich.segment import Segment
from rich.style import Style
from rich.text import Text
from textual import events
from textual.binding import Binding
from textual.geometry import Size
from textual.message import Message
from textual.reactive import reactive
from textual.scroll_view import ScrollView
from textual.strip import Strip

from rewindtui.conversation import Change, Conversation, Item, ItemKind
from rewindtui.textsafe import sanitize

_ACTION = "rt_action"
_KEY = "rt_key"
_GAP = 1  # blank lines after each item
_TOOL_RESULT_LIMIT = 4000


@dataclass
class Permissions:
    """What the pane offers on each message, and why not when it doesn't."""

    rewind: bool = False
    fork: bool = False
    reason: str = "not connected"


class Transcript(ScrollView, can_focus=True):
    """The transcript. Posts :class:`Transcript.Action` when a message's button is used."""

    BINDINGS = [
        Binding("up,k", "cursor(-1)", "Previous", show=False, id="transcript.previous", tooltip="Select the previous message"),
        Binding("down,j", "cursor(1)", "Next", show=False, id="transcript.next", tooltip="Select the next message"),
        Binding("home,g", "cursor_home", "First", show=False, id="transcript.first", tooltip="Select the first message"),
        Binding("end,G", "cursor_end", "Last", show=False, id="transcript.last", tooltip="Select the last message"),
        Binding("pageup", "page(-1)", "Page up", show=False, id="transcript.page_up", tooltip="Scroll up a page"),
        Binding("pagedown", "page(1)", "Page down", show=False, id="transcript.page_down", tooltip="Scroll down a page"),
        Binding("r", "act('rewind')", "Rewind here", id="transcript.rewind", tooltip="Rewind to before the selected message's turn"),
        Binding("e", "act('edit')", "Edit", id="transcript.edit", tooltip="Edit the selected turn's message and resend it"),
        Binding("f", "act('fork')", "Fork", id="transcript.fork", tooltip="Fork a new session from before the selected turn"),
        Binding("t", "act('tools')", "Tools", id="transcript.tools", tooltip="Show or hide the selected message's tool calls"),
        Binding("escape,i", "leave", "Compose", id="transcript.leave", tooltip="Back to the composer"),
    ]

    DEFAULT_CSS = """
    Transcript { background: $surface; }
    Transcript > .transcript--user { color: $text-primary; text-style: bold; }
    Transcript > .transcript--agent { color: $text-success; text-style: bold; }
    Transcript > .transcript--system { color: $text-warning; text-style: bold; }
    Transcript > .transcript--error { color: $text-error; }
    Transcript > .transcript--muted { color: $text-muted; }
    Transcript > .transcript--button { color: $text-accent; }
    Transcript > .transcript--disabled { color: $text-disabled; }
    Transcript > .transcript--cursor { background: $boost; }
    Transcript > .transcript--cursor-bar { color: $accent; }
    Transcript > .transcript--bar { color: $panel-lighten-2; }
    """

    COMPONENT_CLASSES = {
        "transcript--user",
        "transcript--agent",
        "transcript--system",
        "transcript--error",
        "transcript--muted",
        "transcript--button",
        "transcript--disabled",
        "transcript--cursor",
        "transcript--cursor-bar",
        "transcript--bar",
    }

    cursor: reactive[int | None] = reactive(None, layout=False, repaint=True)

    class Action(Message):
        """A message's button (or key) was used: ``action`` is rewind / edit / fork."""

        def __init__(self, action: str, item: Item) -> None:
            super().__init__()
            self.action = action
            self.item = item

    class Leave(Message):
        """The user wants the composer back."""

    def __init__(self, conversation: Conversation | None = None, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.conversation = conversation or Conversation()
        self.permissions = Permissions()
        self.expanded: set[str] = set()
        self._heights: list[int] = []
        self._exact: list[bool] = []
        self._starts: list[int] = [0]
        self._layout_width = 0
        # item key -> (the item, its cache key, its lines); the item itself is compared because a
        # reloaded session brings new items with the same keys and revisions
        self._cache: dict[str, tuple[Item, tuple, list[Strip]]] = {}

    # -- model ---------------------------------------------------------------------------------
    def set_conversation(self, conversation: Conversation) -> None:
        self.conversation = conversation
        self._cache.clear()
        self.cursor = None
        self._relayout(0)
        self.scroll_end(animate=False, immediate=True)

    def set_permissions(self, permissions: Permissions) -> None:
        self.permissions = permissions
        self._cache.clear()
        self.refresh()

    def apply_change(self, change: Change) -> None:
        """Redraw what a conversation change touched; stick to the bottom if we were there."""
        at_bottom = self.scroll_y >= self.max_scroll_y - 1
        items = self.conversation.items
        if self.cursor is not None and self.cursor >= len(items):
            self.cursor = len(items) - 1 if items else None
        if change.first is not None:
            self._relayout(change.first)
        for item in change.updated:
            self._remeasure(item)
        if at_bottom:
            self.scroll_end(animate=False, immediate=True)
        self.refresh()

    # -- geometry ------------------------------------------------------------------------------
    @property
    def _content_width(self) -> int:
        return max(20, self.scrollable_content_region.width or self.size.width or 80)

    def _estimate(self, item: Item, width: int) -> int:
        inner = max(10, width - 4)
        lines = 1  # header
        text = item.text
        if text:
            for line in text.split("\n"):
                lines += 1 + len(line) // inner
        if item.kind is ItemKind.MESSAGE and item.raw is not None and item.tools:
            lines += len(item.tools) * (8 if item.key in self.expanded else 1)
        return lines + _GAP

    def _relayout(self, first: int) -> None:
        """Re-measure items from index ``first`` on (estimates; exact ones are kept where valid)."""
        width = self._content_width
        items = self.conversation.items
        if width != self._layout_width:
            first = 0
            self._layout_width = width
            self._heights = []
            self._exact = []
        first = max(0, min(first, len(self._heights), len(items)))
        del self._heights[first:]
        del self._exact[first:]
        for item in items[first:]:
            cached = self._cache.get(item.key)
            if cached is not None and cached[0] is item and cached[1] == self._cache_key(item, width):
                self._heights.append(len(cached[2]))
                self._exact.append(True)
            else:
                self._heights.append(self._estimate(item, width))
                self._exact.append(False)
        self._recount(first)

    def _recount(self, first: int = 0) -> None:
        """Recompute the start line of items from ``first`` on, and the virtual height."""
        first = min(first, len(self._starts) - 1)
        del self._starts[first + 1 :]
        self._starts.extend(islice(accumulate(self._heights[first:], initial=self._starts[first]), 1, None))
        self.virtual_size = Size(self._content_width, self._starts[-1])

    def _remeasure(self, item: Item) -> None:
        index = self._index_of(item)
        if index is None:
            return
        self._cache.pop(item.key, None)
        height = self._estimate(item, self._layout_width or self._content_width)
        if index < len(self._heights) and self._heights[index] != height:
            self._heights[index] = height
            self._exact[index] = False
            self._recount(index)

    def _index_of(self, item: Item) -> int | None:
        items = self.conversation.items
        # items that change in place are nearly always near the end
        for i in range(len(items) - 1, max(-1, len(items) - 200), -1):
            if items[i] is item:
                return i
        try:
            return items.index(item)
        except ValueError:
            return None

    def _item_at(self, y: int) -> tuple[int, int] | None:
        """(item index, line within item) for a virtual line number."""
        if not self._heights or y < 0 or y >= self._starts[-1]:
            return None
        index = bisect_right(self._starts, y) - 1
        return index, y - self._starts[index]

    def on_resize(self, event: events.Resize) -> None:
        if self._content_width != self._layout_width:
            self._cache.clear()
            self._relayout(0)

    # -- rendering -----------------------------------------------------------------------------
    def _cache_key(self, item: Item, width: int) -> tuple:
        return (item.rev, width, item.key in self.expanded, item.streaming, self.permissions.rewind, self.permissions.fork)

    def render_lines(self, crop):
        self._make_visible_exact()
        return super().render_lines(crop)

    def _make_visible_exact(self) -> None:
        """Draw the items in view for real, fixing their heights before the frame is painted.
        An item above the viewport that changes height moves the scroll offset with it, so the
        view does not jump."""
        if not self._heights:
            return
        top = int(self.scroll_y)
        height = self.scrollable_content_region.height or self.size.height
        first = self._item_at(top)
        if first is None:
            return
        index = first[0]
        width = self._layout_width
        changed_from: int | None = None
        shift = 0
        y = self._starts[index]
        while index < len(self._heights) and y < top + height:
            if not self._exact[index]:
                strips = self._strips(self.conversation.items[index], width)
                new = len(strips)
                if new != self._heights[index]:
                    changed_from = index if changed_from is None else changed_from
                    if y < top:
                        shift += new - self._heights[index]
                    self._heights[index] = new
                self._exact[index] = True
            y += self._heights[index]
            index += 1
        if changed_from is not None:
            self._recount(changed_from)
            if shift:
                self.set_scroll(None, self.scroll_y + shift)

    def render_line(self, y: int) -> Strip:
        scroll_x, scroll_y = self.scroll_offset
        width = self.scrollable_content_region.width
        found = self._item_at(scroll_y + y)
        if found is None:
            return Strip.blank(width, self.rich_style)
        index, line = found
        items = self.conversation.items
        if index >= len(items):
            return Strip.blank(width, self.rich_style)
        strips = self._strips(items[index], self._layout_width)
        strip = strips[line] if line < len(strips) else Strip.blank(self._layout_width)
        strip = strip.crop_extend(scroll_x, scroll_x + width, self.rich_style)
        if index == self.cursor:
            cursor = Style(bgcolor=self.get_component_rich_style("transcript--cursor").bgcolor)
            strip = Strip(Segment.apply_style(iter(strip), None, cursor), strip.cell_length)
        return strip

    def _strips(self, item: Item, width: int) -> list[Strip]:
        key = self._cache_key(item, width)
        cached = self._cache.get(item.key)
        if cached is not None and cached[0] is item and cached[1] == key:
            return cached[2]
        strips = self._render_item(item, width)
        self._cache[item.key] = (item, key, strips)
        return strips

    def _render_item(self, item: Item, width: int) -> list[Strip]:
        console = self.app.console
        options = console.options.update(width=max(1, width - 2), highlight=False, markup=False)
        bar_style = self.get_component_rich_style("transcript--bar")
        strips: list[Strip] = [Strip(self._header(item, width))]
        body = self._body(item)
        if body is not None:
            base = self.rich_style
            for line in console.render_lines(body, options, pad=False):
                strips.append(Strip([Segment("▏ ", bar_style), *line]).apply_style(base))
        for _ in range(_GAP):
            strips.append(Strip.blank(0))
        return strips

    def _header(self, item: Item, width: int) -> list[Segment]:
        if item.kind is ItemKind.ERROR:
            who, style = "error", "transcript--error"
        elif item.kind is ItemKind.UNKNOWN:
            who, style = "unrecognised event", "transcript--system"
        elif item.role == "user":
            who, style = "you", "transcript--user"
        else:
            who, style = sanitize(item.author or ("artifact" if item.kind is ItemKind.ARTIFACT else "agent")), "transcript--agent"
        left = Text(who, style=self.get_component_rich_style(style))
        if item.streaming:
            left.append("  streaming…", self.get_component_rich_style("transcript--muted"))
        buttons = self._buttons(item)
        room = width - left.cell_len - buttons.cell_len - 1
        if room < 1:
            buttons = Text("")
            room = max(1, width - left.cell_len)
        left.append(" " * room)
        left.append_text(buttons)
        return list(left.render(self.app.console))

    def _buttons(self, item: Item) -> Text:
        text = Text()
        if item.rewind_target is None or item.kind not in (ItemKind.MESSAGE, ItemKind.ARTIFACT):
            return text
        perms = self.permissions
        on = self.get_component_rich_style("transcript--button")
        off = self.get_component_rich_style("transcript--disabled")

        def button(label: str, action: str, enabled: bool) -> None:
            style = (on if enabled else off) + Style.from_meta({_ACTION: action, _KEY: item.key})
            text.append(f"[{label}]", style)
            text.append(" ")

        if item.role == "user":
            button("edit", "edit", perms.rewind)
        button("fork", "fork", perms.fork)
        button("⟲ Rewind to here", "rewind", perms.rewind)
        text.rstrip()
        return text

    def _body(self, item: Item) -> RenderableType | None:
        parts: list[RenderableType] = []
        text = sanitize(item.text)
        if item.kind is ItemKind.ERROR:
            parts.append(Text(text, style=self.get_component_rich_style("transcript--error")))
        elif item.kind is ItemKind.UNKNOWN:
            parts.append(Text(text, style=self.get_component_rich_style("transcript--muted")))
        elif text:
            if item.role == "user" or item.streaming:
                parts.append(Text(text))
            else:
                parts.append(Markdown(text))
        if item.kind is ItemKind.MESSAGE and item.raw is not None:
            expanded = item.key in self.expanded
            muted = self.get_component_rich_style("transcript--muted")
            for call in item.tools:
                parts.append(_tool_line(call, expanded, muted, item.key))
            for part in item.other_parts:
                parts.append(Text(sanitize(_excerpt_json(part)), style=muted))
        if not parts:
            return None
        return Group(*parts)

    # -- interaction ---------------------------------------------------------------------------
    def on_click(self, event: events.Click) -> None:
        meta = event.style.meta if event.style else {}
        found = self._item_at(int(self.scroll_y) + event.y)
        if found is not None:
            self.cursor = found[0]
        action, key = meta.get(_ACTION), meta.get(_KEY)
        if action and key:
            event.stop()
            self._act(action, key)

    def on_mouse_move(self, event: events.MouseMove) -> None:
        meta = event.style.meta if event.style else {}
        action = meta.get(_ACTION)
        self.tooltip = _tooltip(action, self.permissions) if action else None

    def _act(self, action: str, key: str) -> None:
        item = next((it for it in reversed(self.conversation.items) if it.key == key), None)
        if item is None:
            return
        if action == "tools":
            self.expanded ^= {key}
            self._remeasure(item)
            self.refresh()
            return
        self.post_message(self.Action(action, item))

    def watch_cursor(self, old: int | None, new: int | None) -> None:
        if new is not None:
            self.scroll_to_item(new)

    def scroll_to_item(self, index: int) -> None:
        if not (0 <= index < len(self._heights)):
            return
        top, bottom = self._starts[index], self._starts[index + 1]
        view = self.scrollable_content_region.height or self.size.height
        if top < self.scroll_y:
            self.set_scroll(None, top)
        elif bottom > self.scroll_y + view:
            self.set_scroll(None, max(top, bottom - view))

    def action_cursor(self, step: int) -> None:
        count = len(self.conversation.items)
        if not count:
            return
        if self.cursor is None:
            self.cursor = count - 1 if step < 0 else 0
        else:
            self.cursor = max(0, min(count - 1, self.cursor + step))

    def action_cursor_home(self) -> None:
        if self.conversation.items:
            self.cursor = 0

    def action_cursor_end(self) -> None:
        if self.conversation.items:
            self.cursor = len(self.conversation.items) - 1

    def action_page(self, direction: int) -> None:
        view = self.scrollable_content_region.height or self.size.height
        self.set_scroll(None, self.scroll_y + direction * max(1, view - 2))

    def action_act(self, action: str) -> None:
        items = self.conversation.items
        if self.cursor is None or not (0 <= self.cursor < len(items)):
            self.app.bell()
            return
        self._act(action, items[self.cursor].key)

    def action_leave(self) -> None:
        self.post_message(self.Leave())

    def selected(self) -> Item | None:
        items = self.conversation.items
        if self.cursor is not None and 0 <= self.cursor < len(items):
            return items[self.cursor]
        return None


def _tooltip(action: str, perms: Permissions) -> str:
    if action in ("rewind", "edit") and not perms.rewind:
        return f"Rewind unavailable: {perms.reason}"
    if action == "fork" and not perms.fork:
        return f"Fork unavailable: {perms.reason}"
    return {
        "rewind": "Rewind to here: this turn and everything after it go away (r)",
        "edit": "Edit this message and resend it; the turn and everything after it go away (e)",
        "fork": "Fork a new session holding what came before this turn (f)",
        "tools": "Show or hide tool details (t)",
    }.get(action, action)


def _excerpt_json(value: Any, limit: int = _TOOL_RESULT_LIMIT) -> str:
    try:
        text = json.dumps(value, ensure_ascii=False, indent=None, default=str)
    except (TypeError, ValueError):
        text = repr(value)
    return text if len(text) <= limit else text[:limit] + "…"


def _tool_line(call: Any, expanded: bool, muted: Style, key: str) -> Text:
    toggle = Style.from_meta({_ACTION: "tools", _KEY: key})
    args = _excerpt_json(call.args) if call.args is not None else ""
    if expanded:
        out = Text("▾ ", style=muted + toggle)
        out.append(sanitize(f"{call.name}({args})"), style=toggle)
        result = _excerpt_json(call.result) if call.has_result else "(no result yet)"
        out.append("\n  → " + sanitize(result), style=muted)
        return out
    out = Text("▸ ", style=muted + toggle)
    summary = f"{call.name}({args})"
    summary = summary if len(summary) <= 60 else summary[:59] + "…"
    out.append(sanitize(summary), style=toggle)
    if call.has_result:
        result = _excerpt_json(call.result)
        out.append(" → " + sanitize(result if len(result) <= 60 else result[:59] + "…"), style=muted)
    else:
        out.append(" …", style=muted)
    out.no_wrap = True
    out.overflow = "ellipsis"
    return out
