"""The conversation pane: a windowed, line-API view over the conversation model.

Nothing is mounted per message. The pane keeps one height per item (estimated until the item is
first drawn, then exact), renders only the items that reach the viewport (cached by key, revision
and width), and maps clicks on an item's action buttons back to the item. So opening, streaming
into and rewinding a session of thousands of messages costs about what a short one does, and
every message stays reachable by scrolling.

A turn's agent messages (text, tool calls, results) are drawn as one group under one header that
carries the turn's actions; each further message of the group keeps its own quiet ``[⟲]``
button, brightened when hovered or selected. In rewind mode (``preview``) the selected turn is
highlighted and it and every turn after it are drawn dimmed under a "rewind point" rule: what
would go, shown before anything is sent.

Rewound turns, when the user asks to see them (``Conversation.show_rewound``), are drawn in
place, dimmed and marked with when they were rewound; they are no part of any turn of the
conversation, and their own buttons bring their branch back or fork a session from it.

The pane follows the bottom (new content scrolls into view) until the user scrolls away, and
follows again once they scroll back to the bottom.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass

from rich.segment import Segment
from rich.style import Style
from rich.text import Text
from textual import events
from textual.geometry import Size
from textual.message import Message
from textual.reactive import reactive
from textual.scroll_view import ScrollView
from textual.strip import Strip

from rewindtui.chat import Permissions as ChatPermissions
from rewindtui.model import Change, Conversation, Item, ItemKind
from rewindtui.tui import interaction
from rewindtui.tui.gc_policy import DrawnLines
from rewindtui.tui.keys import run_binding_now
from rewindtui.tui.render_guard import guarded
from rewindtui.tui.transcript_layout import LineLayout, turn_bounds, turns_from
from rewindtui.tui.widgets.part_view import has_more
from rewindtui.tui.widgets.transcript_items import (
    _ACTION,
    _BAR,
    _KEY,
    _QUIET,
    CONTINUATION,
    START,
    ItemPainter,
    _tooltip,
)

_SELECTED_BAR = "┃ "
#: Drawn items kept (their lines): several screens' worth, so that scrolling through a long
#: session does not keep every message it passed drawn (nor give the garbage collector more to walk).
_CACHE_ITEMS = 128



@dataclass(frozen=True)
class Permissions:
    """What the pane offers on each message, and why not when it doesn't: a rendering of
    :meth:`rewindtui.chat.Chat.permissions` (:meth:`of`); the pane decides nothing itself."""

    rewind: bool = False
    fork: bool = False
    reason: str = "not connected"  # why not rewind / edit
    fork_reason: str = ""  # why not fork ("": the same as ``reason``)
    #: unavailable only for now (a turn or a rewind is in flight): buttons are drawn quiet, not struck out
    waiting: bool = False
    redo: bool = False  # a rewound turn's branch can be brought back

    @classmethod
    def of(cls, perms: ChatPermissions) -> Permissions:
        busy = perms.busy_reason
        waiting = bool(busy) and (perms.can_rewind or perms.rewind_reason == busy) and (perms.can_fork or perms.fork_reason == busy)
        return cls(perms.can_rewind, perms.can_fork, perms.rewind_reason, perms.fork_reason, waiting, perms.can_restore)


class Transcript(ScrollView, can_focus=True):
    """The transcript. Posts :class:`Transcript.Action` when a message's button is used."""

    BINDINGS = interaction.bindings("transcript")

    DEFAULT_CSS = """
    Transcript { background: $surface; scrollbar-gutter: stable; }
    Transcript > .transcript--user { color: $text-primary; text-style: bold; }
    Transcript > .transcript--agent { color: $text-success; text-style: bold; }
    Transcript > .transcript--system { color: $text-warning; text-style: bold; }
    Transcript > .transcript--error { color: $text-error; }
    Transcript > .transcript--muted { color: $text-muted; }
    Transcript > .transcript--button { color: $text-accent; }
    Transcript > .transcript--quiet { color: $text-muted; }
    Transcript > .transcript--disabled { color: $text-disabled; text-style: strike; }
    Transcript > .transcript--cursor { background: $accent 30%; }
    Transcript > .transcript--cursor-bar { color: $accent; text-style: bold; }
    Transcript > .transcript--bar { color: $panel-lighten-2; }
    Transcript > .transcript--preview { color: $text-disabled; }
    Transcript > .transcript--rewind-point { color: $text-warning; text-style: bold; }
    Transcript > .transcript--rewound { color: $text-disabled; }
    Transcript > .transcript--rewound-mark { color: $text-warning; }
    """

    COMPONENT_CLASSES = {
        "transcript--user",
        "transcript--agent",
        "transcript--system",
        "transcript--error",
        "transcript--muted",
        "transcript--button",
        "transcript--quiet",
        "transcript--disabled",
        "transcript--cursor",
        "transcript--cursor-bar",
        "transcript--bar",
        "transcript--preview",
        "transcript--rewind-point",
        "transcript--rewound",
        "transcript--rewound-mark",
    }

    #: The first item of the selected turn (None: nothing selected).
    cursor: reactive[int | None] = reactive(None, layout=False, repaint=True)
    #: Rewind mode: the selected turn and everything after it are previewed as going away.
    preview: reactive[bool] = reactive(False, layout=False, repaint=True)

    class Action(Message):
        """A message's button (or a key in rewind mode) was used: rewind / edit / fork."""

        def __init__(self, action: str, item: Item) -> None:
            super().__init__()
            self.action = action
            self.item = item

    class Confirm(Message):
        """Rewind mode: Enter on the selected turn."""

    class Moved(Message):
        """The selected turn changed."""

    class Leave(Message):
        """Escape: leave rewind mode, or back to the composer."""

    class TypeAhead(Message):
        """A printable key typed here that is not a command: it belongs in the composer."""

        def __init__(self, text: str) -> None:
            super().__init__()
            self.text = text

    def __init__(self, conversation: Conversation | None = None, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.conversation = conversation or Conversation()
        self.permissions = Permissions()
        self.expanded: set[str] = set()
        self.follow = True  # keep the bottom in view (until the user scrolls away)
        self.hover: int | None = None
        self.painter = ItemPainter(self)  # how one item is drawn (transcript_items)
        self.lines = LineLayout()  # the pure part: line offsets, windowing (transcript_layout)
        self._moving = 0  # > 0 while we scroll (not the user)
        self._line_style: Style | None = None  # the base style, while a frame is drawn
        # item key -> (the item, its cache key, its lines); the item itself is compared because a
        # reloaded session brings new items with the same keys and revisions; least recently
        # drawn first, at most _CACHE_ITEMS
        self._cache: OrderedDict[str, tuple[Item, tuple, _Lines]] = OrderedDict()
        self._drawn = DrawnLines()

    # -- model ---------------------------------------------------------------------------------
    def set_conversation(self, conversation: Conversation) -> None:
        """Show another conversation (a session opened): at its latest turn, following."""
        self.conversation = conversation
        self._cache.clear()
        self.cursor = None
        self.preview = False
        self.hover = None
        self._relayout(0)
        self.follow_bottom()

    def set_permissions(self, permissions: Permissions) -> None:
        if permissions == self.permissions:
            return
        self.permissions = permissions
        self._cache.clear()
        self.refresh()

    def apply_change(self, change: Change) -> None:
        """Redraw what a conversation change touched; keep following the bottom if we were."""
        items = self.conversation.items
        if self.cursor is not None and self.cursor >= len(items):
            self.cursor = None
            self.preview = False
        if self.hover is not None and self.hover >= len(items):
            self.hover = None
        if change.prepended:
            self._prepend(change.prepended)
        elif change.first is not None:
            self._relayout(change.first)
        for item in change.updated:
            self._remeasure(item)
        if len(self.lines.heights) != len(items):
            # a change that did not say where items came or went (the layout would be stale:
            # a view that cannot scroll to what it holds until a resize re-lays it out)
            self._relayout(0)
        if self.follow:
            self._scroll_to_end()
        self.refresh()

    # -- following the bottom ------------------------------------------------------------------
    @contextmanager
    def _scrolling(self) -> Iterator[None]:
        self._moving += 1
        try:
            yield
        finally:
            self._moving -= 1

    def follow_bottom(self) -> None:
        """Scroll to the end and keep following new content."""
        self.follow = True
        self._scroll_to_end()
        self.call_after_refresh(self._scroll_to_end)  # again once the new size is laid out

    def _set_y(self, y: float) -> None:
        """Scroll to line ``y`` (clamped), as the program and not the user."""
        with self._scrolling():
            self.set_scroll(None, max(0, min(y, self.max_scroll_y)))

    def _scroll_to_end(self) -> None:
        if self.follow and self.scroll_y != self.max_scroll_y:
            # set directly: Textual's scroll_end does nothing while the scrollbar is not shown yet
            # (the content has only just outgrown the view)
            self._set_y(self.max_scroll_y)

    def watch_scroll_y(self, old_value: float, new_value: float) -> None:
        super().watch_scroll_y(old_value, new_value)
        if not self._moving:
            # the user scrolled: follow again only once they are back at the bottom
            self.follow = new_value >= self.max_scroll_y

    # -- geometry ------------------------------------------------------------------------------
    @property
    def _content_width(self) -> int:
        return max(20, self.scrollable_content_region.width or self.size.width or 80)

    def _estimate(self, item: Item, width: int) -> int:
        inner = max(10, width - 4)
        lines = 2  # separator or button line, and header
        text = item.text
        if len(text) < inner:  # no line can wrap: one line per line (most messages; asked for every item on open)
            lines += text.count("\n") + 1 if text else 0
        else:
            for line in text.split("\n"):
                lines += 1 + len(line) // inner
        if item.kind is ItemKind.MESSAGE and item.raw is not None and item.tools:
            lines += len(item.tools) * (8 if item.key in self.expanded else 1)
        return lines

    # the layout's lists, by the names the drawing code (and tests) use
    @property
    def _heights(self) -> list[int]:
        return self.lines.heights

    @property
    def _exact(self) -> list[bool]:
        return self.lines.exact

    @property
    def _starts(self) -> list[int]:
        return self.lines.starts

    @property
    def _layout_width(self) -> int:
        return self.lines.width

    def _relayout(self, first: int) -> None:
        """Re-measure items from index ``first`` on (estimates; exact ones are kept where valid)."""
        width = self._content_width
        items = self.conversation.items
        layout = self.lines
        if width != layout.width:
            first = 0
            layout.reset(width)
        first = max(0, min(first, len(layout.heights), len(items)))
        layout.truncate(first)
        for index in range(first, len(items)):
            item = items[index]
            cached = self._cache.get(item.key)
            if cached is not None and cached[0] is item and cached[1] == self._cache_key(index, width):
                layout.append(len(cached[2]), True)
            else:
                layout.append(self._estimate(item, width), False)
        self._recount(first)

    def _prepend(self, count: int) -> None:
        """``count`` items were put in front (older turns came in): measure just them, and keep
        the view on the lines it shows and the selection on its turn (unless following the end)."""
        items = self.conversation.items
        width = self._content_width
        before = self.lines.total
        if width != self.lines.width or len(self.lines.heights) + count != len(items):
            self._relayout(0)
        else:
            self.lines.prepend([self._estimate(items[i], width) for i in range(count)])
            self._recount(0)
        if self.cursor is not None:
            self.cursor += count
        if self.hover is not None:
            self.hover += count
        if not self.follow:
            self._set_y(self.scroll_y + self.lines.total - before)

    def _recount(self, first: int = 0) -> None:
        """Recompute the start line of items from ``first`` on, and the virtual height."""
        self.lines.recount(first)
        self.virtual_size = Size(self._content_width, self.lines.total)

    def _remeasure(self, item: Item) -> None:
        index = self._index_of(item)
        if index is None:
            return
        self._cache.pop(item.key, None)
        self.lines.set_estimate(index, self._estimate(item, self.lines.width or self._content_width))
        self.virtual_size = Size(self._content_width, self.lines.total)

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
        return self.lines.item_at(y)

    def on_resize(self, event: events.Resize) -> None:
        self._check_width()
        if self.preview:
            self.call_after_refresh(self.scroll_to_turn)

    def _check_width(self) -> None:
        if self._content_width != self._layout_width:
            self._cache.clear()
            self._relayout(0)
            if self.follow:
                self._scroll_to_end()

    # -- turns ---------------------------------------------------------------------------------
    def turn_bounds(self, index: int) -> tuple[int, int] | None:
        """(first, end) item indexes of the turn holding item ``index`` (see transcript_layout)."""
        return turn_bounds(self.conversation.items, index)

    def selected_bounds(self) -> tuple[int, int] | None:
        return self.turn_bounds(self.cursor) if self.cursor is not None else None

    def selected(self) -> Item | None:
        """The first item of the selected turn (what its actions act on)."""
        items = self.conversation.items
        if self.cursor is not None and 0 <= self.cursor < len(items):
            return items[self.cursor]
        return None

    def select_turn(self, index: int) -> bool:
        """Select the turn holding item ``index`` and bring it fully into view."""
        bounds = self.turn_bounds(index)
        if bounds is None:
            return False
        self.cursor = bounds[0]
        self.scroll_to_turn()
        self.post_message(self.Moved())
        return True

    def select_last_turn(self) -> bool:
        items = self.conversation.items
        for index in range(len(items) - 1, -1, -1):
            if items[index].rewind_target is not None:
                return self.select_turn(index)
        return False

    def turns_from(self, index: int) -> int:
        """How many turns start at or after item ``index``."""
        return turns_from(self.conversation.items, index)

    # -- rendering -----------------------------------------------------------------------------
    def _group_role(self, index: int) -> str:
        """START, or CONTINUATION for an agent message that follows one of the same turn and author."""
        if index <= 0:
            return START
        items = self.conversation.items
        item, prev = items[index], items[index - 1]
        kinds = (ItemKind.MESSAGE, ItemKind.ARTIFACT)
        if item.role == "user" or prev.role == "user" or item.kind not in kinds or prev.kind not in kinds:
            return START
        same_turn = (item.rewind_target is not None and item.rewind_target == prev.rewind_target) or (
            item.rewind_target is None and item.task_id is not None and item.task_id == prev.task_id
        )
        if not same_turn or (item.author and prev.author and item.author != prev.author):
            return START
        return CONTINUATION

    def _turn_has_user(self, index: int) -> bool:
        """True if the turn of item ``index`` opens with a user message on screen (so it can be edited)."""
        items = self.conversation.items
        target = items[index].rewind_target
        for j in range(index, max(-1, index - 64), -1):
            if items[j].rewind_target != target:
                return False
            if items[j].role == "user" and items[j].kind is ItemKind.MESSAGE:
                return True
        return False

    def _cache_key(self, index: int, width: int) -> tuple:
        item = self.conversation.items[index]
        role = self._group_role(index)
        perms = self.permissions
        editable = role == START and item.role != "user" and item.rewind_target is not None and self._turn_has_user(index)
        return (item.rev, width, item.key in self.expanded, item.streaming, getattr(item, "stopped", False), perms.rewind, perms.fork, perms.waiting, perms.redo, editable, role)

    def render_lines(self, crop):
        self._drawn.settle(len(self.conversation.items))  # lines drawn lately: out of the collector's way
        self._check_width()
        self._make_visible_exact()
        # the widget's base style costs a walk over its ancestors: once per frame, not per line
        self._line_style = self.rich_style
        try:
            return super().render_lines(crop)
        finally:
            self._line_style = None

    def _make_visible_exact(self) -> None:
        """Draw the items in view for real, fixing their heights before the frame is painted.
        An item above the viewport that changes height moves the scroll offset with it, so the
        view does not jump; when following, the view stays at the bottom."""
        for _ in range(3):  # following: the bottom may move as the items there become exact
            self._scroll_to_end()
            if not self._make_window_exact():
                return

    def _make_window_exact(self) -> bool:
        height = self.scrollable_content_region.height or self.size.height
        changed, shift = self.lines.make_window_exact(int(self.scroll_y), height, self._measure)
        if not changed:
            return False
        self.virtual_size = Size(self._content_width, self.lines.total)
        if shift and not self.follow:
            self._set_y(self.scroll_y + shift)
        return True

    def _make_exact(self, first: int, end: int) -> None:
        """Draw items ``first``..``end`` now so that their heights are exact."""
        self.lines.make_exact(first, end, self._measure)
        self.virtual_size = Size(self._content_width, self.lines.total)

    def _measure(self, index: int) -> int:
        return len(self._strips(index, self.lines.width))

    def render_line(self, y: int) -> Strip:
        scroll_x, scroll_y = self.scroll_offset
        width = self.scrollable_content_region.width
        base = self._line_style or self.rich_style
        found = self._item_at(scroll_y + y)
        if found is None:
            return Strip.blank(width, base)
        index, line = found
        if index >= len(self.conversation.items):
            return Strip.blank(width, base)
        strips = self._strips(index, self._layout_width)
        strip = strips[line] if line < len(strips) else Strip.blank(self._layout_width)
        cursor = self.cursor
        selected = False
        if cursor is not None:
            bounds = self.turn_bounds(cursor)
            selected = bounds is not None and bounds[0] <= index < bounds[1]
        if self.preview and cursor is not None and index == cursor and line == 0:
            strip = self._rewind_point_line(self._layout_width, cursor)
        else:
            if selected or index == self.hover:
                strip = self._brighten(strip)
            if self.preview and cursor is not None and index >= cursor:
                strip = self._dim(strip)
            if selected:
                strip = self._highlight(strip, line > 0)
        return strip.crop_extend(scroll_x, scroll_x + width, base)

    def _brighten(self, strip: Strip) -> Strip:
        """Quiet buttons drawn as active ones (their item is hovered or selected)."""
        on = self.get_component_rich_style("transcript--button")
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

    def _dim(self, strip: Strip) -> Strip:
        color = self.get_component_rich_style("transcript--preview").color
        return Strip(Segment.apply_style(iter(strip), None, Style(color=color, bold=False)), strip.cell_length)

    def _highlight(self, strip: Strip, bar: bool) -> Strip:
        background = Style(bgcolor=self.get_component_rich_style("transcript--cursor").bgcolor)
        segments = list(strip)
        if bar and segments and segments[0].text == _BAR:
            segments[0] = Segment(_SELECTED_BAR, self.get_component_rich_style("transcript--cursor-bar"))
        width = max(strip.cell_length, self._layout_width)
        highlighted = Strip(Segment.apply_style(iter(segments), None, background), strip.cell_length)
        return highlighted.extend_cell_length(width, self.rich_style + background)

    def _rewind_point_line(self, width: int, index: int) -> Strip:
        """The rule above the selected turn in rewind mode: from here down goes away."""
        turns = self.turns_from(index)
        style = self.get_component_rich_style("transcript--rewind-point")
        label = f" ⟲ rewind point: {turns} turn{'s' if turns != 1 else ''} below will be removed "
        if len(label) + 4 > width:
            label = f" ⟲ {turns} turn{'s' if turns != 1 else ''} go "
        text = Text("──" + label, style=style, no_wrap=True, overflow="crop")
        text.append("─" * max(0, width - text.cell_len), style)
        text.truncate(width)
        return Strip(list(text.render(self.app.console)), min(width, text.cell_len))

    def _strips(self, index: int, width: int) -> _Lines:
        item = self.conversation.items[index]
        key = self._cache_key(index, width)
        cache = self._cache
        cached = cache.get(item.key)
        if cached is not None and cached[0] is item and cached[1] == key:
            cache.move_to_end(item.key)
            return cached[2]
        strips = _Lines(guarded(lambda: self._render_item(index, item, width, key[-1]), item))  # one bad item: one line
        self._drawn.drew()
        cache[item.key] = (item, key, strips)
        cache.move_to_end(item.key)
        if len(cache) > _CACHE_ITEMS:
            cache.popitem(last=False)
        return strips

    def _render_item(self, index: int, item: Item, width: int, role: str) -> list[Strip]:
        return self.painter._render_item(index, item, width, role)

    # -- interaction ---------------------------------------------------------------------------
    def on_click(self, event: events.Click) -> None:
        meta = event.style.meta if event.style else {}
        action, key = meta.get(_ACTION), meta.get(_KEY)
        if action and key:
            event.stop()
            self._act(action, key)
            return
        if self.preview:
            # in rewind mode a click on a message selects its turn
            found = self._item_at(int(self.scroll_y) + event.y)
            if found is not None:
                self.select_turn(found[0])

    def on_mouse_move(self, event: events.MouseMove) -> None:
        meta = event.style.meta if event.style else {}
        action = meta.get(_ACTION)
        self.tooltip = _tooltip(action, self.permissions) if action else None
        found = self._item_at(int(self.scroll_y) + event.y)
        hover = found[0] if found is not None else None
        if hover != self.hover:
            self.hover = hover
            self.refresh()

    def on_leave(self, event: events.Leave) -> None:
        if self.hover is not None:
            self.hover = None
            self.refresh()

    def _act(self, action: str, key: str) -> None:
        item = next((it for it in reversed(self.conversation.items) if it.key == key), None)
        if item is None:
            return
        if action == "tools":
            self._toggle_tools([item])
            return
        self.post_message(self.Action(action, item))

    def _toggle_tools(self, items: list[Item]) -> None:
        with_tools = [
            it
            for it in items
            if it.raw is not None
            and ((it.kind is ItemKind.MESSAGE and it.tools) or (it.kind in (ItemKind.MESSAGE, ItemKind.ARTIFACT) and has_more(it.other_parts)))
        ]
        if not with_tools:
            self.app.bell()
            return
        expand = any(it.key not in self.expanded for it in with_tools)
        for item in with_tools:
            if expand:
                self.expanded.add(item.key)
            else:
                self.expanded.discard(item.key)
            self._remeasure(item)
        self.refresh()

    def scroll_to_turn(self) -> None:
        """Bring the selected turn fully into view, its rule and header included; a turn taller
        than the view is shown from its top."""
        bounds = self.selected_bounds()
        if bounds is None:
            return
        first, end = bounds
        self._make_exact(first, end)
        top, bottom = self._starts[first], self._starts[end]
        view = self.scrollable_content_region.height or self.size.height
        y: float
        if bottom - top > view or top < self.scroll_y:
            y = top
        elif bottom > self.scroll_y + view:
            y = bottom - view
        else:
            y = self.scroll_y
        self._set_y(y)
        self.follow = False
        self.refresh()

    async def _on_key(self, event: events.Key) -> None:
        # in the order typed: a command acts now, on the state the keys before it left
        if await run_binding_now(self, event):
            return
        if event.is_printable and event.character:
            # not a command here: the text belongs in the composer, never to an action
            event.stop()
            event.prevent_default()
            self.post_message(self.TypeAhead(event.character))
            return
        await super()._on_key(event)

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action in ("confirm", "act", "cursor_home", "cursor_end"):
            return self.preview and self.cursor is not None
        return True

    def action_cursor(self, step: int) -> None:
        """Rewind mode: the previous / next turn. Otherwise: scroll a line."""
        if not (self.preview and self.cursor is not None):
            self._set_y(self.scroll_y + step)
            self.follow = self.scroll_y >= self.max_scroll_y
            return
        bounds = self.selected_bounds()
        if bounds is None:
            return
        if step < 0 and bounds[0] > 0:
            previous = self.turn_bounds(bounds[0] - 1)
            if previous is not None:
                self.select_turn(previous[0])
        elif step > 0 and bounds[1] < len(self.conversation.items):
            self.select_turn(bounds[1])

    def action_cursor_home(self) -> None:
        items = self.conversation.items
        for index in range(len(items)):
            if items[index].rewind_target is not None:
                self.select_turn(index)
                return

    def action_cursor_end(self) -> None:
        self.select_last_turn()

    def action_page(self, direction: int) -> None:
        view = self.scrollable_content_region.height or self.size.height
        self._set_y(self.scroll_y + direction * max(1, view - 2))
        self.follow = self.scroll_y >= self.max_scroll_y

    def action_confirm(self) -> None:
        self.post_message(self.Confirm())

    def action_act(self, action: str) -> None:
        bounds = self.selected_bounds()
        if bounds is None:
            self.app.bell()
            return
        items = self.conversation.items
        rewound = items[bounds[0]].rewound is not None
        if action in ("restore", "fork_branch") and not rewound:
            self.notify("Only a rewound turn (F4 shows them) can be restored or forked as a branch.", severity="warning", timeout=4)
        elif action in ("edit", "fork", "rewind") and rewound:
            keys = f"{interaction.keys_of('transcript.rewound_act')} restores it, {interaction.keys_of('transcript.fork_branch')} forks it"
            self.notify(f"This turn was rewound: {keys}.", severity="warning", timeout=4)
        elif action == "tools":
            self._toggle_tools(items[bounds[0] : bounds[1]])
        elif action == "rewind":
            self.post_message(self.Confirm())  # r in rewind mode: what the preview shows
        else:
            self.post_message(self.Action(action, items[bounds[0]]))

    def action_leave(self) -> None:
        self.post_message(self.Leave())


class _Lines:
    """An item's drawn lines, kept as plain segments: a line becomes a ``Strip`` when it is drawn.
    (A ``Strip`` carries seven caches of its own; kept for every line of every drawn item they
    were most of what the cyclic garbage collector walked while a long session scrolled.)"""

    __slots__ = ("_lines",)

    def __init__(self, strips: list[Strip]) -> None:
        self._lines = [(list(strip), strip.cell_length) for strip in strips]

    def __len__(self) -> int:
        return len(self._lines)

    def __getitem__(self, index: int) -> Strip:
        segments, cell_length = self._lines[index]
        return Strip(segments, cell_length)
