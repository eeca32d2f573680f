"""The transcript's pure layout, with no Textual: where each item starts (line offsets from
heights that are estimated, then exact once drawn), which item a line belongs to, making the
items in a window exact without the view jumping, and which items make a turn (selection).

:class:`~rewindtui.tui.widgets.transcript.Transcript` draws what this computes; tests drive it
without an app (``tests/tui/test_transcript_layout.py``)."""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Callable, Sequence
from itertools import accumulate, islice

from rewindtui.model import Item, ItemKind
from rewindtui.model.turn_numbers import turn_starts as turn_starts  # re-exported: one rule
from rewindtui.output.pasted import fold


class LineLayout:
    """Heights and start lines of a list of items (``starts[i]``: the first line of item ``i``;
    ``starts[-1]``: the total)."""

    def __init__(self) -> None:
        self.width = 0
        self.heights: list[int] = []
        self.exact: list[bool] = []
        self.starts: list[int] = [0]

    @property
    def total(self) -> int:
        return self.starts[-1]

    def reset(self, width: int) -> None:
        self.width = width
        self.heights.clear()
        self.exact.clear()
        del self.starts[1:]

    def truncate(self, first: int) -> None:
        """Forget items from ``first`` on (they are measured again)."""
        del self.heights[first:]
        del self.exact[first:]

    def append(self, height: int, exact: bool) -> None:
        self.heights.append(height)
        self.exact.append(exact)

    def prepend(self, heights: Sequence[int]) -> None:
        """Items put in front, measured by estimate; the one after them may change its look."""
        count = len(heights)
        self.heights[:0] = list(heights)
        self.exact[:0] = [False] * count
        if count < len(self.exact):
            self.exact[count] = False
        self.recount(0)

    def recount(self, first: int = 0) -> None:
        """Recompute the start line of items from ``first`` on, and the total."""
        first = min(first, len(self.starts) - 1)
        del self.starts[first + 1 :]
        self.starts.extend(islice(accumulate(self.heights[first:], initial=self.starts[first]), 1, None))

    def relayout(
        self, first: int, count: int, width: int, known: Callable[[int], int | None], estimate: Callable[[int], int]
    ) -> None:
        """Measure items ``first``..``count`` again at ``width`` (all of them when the width
        changed): ``known(index)`` is an item's drawn height while it is still valid, else None and
        ``estimate(index)`` stands in until it is drawn."""
        if width != self.width:
            first = 0
            self.reset(width)
        first = max(0, min(first, len(self.heights), count))
        self.truncate(first)
        for index in range(first, count):
            height = known(index)
            self.append(estimate(index) if height is None else height, height is not None)
        self.recount(first)

    def set_estimate(self, index: int, height: int) -> None:
        """A re-estimated item (it changed): not exact any more; the next one's look may change."""
        if index < len(self.heights) and self.heights[index] != height:
            self.heights[index] = height
            self.exact[index] = False
            self.recount(index)
        if index + 1 < len(self.exact):
            self.exact[index + 1] = False

    def item_at(self, y: int) -> tuple[int, int] | None:
        """(item index, line within the item) for a line number, or None past either end."""
        if not self.heights or y < 0 or y >= self.total:
            return None
        index = bisect_right(self.starts, y) - 1
        return index, y - self.starts[index]

    def make_window_exact(self, top: int, height: int, measure: Callable[[int], int]) -> tuple[bool, int]:
        """Measure (``measure(index)``: its drawn height) the items not yet exact in the window of
        ``height`` lines from ``top``. Returns (anything changed, lines by which items above
        ``top`` grew: the scroll offset moves by that much so the view does not jump)."""
        first = self.item_at(top)
        if first is None:
            return False, 0
        index = first[0]
        changed_from: int | None = None
        shift = 0
        y = self.starts[index]
        while index < len(self.heights) and y < top + height:
            if not self.exact[index]:
                new = measure(index)
                if new != self.heights[index]:
                    changed_from = index if changed_from is None else changed_from
                    if y < top:
                        shift += new - self.heights[index]
                    self.heights[index] = new
                self.exact[index] = True
            y += self.heights[index]
            index += 1
        if changed_from is None:
            return False, 0
        self.recount(changed_from)
        return True, shift

    def make_exact(self, first: int, end: int, measure: Callable[[int], int]) -> None:
        """Measure items ``first``..``end`` so that their heights are exact."""
        changed_from: int | None = None
        for index in range(first, min(end, len(self.heights))):
            if not self.exact[index]:
                new = measure(index)
                if new != self.heights[index]:
                    changed_from = index if changed_from is None else changed_from
                    self.heights[index] = new
                self.exact[index] = True
        if changed_from is not None:
            self.recount(changed_from)


