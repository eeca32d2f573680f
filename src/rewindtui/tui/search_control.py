"""Searching the open session (ctrl+f, ``/search [text]``): the search box, the hits counted and
highlighted, the view brought to each, rewound turns included.

The search is ``model/search.py``'s, over the items the transcript shows. Rewound turns are part of
it: opening the search shows them in place (as F4 does, and F4 hides them again) where the server
keeps them readable; where it does not, the box says so. While the box is open the count follows
the conversation (a streaming reply, older turns coming in) without moving the view; only typing
and the keys move it. Closing it (Esc) leaves the view at the hit and gives the composer its focus
back, its draft untouched: nothing typed in the box ever reaches the composer."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Protocol

from textual.timer import Timer

from rewindtui.base.textsafe import sanitize_line
from rewindtui.client.a2a_client import ClientError
from rewindtui.client.errors import user_message
from rewindtui.model import Change, Item
from rewindtui.model.search import Hit, SearchIndex
from rewindtui.tui.host import ScreenHost
from rewindtui.tui.widgets.search_bar import SearchBar

#: How long the count waits after a change of the conversation while a reply streams (seconds).
REFRESH_DELAY = 0.2
_EXCERPT = 30


class RewoundTurns(Protocol):
    """Whether rewound turns are shown in place (F4's state, shared with it)."""

    showing: bool


class SearchControl:
    def __init__(
        self,
        host: ScreenHost,
        *,
        rewound: RewoundTurns,
        bar: Callable[[], SearchBar],
        later: Callable[[float, Callable[[], Any]], Timer],
    ) -> None:
        self.host = host
        self.rewound = rewound
        self.bar = bar
        self.later = later
        self.index = SearchIndex()
        self.text = ""  #: the box's text
        self.query = ""  #: folded
        self.current: Hit | None = None
        #: the item the search looks back from when nothing is current (on the view's last line
        #: when the box opened; an item, not an index: items may come in front of it meanwhile)
        self.anchor: Item | None = None
        self.note = ""  #: said after the count once ("from the newest again")
        # whether rewound turns are searched (see rewound_words)
        self._reading = False  #: being read from the server
        self._reason = ""  #: why they are not searched
        self._retry = False  #: that reason may pass (older turns loading): look again on a change
        self._none = False  #: the server has none for this session
        self._shown_already = False  #: shown before the search opened (not by F4's state)
        self._touched: list[Item] = []
        self._stale = True  #: the index must look at every item (changes came while closed)
        self._timer: Timer | None = None
        self._conversation: object = None  #: the conversation indexed

    @property
    def is_open(self) -> bool:
        return self.bar().shown

    # -- opening and closing ------------------------------------------------------------------------
    def open(self, text: str | None = None) -> None:
        """Show the search box (``text``: search it now); again while open: back to the box."""
        host = self.host
        if host.rewind_mode:
            host.leave_mode(focus=False)
        was_open = self.is_open
        if not was_open:
            self.anchor = self._view_item()
            self.current = None
            self._show_rewound()
        bar = self.bar()
        bar.open(text)
        if text is not None or not was_open:
            self.search(bar.input.value)

    def close(self) -> None:
        """Esc: close the box; the view stays where it is, the composer gets the focus back."""
        self._cancel_timer()
        self.bar().close()
        self.host.transcript.search.clear()
        self.current = None
        composer = self.host.composer
        composer.screen.set_focus(composer)  # now: the keys typed right after Esc are forwarded there

    def handle(self, event: SearchBar.Changed | SearchBar.Step | SearchBar.Closed) -> None:
        if isinstance(event, SearchBar.Changed):
            self.search(event.text)
        elif isinstance(event, SearchBar.Step):
            self.step(event.direction)
        else:
            self.close()

    # -- searching ----------------------------------------------------------------------------------
    def search(self, text: str) -> None:
        """The box's text changed: the hit nearest the place searched from, looking back first."""
        self.text = text
        self.query = SearchIndex.query_of(text)
        self.note = ""
        self._sync()
        anchor = self.current.index if self.current is not None else self._anchor_index()
        hit = None
        if self.query:
            if anchor is None:
                hit = self.index.last(self.query)
            else:
                hit = self.index.at_or_before_item(self.query, anchor) or self.index.at_or_after_item(
                    self.query, anchor
                )
        self._go(hit)

    def step(self, direction: int) -> None:
        """The hit before (``direction`` < 0, older) or after; past either end, around."""
        if not self.query:
            self._say()
            return
        self._sync()
        index, query, current = self.index, self.query, self.current
        if current is None:
            hit = index.last(query) if direction < 0 else index.first(query)
        else:
            hit = index.before(query, current.at) if direction < 0 else index.after(query, current.at)
        self.note = ""
        if hit is None:
            hit = index.last(query) if direction < 0 else index.first(query)
            if hit is not None and current is not None:
                self.note = "from the newest again" if direction < 0 else "from the first again"
        self._go(hit)

    def _go(self, hit: Hit | None) -> None:
        self.current = hit
        marks = self.host.transcript.search
        marks.show(self.query, (hit.index, hit.nth) if hit is not None else None)
        if hit is not None:
            marks.bring_into_view(hit.index, hit.nth)
        self._say()

    def _say(self) -> None:
        bar = self.bar()
        notes = [n for n in (self.note, self._older_note(), self.rewound_words()) if n]
        tail = "".join(f" · {n}" for n in notes)
        if not self.query:
            bar.show_count(f"{bar.keys_hint(self.host.keymap)}{tail}")
            return
        count = self.index.count(self.query)
        if not count or self.current is None:
            shown = sanitize_line(self.text)
            shown = shown if len(shown) <= _EXCERPT else shown[: _EXCERPT - 1] + "…"
            bar.show_count(f"No hits for “{shown}”{tail}", none=True)
            return
        where = " · in a rewound turn" if self.current.rewound else ""
        bar.show_count(f"{self.index.ordinal(self.query, self.current):,} of {count:,}{where}{tail}")

    def _older_note(self) -> str:
        chat = self.host.chat
        if chat is None or chat.conversation.older_token is None:
            return ""
        return (
            "older turns are still loading" if not chat.older_error else "older turns could not be loaded: not searched"
        )

    # -- keeping up with the conversation -------------------------------------------------------------
    def changed(self, change: Change) -> None:
        """A change of the conversation shown: while the box is open, the count follows it (at
        once when items came or went, a moment later for a streaming reply's text)."""
        if not self.is_open:
            self._stale = True
            self._touched.clear()
            return
        self._touched.extend(change.updated)
        if change.turn_ended and self._none:
            self._show_rewound()  # a rewind since (another client's too): there may be some now
        if change.first is not None or change.prepended:
            self._stale = True
            self._cancel_timer()
            self.refresh()
        elif self._timer is None and change.updated:
            self._timer = self.later(REFRESH_DELAY, self.refresh)

    def refresh(self) -> None:
        """Count again; the current hit stays the same occurrence where it still is. The view
        does not move (it is the user's)."""
        self._timer = None
        if not self.is_open:
            return
        chat = self.host.chat
        if self._retry and chat is not None and not chat.why_not_rewound():
            self._show_rewound()  # what kept them out (older turns loading) is over
        current = self.current
        kept = self.index.item(current.index) if current is not None and current.index < self.index.size else None
        shown = self._conversation
        self._sync()
        if self._conversation is not shown:  # another session: searched afresh, from its end
            self.search(self.text)
            return
        items = self.host.transcript.conversation.items
        hit = None
        if current is not None and self.query:
            at = _index_of(items, kept, current.index) if kept is not None else None
            hit = self._nth_in(at, current.nth) if at is not None else None
            if hit is None:
                anchor = max(0, min(current.index, len(items) - 1))
                hit = self.index.at_or_before_item(self.query, anchor) or self.index.at_or_after_item(
                    self.query, anchor
                )
        elif self.query:
            hit = self.index.last(self.query)  # no hit before, some now (rewound turns read): the newest
        self.current = hit
        self.host.transcript.search.show(self.query, (hit.index, hit.nth) if hit is not None else None)
        self._say()

    def _nth_in(self, index: int, nth: int) -> Hit | None:
        hit = self.index.at_or_after_item(self.query, index)
        while hit is not None and hit.index == index and hit.nth < nth:
            hit = self.index.after(self.query, hit.at)
        return hit if hit is not None and hit.index == index else None

    def _sync(self) -> None:
        conversation = self.host.transcript.conversation
        if conversation is not self._conversation:  # another session shown: nothing of the last holds
            self._conversation = conversation
            self.current = None
            self._stale = True
        items = conversation.items
        self.index.sync(items, None if self._stale else self._touched)
        self._stale = False
        self._touched.clear()

    def _cancel_timer(self) -> None:
        if self._timer is not None:
            self._timer.stop()
            self._timer = None

    # -- rewound turns --------------------------------------------------------------------------------
    def _show_rewound(self) -> None:
        """Rewound turns shown in place for the search (as F4 shows them), where the server keeps
        them readable; else the box says why they are not searched."""
        self._reason, self._retry, self._none, self._shown_already = "", False, False, False
        chat = self.host.chat
        if chat is None:
            self._reason = "not connected"
            return
        if self.rewound.showing or chat.conversation.shows_rewound:
            self._shown_already = not self.rewound.showing
            return
        reason = chat.why_not_rewound()
        if reason:
            self._reason = reason
            self._retry = chat.conversation.older_token is not None and not chat.older_error
            return
        self.rewound.showing = True
        self._reading = True
        self.host.run_worker(self._read_rewound, group="rewound", exclusive=True, exit_on_error=False)

    async def _read_rewound(self) -> None:
        chat = self.host.chat
        if chat is None:
            return
        try:
            shown = await chat.show_rewound()
        except ClientError as exc:
            self.rewound.showing = False
            self._reason = user_message(exc)
            shown = 0
        finally:
            self._reading = False
        if not shown and not self._reason:
            self.rewound.showing = False  # none: F4 looks again next time, as after F4
            self._none = True
        if self.is_open:
            self.refresh()

    def rewound_words(self) -> str:
        """Whether the search covers rewound turns, in the box's words."""
        if self._reading:
            return "reading rewound turns…"
        if self._retry:
            return "rewound turns once they have"  # after "older turns are still loading"
        if self._reason:
            return f"rewound turns not searched: {self._reason}"
        if self.rewound.showing or self._shown_already:
            return "rewound turns included"
        if self._none:
            return "no rewound turns in this session"
        return "rewound turns hidden (F4 shows them)"

    # -- where the view is ----------------------------------------------------------------------------
    def _view_item(self) -> Item | None:
        """The item on the view's last line (None: an empty view)."""
        transcript = self.host.transcript
        items = transcript.conversation.items
        if not items:
            return None
        bottom = int(transcript.scroll_y) + max(1, transcript.scrollable_content_region.height) - 1
        found = transcript.lines.item_at(bottom)
        return items[found[0]] if found is not None and found[0] < len(items) else items[-1]

    def _anchor_index(self) -> int | None:
        """Where the item searched from is now (None: the end)."""
        if self.anchor is None:
            return None
        return _index_of(self.host.transcript.conversation.items, self.anchor, None)


def _index_of(items: list[Item], item: Item, near: int | None) -> int | None:
    """Where ``item`` is now: where it was, or anywhere (items came in front or went)."""
    if near is not None and near < len(items) and items[near] is item:
        return near
    for i in range(len(items) - 1, -1, -1):
        if items[i] is item:
            return i
    return None
