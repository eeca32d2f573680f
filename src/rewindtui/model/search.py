"""Searching a conversation's items as shown, rewound items included: case-insensitive, in order,
instant on a session of 50,000 messages. Pure.

Text is compared composed (NFC), so what looks the same is found the same however it is encoded.
What is searched is what an item shows as text: its text, and each of its tool calls as a line
``name(arguments) → result``. Hits are the non-overlapping occurrences of the query, oldest first;
they are not listed up front (a one-letter query in a long session has millions of them): the
index holds the items' lowered texts joined into one string, counts the occurrences there and
finds the one before or after a place on demand, all in C (``str.count``, ``str.find``). A change
of the items (a streamed delta, a page of older turns) re-reads only the items that changed.
"""

from __future__ import annotations

import json
import unicodedata
from bisect import bisect_left, bisect_right
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from itertools import accumulate, compress, repeat
from operator import attrgetter, is_
from typing import Any

from rewindtui.a2a import metadata as meta
from rewindtui.a2a import raw
from rewindtui.model.items import Item, ItemKind

#: Between two items in the joined text: no query can hold it (queries are one line of text).
_SEP = "\x00"
#: The longest query searched (a pasted page is not a search).
MAX_QUERY = 200
_REV = attrgetter("rev")
_TEXT = attrgetter("text")
_RAW = attrgetter("raw")
_PLUS_ONE = (1).__add__


def _json(value: Any) -> str:
    try:
        return json.dumps(value, ensure_ascii=False, default=str)
    except (TypeError, ValueError):
        return repr(value)


def searchable_text(item: Item) -> str:
    """The text of ``item`` that search looks in: its text, then a line per tool call
    (``name(arguments)``) and per tool result (``→ result``), read from its parts as they came."""
    text = item.text
    message = item.raw
    if item.kind is not ItemKind.MESSAGE or type(message) is not dict:
        return text  # no parts kept: a text-only message (most of a long session)
    lines = [text] if text else []
    for m in (message, *item.absorbed):
        for part in raw.parts(m):
            data = part.get("data") if type(part) is dict else None
            if not isinstance(data, dict):
                continue
            kind = meta.tool_type(part)
            if kind == meta.FUNCTION_CALL:
                args = data.get("args")
                lines.append(f"{data.get('name') or '?'}({_json(args) if args is not None else ''})")
            elif kind == meta.FUNCTION_RESPONSE:
                lines.append(f"→ {_json(data.get('response'))}")
    return "\n".join(lines)


def _folded(items: Sequence[Item]) -> tuple[list[int], str]:
    """The lengths of the folded searchable texts of ``items`` and those texts joined by the
    separator; the common case (text-only messages, text that lower case does not lengthen) in C."""
    texts = list(map(_TEXT, items))
    # the items that kept their wire dict (it may hold tool calls), found in C
    for i in compress(range(len(texts)), map(is_, map(type, map(_RAW, items)), repeat(dict))):
        texts[i] = searchable_text(items[i])
    joined = _SEP.join(texts)
    lowered = joined.lower()
    if (
        len(lowered) == len(joined)
        and joined.count(_SEP) == len(texts) - (1 if texts else 0)
        and unicodedata.is_normalized("NFC", lowered)
    ):
        # no text held the separator, none changed length (lower case never shortens) and none
        # is composed differently: the lowered join is the join of the folded texts
        return list(map(len, texts)), lowered
    folded = [fold(t) for t in texts]
    return list(map(len, folded)), _SEP.join(folded)


def fold(text: str) -> str:
    """Text as compared: lower case, composed (NFC: "é" typed finds an e followed by a combining
    accent), no separator, one line (a search box gives one line)."""
    return unicodedata.normalize("NFC", text.lower()).replace(_SEP, " ")


@dataclass(frozen=True)
class Hit:
    """One occurrence of the query."""

    at: int  #: where in the index's joined text (orders hits; :meth:`SearchIndex.after` starts there)
    index: int  #: the item's index in the items searched
    nth: int  #: which occurrence in that item (0: the first)
    rewound: bool  #: the item is from a rewound turn (shown in place, not in the conversation)