# -- turns (what the selection selects) ----------------------------------------------------------
def turn_bounds(items: Sequence[Item], index: int) -> tuple[int, int] | None:
    """(first, end) item indexes of the turn holding item ``index``: the items sharing its rewind
    target, with the untargeted items (errors) that follow them; for a rewound item shown in place
    (F4), the rewound items of its invocation next to it. None if no turn."""
    if not 0 <= index < len(items):
        return None
    if items[index].rewound is not None:
        return rewound_bounds(items, index)
    i = index
    while i >= 0 and items[i].rewind_target is None:
        i -= 1
    if i < 0:
        return None
    target = items[i].rewind_target
    first = i
    j = i - 1
    while j >= 0 and items[j].rewind_target in (target, None) and items[j].rewound is None:
        if items[j].rewind_target == target:
            first = j
        j -= 1
    end = i + 1
    while end < len(items) and items[end].rewind_target in (target, None) and items[end].rewound is None:
        end += 1
    return first, end


def rewound_bounds(items: Sequence[Item], index: int) -> tuple[int, int]:
    invocation = items[index].invocation_id
    first = index
    while first > 0 and items[first - 1].rewound is not None and items[first - 1].invocation_id == invocation:
        first -= 1
    end = index + 1
    while end < len(items) and items[end].rewound is not None and items[end].invocation_id == invocation:
        end += 1
    return first, end


def turns_from(items: Sequence[Item], index: int) -> int:
    """How many turns of the conversation start at or after item ``index`` (rewound turns shown
    in place by F4 are not in it: not counted)."""
    count, last = 0, None
    for item in islice(items, index, None):
        if item.rewound is not None:
            continue
        target = item.rewind_target
        if target is not None and target != last:
            count += 1
            last = target
    return count


def current_from(items: Sequence[Item], index: int) -> int:
    """How many items of the conversation are at or after item ``index`` (what a rewind there
    takes away; rewound items shown in place by F4 are not in the conversation: not counted)."""
    return sum(1 for item in islice(items, index, None) if item.rewound is None)


def last_turn(items: Sequence[Item]) -> int | None:
    """The index of the last item that belongs to a turn (None: no turn)."""
    return next((i for i in range(len(items) - 1, -1, -1) if items[i].rewind_target is not None), None)


def first_turn(items: Sequence[Item]) -> int | None:
    """The index of the first item that belongs to a turn (None: no turn)."""
    return next((i for i, item in enumerate(items) if item.rewind_target is not None), None)


def neighbour_turn(items: Sequence[Item], bounds: tuple[int, int], step: int) -> int | None:
    """An item of the turn before (``step`` < 0) or after the turn ``bounds`` (None: none)."""
    if step < 0 and bounds[0] > 0:
        previous = turn_bounds(items, bounds[0] - 1)
        return previous[0] if previous is not None else None
    if step > 0 and bounds[1] < len(items):
        return bounds[1]
    return None


def index_of(items: Sequence[Item], item: Item) -> int | None:
    """Where ``item`` is (this very object, else an equal one); items that change in place are
    nearly always near the end."""
    for i in range(len(items) - 1, max(-1, len(items) - 200), -1):
        if items[i] is item:
            return i
    try:
        return items.index(item)
    except ValueError:
        return None


def scroll_to_show(top: int, bottom: int, view: int, scroll_y: float) -> float:
    """The scroll offset that shows lines ``top``..``bottom`` whole, moving as little as it can; a
    span taller than the view is shown from its top."""
    if bottom - top > view or top < scroll_y:
        return top
    if bottom > scroll_y + view:
        return bottom - view
    return scroll_y


# -- how items are grouped and measured before they are drawn -------------------------------------
#: Group roles: the first item of a group draws a header; a continuation (a further agent message of
#: the same turn and author) draws only a thin line holding its quiet button.
START, CONTINUATION = "start", "continuation"


def group_role(items: Sequence[Item], index: int) -> str:
    """START, or CONTINUATION for an agent message that follows one of the same turn and author."""
    if index <= 0:
        return START
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


def turn_has_user(items: Sequence[Item], index: int) -> bool:
    """True if the turn of item ``index`` opens with a user message on screen (so it can be edited)."""
    target = items[index].rewind_target
    for j in range(index, max(-1, index - 64), -1):
        if items[j].rewind_target != target:
            return False
        if items[j].role == "user" and items[j].kind is ItemKind.MESSAGE:
            return True
    return False


def estimate_height(item: Item, width: int, expanded: bool) -> int:
    """The lines ``item`` will take at ``width`` before it is drawn (its tool lines ``expanded``)."""
    inner = max(10, width - 4)
    lines = 2  # separator or button line, and header
    text = item.text
    if item.role == "user" and not expanded and (folded := fold(text)) is not None:
        text = f"{folded.head}\n{folded.label}"  # a big paste shows folded (output/pasted.py)
    if len(text) < inner:  # no line can wrap: one line per line (most messages; asked for every item on open)
        lines += text.count("\n") + 1 if text else 0
    else:
        for line in text.split("\n"):
            lines += 1 + len(line) // inner
    if item.kind is ItemKind.MESSAGE and item.raw is not None and item.tools:
        lines += len(item.tools) * (8 if expanded else 1)
    return lines
