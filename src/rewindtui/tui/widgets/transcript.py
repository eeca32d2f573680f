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

from textual import events
from textual.message import Message
from textual.reactive import reactive
from textual.strip import Strip

from rewindtui.model import Change, Conversation, Item, ItemKind
from rewindtui.output.pasted import fold
from rewindtui.tui import interaction
from rewindtui.tui.gc_policy import DrawnLines
from rewindtui.tui.keys import run_binding_now
from rewindtui.tui.render_guard import guarded
from rewindtui.tui.transcript_layout import (
    START,
    current_from,
    estimate_height,
    first_turn,
    group_role,
    index_of,
    last_turn,
    neighbour_turn,
    scroll_to_show,
    turn_bounds,
    turn_has_user,
    turns_from,
)
from rewindtui.tui.turn_buttons import TurnButtons
from rewindtui.tui.widgets.part_view import has_more
from rewindtui.tui.widgets.transcript_cache import CACHE_ITEMS as _CACHE_ITEMS
from rewindtui.tui.widgets.transcript_cache import DrawnItems, Lines
from rewindtui.tui.widgets.transcript_items import _ACTION, _KEY, ItemPainter, _tooltip
from rewindtui.tui.widgets.transcript_marks import LineMarks
from rewindtui.tui.widgets.transcript_search import SearchMarks
from rewindtui.tui.widgets.windowed_view import WindowedView

__all__ = ["_CACHE_ITEMS", "Transcript"]

_STYLES = (
    "user",
    "agent",
    "system",
    "error",
    "muted",
    "button",
    "quiet",
    "disabled",
    "cursor",
    "cursor-bar",
    "bar",
    "preview",
    "rewind-point",
    "rewound",
    "rewound-mark",
    "search-hit",
    "search-current",
)