class SearchIndex:
    """The searched text of a list of items, kept in step with the list by :meth:`sync`."""

    def __init__(self) -> None:
        self._items: list[Item] = []
        self._revs: list[int] = []
        self._starts: list[int] = [0]  #: where each item's text starts in the joined text
        self._blob = ""
        #: the hits of the last self-overlapping query (see :meth:`_positions`)
        self._overlapping: dict[str, list[int]] = {}

    @property
    def size(self) -> int:
        """How many items are indexed."""
        return len(self._items)

    def item(self, index: int) -> Item:
        """Item ``index`` as indexed (the list as it was at the last :meth:`sync`)."""
        return self._items[index]

    # -- keeping up with the items ----------------------------------------------------------------
    def sync(self, items: Sequence[Item], touched: Iterable[Item] | None = None) -> bool:
        """Index ``items`` (the list as it is now); True if anything changed since the last call.

        ``touched``: the items that may have changed in place since then (a view's changes say
        which: ``Change.updated``); None: any of them may have, each is looked at."""
        old = self._items
        count = len(items)
        same = min(count, len(old))
        if count == len(old) and all(map(is_, items, old)):
            first = count
        else:
            first = next((i for i in range(same) if items[i] is not old[i]), same)
        revs = self._revs
        if touched is None:
            now = list(map(_REV, items[:first]))
            if now != revs[:first]:
                first = next(i for i, (a, b) in enumerate(zip(now, revs, strict=False)) if a != b)
        else:
            for item in touched:
                at = _find(items, item, first)
                if at is not None and item.rev != revs[at]:
                    first = at
        if first == count == len(old):
            return False
        self._reindex(items, first)
        return True

    def _reindex(self, items: Sequence[Item], first: int) -> None:
        """Read the items from ``first`` on again; the joined text keeps what comes before them."""
        tail = items[first:]
        lengths, joined = _folded(tail)
        del self._revs[first:]
        self._revs.extend(map(_REV, tail))
        del self._starts[first + 1 :]
        self._starts.extend(accumulate(map(_PLUS_ONE, lengths), initial=self._starts[first]))
        del self._starts[first + 1]  # accumulate gives its initial value first
        if not first:
            self._blob = joined
        else:  # the items before ``first`` as they were (the separators between them), then the tail
            kept = self._blob[: self._starts[first] - 1]
            self._blob = kept + _SEP + joined if tail else kept
        self._items = list(items)
        self._overlapping = {}

    # -- finding ------------------------------------------------------------------------------------
    @staticmethod
    def query_of(text: str) -> str:
        """The query a search box's text makes ("": nothing to search): folded, at most
        :data:`MAX_QUERY` characters."""
        text = text.strip()
        return fold(text[:MAX_QUERY]) if text else ""

    def _positions(self, query: str) -> list[int] | None:
        """Every hit's position, for a query that can overlap itself ("aa" in "aaa"): the hits are
        the occurrences a left-to-right scan finds, which a search from the right does not always
        land on. None for any other query (the C methods agree with that scan by themselves)."""
        if not _self_overlapping(query):
            return None
        found = self._overlapping.get(query)
        if found is None:
            found = []
            blob, step = self._blob, len(query)
            at = blob.find(query)
            while at >= 0:
                found.append(at)
                at = blob.find(query, at + step)
            self._overlapping = {query: found}
        return found

    def count(self, query: str) -> int:
        """How many hits ``query`` (folded: see :meth:`query_of`) has."""
        return self._blob.count(query) if query else 0

    def ordinal(self, query: str, hit: Hit) -> int:
        """The number of ``hit`` among the hits of ``query``, from 1 (the oldest)."""
        positions = self._positions(query)
        if positions is not None:
            return bisect_left(positions, hit.at) + 1
        return self._blob.count(query, 0, hit.at) + 1

    def first(self, query: str) -> Hit | None:
        return self.after(query, -1)

    def last(self, query: str) -> Hit | None:
        return self.before(query, len(self._blob) + 1)

    def after(self, query: str, at: int) -> Hit | None:
        """The first hit that starts after joined-text position ``at`` (None: none after it)."""
        if not query:
            return None
        positions = self._positions(query)
        if positions is not None:
            i = bisect_right(positions, at)
            return self._hit(query, positions[i]) if i < len(positions) else None
        return self._hit(query, self._blob.find(query, max(0, at + 1)))

    def before(self, query: str, at: int) -> Hit | None:
        """The last hit that starts before joined-text position ``at`` (None: none before it)."""
        if not query or at <= 0:
            return None
        positions = self._positions(query)
        if positions is not None:
            i = bisect_left(positions, at)
            return self._hit(query, positions[i - 1]) if i else None
        return self._hit(query, self._blob.rfind(query, 0, at - 1 + len(query)))

    def at_or_before_item(self, query: str, index: int) -> Hit | None:
        """The last hit in item ``index`` or an item before it (None: none there)."""
        if not self._items:
            return None
        index = max(0, min(index, len(self._items) - 1))
        return self.before(query, self._starts[index + 1] - 1)

    def at_or_after_item(self, query: str, index: int) -> Hit | None:
        """The first hit in item ``index`` or an item after it (None: none there)."""
        if not self._items:
            return None
        index = max(0, min(index, len(self._items) - 1))
        return self.after(query, self._starts[index] - 1)

    def in_item(self, query: str, index: int) -> int:
        """How many hits item ``index`` holds."""
        if not query or not 0 <= index < len(self._items):
            return 0
        return self._blob.count(query, self._starts[index], self._starts[index + 1] - 1)

    def _hit(self, query: str, at: int) -> Hit | None:
        if at < 0:
            return None
        index = bisect_right(self._starts, at) - 1
        blob, start = self._blob, self._starts[index]
        # the item's hits before this one: non-overlapping, as str.count counts them
        if _self_overlapping(query):
            nth, found = 0, blob.find(query, start, at)
            while found >= 0:
                nth += 1
                found = blob.find(query, found + len(query), at) if found + len(query) <= at else -1
        else:
            nth = blob.count(query, start, at)
        return Hit(at, index, nth, self._items[index].rewound is not None)


def _self_overlapping(query: str) -> bool:
    """Whether two occurrences of ``query`` can overlap ("aa", "abab")."""
    return any(query[k:] == query[: len(query) - k] for k in range(1, len(query)))


def _find(items: Sequence[Item], item: Item, before: int) -> int | None:
    """Where ``item`` is among the first ``before`` items (changed items are nearly always near
    the end: looked for from there)."""
    for i in range(min(before, len(items)) - 1, -1, -1):
        if items[i] is item:
            return i
    return None
