"""A scroll view over a list of items of varying height that draws only what is in view: the base of
the transcript.

It keeps one height per item (estimated until the item is first drawn, then exact) in a
:class:`~rewindtui.tui.transcript_layout.LineLayout`, makes the items in view exact before a frame
is painted without the view jumping, and follows the bottom (new content scrolls into view) until
the user scrolls away, following again once they scroll back to the bottom. What the items are and
how they are drawn is the subclass's: it says how many there are, how tall one is drawn
(:meth:`_measure`), how tall one is guessed to be (:meth:`_estimate_at`) and how tall one it has
already drawn is (:meth:`_known`)."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from textual import events
from textual.geometry import Size
from textual.message import Message
from textual.scroll_view import ScrollView

from rewindtui.tui.transcript_layout import LineLayout


class WindowedView(ScrollView):
    class Following(Message):
        """The view started or stopped following the bottom."""

        def __init__(self, following: bool) -> None:
            super().__init__()
            self.following = following

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self._follow = True  # keep the bottom in view (until the user scrolls away)
        self.lines = LineLayout()  # the pure part: line offsets, windowing (transcript_layout)
        self._moving = 0  # > 0 while we scroll (not the user)

    # -- what the subclass says of its items ----------------------------------------------------
    def _count(self) -> int:
        raise NotImplementedError

    def _measure(self, index: int) -> int:
        """Item ``index`` drawn at the layout's width: its exact height."""
        raise NotImplementedError

    def _estimate_at(self, index: int, width: int) -> int:
        raise NotImplementedError

    def _known(self, index: int, width: int) -> int | None:
        """The height of item ``index`` as already drawn at ``width``, while that is still valid."""
        return None

    def _width_changed(self) -> None:
        """What was drawn at the old width is no longer of use."""

    # -- following the bottom ------------------------------------------------------------------
    @property
    def follow(self) -> bool:
        return self._follow

    @follow.setter
    def follow(self, value: bool) -> None:
        if value != self._follow:
            self._follow = value
            self.post_message(self.Following(value))

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
            old = self.scroll_y
            self.set_scroll(None, max(0, min(y, self.max_scroll_y)))
            # and where the wheel and Textual's scroll methods scroll from: set_scroll leaves the
            # target where it was (0 at first), so one notch of the wheel at the bottom of a long
            # session showed its first message
            self.set_reactive(ScrollView.scroll_target_y, self.scroll_y)
            if self.scroll_y != old:
                # set_scroll sets the offset without its watcher: without this the lines on screen
                # and the scrollbar stay where they were until something else repaints (issue 20, 11)
                self.watch_scroll_y(old, self.scroll_y)

    def _scroll_by(self, lines: float) -> None:
        """Scroll as the user asked (a key): follow again only at the bottom."""
        self._set_y(self.scroll_y + lines)
        self.follow = self.scroll_y >= self.max_scroll_y

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

    @property
    def _view_height(self) -> int:
        return self.scrollable_content_region.height or self.size.height

    # the layout's lists, by the names the drawing code (and tests) use
    @property
    def _starts(self) -> list[int]:
        return self.lines.starts

    @property
    def _layout_width(self) -> int:
        return self.lines.width

    def _item_at(self, y: int) -> tuple[int, int] | None:
        """(item index, line within item) for a virtual line number."""
        return self.lines.item_at(y)

    def _sized(self) -> None:
        """The virtual height follows the layout's total."""
        self.virtual_size = Size(self._content_width, self.lines.total)

    def _relayout(self, first: int) -> None:
        """Re-measure items from index ``first`` on (estimates; exact ones are kept where valid)."""
        width = self._content_width
        self.lines.relayout(
            first, self._count(), width, lambda i: self._known(i, width), lambda i: self._estimate_at(i, width)
        )
        self._sized()

    def _prepend_lines(self, count: int) -> None:
        """``count`` items were put in front: measure just them, and keep the view on the lines it
        shows (unless following the end)."""
        width = self._content_width
        before = self.lines.total
        if width != self.lines.width or len(self.lines.heights) + count != self._count():
            self._relayout(0)
        else:
            self.lines.prepend([self._estimate_at(i, width) for i in range(count)])
            self._sized()
        if not self.follow:
            self._set_y(self.scroll_y + self.lines.total - before)

    def _reestimate(self, index: int) -> None:
        """Item ``index`` changed: guessed again until it is drawn."""
        self.lines.set_estimate(index, self._estimate_at(index, self.lines.width or self._content_width))
        self._sized()

    def on_resize(self, event: events.Resize) -> None:
        self._check_width()
        self._resized()

    def _resized(self) -> None:
        """After a resize has been measured."""

    def _check_width(self) -> None:
        if self._content_width != self._layout_width:
            self._width_changed()
            self._relayout(0)
            if self.follow:
                self._scroll_to_end()

    def _make_visible_exact(self) -> None:
        """Draw the items in view for real, fixing their heights before the frame is painted.
        An item above the viewport that changes height moves the scroll offset with it, so the
        view does not jump; when following, the view stays at the bottom."""
        for _ in range(3):  # following: the bottom may move as the items there become exact
            self._scroll_to_end()
            changed, shift = self.lines.make_window_exact(int(self.scroll_y), self._view_height, self._measure)
            if not changed:
                return
            self._sized()
            if shift and not self.follow:
                self._set_y(self.scroll_y + shift)

    def _make_exact(self, first: int, end: int) -> None:
        """Draw items ``first``..``end`` now so that their heights are exact."""
        self.lines.make_exact(first, end, self._measure)
        self._sized()