class Transcript(WindowedView, can_focus=True):
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
    Transcript > .transcript--search-hit { background: $warning 35%; }
    Transcript > .transcript--search-current { background: $accent; color: $text; text-style: bold; }
    """

    COMPONENT_CLASSES = {f"transcript--{name}" for name in _STYLES}

    #: The first item of the selected turn (None: nothing selected).
    cursor: reactive[int | None] = reactive(None, layout=False, repaint=True)
    #: Rewind mode: the selected turn and everything after it are previewed as going away.
    preview: reactive[bool] = reactive(False, layout=False, repaint=True)
    #: The server's rewind is a fork (kagent 1.0): the rewind point's rule says so (rewind_choice sets it).
    rewind_forks: bool = False

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
        #: what the messages' buttons offer: the chat's permissions gate, as last read
        self.buttons = TurnButtons()
        self.expanded: set[str] = set()
        self.hover: int | None = None
        self.painter = ItemPainter(self)  # how one item is drawn (transcript_items)
        self.marks = LineMarks(self)  # how a line is marked: selection, hover, preview (transcript_marks)
        self.search = SearchMarks(self)  # the search's hits, and bringing one into view (transcript_search)
        self._line_style = None  # the base style, while a frame is drawn
        self._cache = DrawnItems()  # items drawn lately, their lines (transcript_cache)
        self._drawn = DrawnLines()

    # -- model ---------------------------------------------------------------------------------
    def set_conversation(self, conversation: Conversation) -> None:
        """Show another conversation (a session opened): at its latest turn, following."""
        self.conversation = conversation
        self._cache.clear()
        self.search.clear()  # its hits were the other conversation's (the search finds them again)
        self.cursor = None
        self.preview = False
        self.hover = None
        self._relayout(0)
        self.follow_bottom()
        # a session of the same height as the one before leaves size and scroll as they were:
        # without a repaint the lines of the session left stay on screen (seen in a terminal)
        self.refresh()

    def set_buttons(self, buttons: TurnButtons) -> None:
        if buttons == self.buttons:
            return
        self.buttons = buttons
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

    # -- the items, for the windowed view (windowed_view; transcript_layout computes the geometry)
    def _count(self) -> int:
        return len(self.conversation.items)

    def _estimate_at(self, index: int, width: int) -> int:
        item = self.conversation.items[index]
        return estimate_height(item, width, item.key in self.expanded)

    def _known(self, index: int, width: int) -> int | None:
        drawn = self._cache.peek(self.conversation.items[index], self._cache_key(index, width))
        return None if drawn is None else len(drawn)

    def _measure(self, index: int) -> int:
        return len(self._strips(index, self.lines.width))

    def _width_changed(self) -> None:
        self._cache.clear()

    def _prepend(self, count: int) -> None:
        """``count`` items were put in front (older turns came in): the selection stays on its turn."""
        self._prepend_lines(count)
        if self.cursor is not None:
            self.cursor += count
        if self.hover is not None:
            self.hover += count

    def _remeasure(self, item: Item) -> None:
        index = index_of(self.conversation.items, item)
        if index is not None:
            self._cache.forget(item.key)
            self._reestimate(index)

    def _resized(self) -> None:
        if self.preview:
            self.call_after_refresh(self.scroll_to_turn)

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
        index = last_turn(self.conversation.items)
        return index is not None and self.select_turn(index)

    def turns_from(self, index: int) -> int:
        """How many turns of the conversation start at or after item ``index``."""
        return turns_from(self.conversation.items, index)

    def messages_from(self, index: int) -> int:
        """How many items of the conversation (rewound ones left out) are at or after ``index``."""
        return current_from(self.conversation.items, index)

    def scroll_to_turn(self) -> None:
        """Bring the selected turn fully into view, its rule and header included; a turn taller
        than the view is shown from its top."""
        bounds = self.selected_bounds()
        if bounds is None:
            return
        first, end = bounds
        self._make_exact(first, end)
        self._set_y(scroll_to_show(self._starts[first], self._starts[end], self._view_height, self.scroll_y))
        self.follow = False
        self.refresh()

    # -- rendering -----------------------------------------------------------------------------
    def _cache_key(self, index: int, width: int) -> tuple:
        items = self.conversation.items
        item = items[index]
        role = group_role(items, index)
        editable = (
            role == START and item.role != "user" and item.rewind_target is not None and turn_has_user(items, index)
        )
        return (
            item.rev,
            width,
            item.key in self.expanded,
            item.streaming,
            getattr(item, "stopped", False),
            self.buttons,
            editable,
            role,
        )

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

    def render_line(self, y: int) -> Strip:
        scroll_x, scroll_y = self.scroll_offset
        width = self.scrollable_content_region.width
        base = self._line_style or self.rich_style
        found = self._item_at(scroll_y + y)
        if found is None or found[0] >= len(self.conversation.items):
            return Strip.blank(width, base)
        index, line = found
        strips = self._strips(index, self._layout_width)
        strip = strips[line] if line < len(strips) else Strip.blank(self._layout_width)
        strip = self.search.mark(self.marks.mark(strip, index, line, self._layout_width), index, line)
        return strip.crop_extend(scroll_x, scroll_x + width, base)

    def _strips(self, index: int, width: int) -> Lines:
        item = self.conversation.items[index]
        key = self._cache_key(index, width)
        strips = self._cache.get(item, key)
        if strips is None:
            # one bad item: one line
            strips = Lines(guarded(lambda: self.painter._render_item(index, item, width, key[-1]), item))
            self._drawn.drew()
            self._cache.put(item, key, strips)
        return strips

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
        self.tooltip = _tooltip(action, self.buttons) if action else None
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
            and (
                (it.kind is ItemKind.MESSAGE and it.tools)
                or (it.kind in (ItemKind.MESSAGE, ItemKind.ARTIFACT) and has_more(it.other_parts))
            )
            or (it.role == "user" and fold(it.text) is not None)  # a big paste (output/pasted.py)
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
        if action in ("confirm", "confirm_restore", "act", "cursor_home", "cursor_end"):
            if not (self.preview and self.cursor is not None):
                return False
            if action in ("confirm", "confirm_restore", "act"):
                # what Enter and the chords do depends on the turn: the footer shows only what acts
                item = self.selected()
                rewound = item is not None and item.rewound is not None
                buttons = self.buttons  # what the chat's gate allows (TurnButtons.of)
                if action == "act":
                    what = parameters[0] if parameters else ""
                    if what in ("fork", "fork_branch"):
                        return (buttons.fork or buttons.fork_soon) and (rewound or what == "fork")
                    if what == "restore":
                        return rewound and buttons.restore
                    return not rewound
                if action == "confirm_restore":
                    return rewound and buttons.restore
                return not rewound
        return True

    def action_cursor(self, step: int) -> None:
        """Rewind mode: the previous / next turn. Otherwise: scroll a line."""
        if not (self.preview and self.cursor is not None):
            self._scroll_by(step)
            return
        bounds = self.selected_bounds()
        index = neighbour_turn(self.conversation.items, bounds, step) if bounds is not None else None
        if index is not None:
            self.select_turn(index)

    def action_cursor_home(self) -> None:
        index = first_turn(self.conversation.items)
        if index is not None:
            self.select_turn(index)

    def action_cursor_end(self) -> None:
        self.select_last_turn()

    def action_page(self, direction: int) -> None:
        self._scroll_by(direction * max(1, self._view_height - 2))

    def _scroll_by(self, lines: float) -> None:
        """Scroll as the user asked (a key): follow again only at the bottom."""
        self._set_y(self.scroll_y + lines)
        self.follow = self.scroll_y >= self.max_scroll_y

    def action_confirm(self) -> None:
        self.post_message(self.Confirm())

    def action_confirm_restore(self) -> None:
        """Enter on a rewound turn: the screen restores its branch (what the footer says)."""
        self.post_message(self.Confirm())

    def action_act(self, action: str) -> None:
        bounds = self.selected_bounds()
        if bounds is None:
            self.app.bell()
            return
        items = self.conversation.items
        rewound = items[bounds[0]].rewound is not None
        if action in ("restore", "fork_branch") and not rewound:
            self.notify(
                "Only a rewound turn (F4 shows them) can be restored or forked as a branch.",
                severity="warning",
                timeout=4,
            )
        elif action == "fork" and rewound:  # Fork on a rewound turn: fork its branch (as the picker's f)
            self.post_message(self.Action("fork_branch", items[bounds[0]]))
        elif action in ("edit", "rewind") and rewound:
            keys = f"Enter restores it, {interaction.keys_of('transcript.fork_branch')} forks it"
            self.notify(f"This turn was rewound: {keys}.", severity="warning", timeout=4)
        elif action == "tools":
            self._toggle_tools(items[bounds[0] : bounds[1]])
        elif action == "rewind":
            self.post_message(self.Confirm())  # r in rewind mode: what the preview shows
        else:
            self.post_message(self.Action(action, items[bounds[0]]))

    def action_leave(self) -> None:
        self.post_message(self.Leave())
