"""The transcript's drawn items, kept between frames: an item's lines by its key, valid while the
item, its revision, the width and what its buttons show stay the same, least recently drawn
evicted first. So scrolling back redraws nothing, and a long session does not keep every message
it passed drawn (nor give the garbage collector more to walk)."""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Hashable

from textual.strip import Strip

from rewindtui.model import Item

#: Drawn items kept (their lines): several screens' worth.
CACHE_ITEMS = 128


class Lines:
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


class DrawnItems:
    """item key -> (the item, its cache key, its lines). The item itself is compared because a
    reloaded session brings new items with the same keys and revisions."""

    def __init__(self, limit: int = CACHE_ITEMS) -> None:
        self.limit = limit
        self._items: OrderedDict[str, tuple[Item, Hashable, Lines]] = OrderedDict()

    def get(self, item: Item, key: Hashable) -> Lines | None:
        """``item``'s lines if drawn with ``key`` (and marked as drawn last), else None."""
        cached = self._items.get(item.key)
        if cached is None or cached[0] is not item or cached[1] != key:
            return None
        self._items.move_to_end(item.key)
        return cached[2]

    def peek(self, item: Item, key: Hashable) -> Lines | None:
        """As :meth:`get`, without marking it as drawn."""
        cached = self._items.get(item.key)
        return cached[2] if cached is not None and cached[0] is item and cached[1] == key else None

    def put(self, item: Item, key: Hashable, lines: Lines) -> None:
        self._items[item.key] = (item, key, lines)
        self._items.move_to_end(item.key)
        if len(self._items) > self.limit:
            self._items.popitem(last=False)

    def forget(self, key: str) -> None:
        self._items.pop(key, None)

    def clear(self) -> None:
        self._items.clear()

    def __contains__(self, key: object) -> bool:
        return key in self._items

    def __len__(self) -> int:
        return len(self._items)
