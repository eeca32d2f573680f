"""The cyclic garbage collector and the lines the transcript draws.

After a long session is loaded, what is alive is frozen out of the collector's way
(``rewindtui.chat.gc_paused``). Scrolling then draws item after item; each drawn item's lines (a
few dozen small objects) live a while in the transcript's cache, long enough to reach the
collector's oldest generation, and every few thousand of them a full pass walks all that was drawn
since the freeze: a frame of twice the usual time. So in a session long enough that its load froze
(and only then), the lines are frozen too, every :data:`DRAWN_ITEMS` newly drawn items, after a
collection of the young generations (what is garbage among them is freed first; lines that leave
the cache later are freed by reference counting, frozen or not: they hold no cycles).
"""

from __future__ import annotations

import gc

from rewindtui.chat import LONG_SESSION_ITEMS

#: Newly drawn items between two freezes: about a turn-over of the transcript's cache.
DRAWN_ITEMS = 128


class DrawnLines:
    """Counts the items a view draws anew, and freezes what they left once there are enough."""

    def __init__(self, every: int = DRAWN_ITEMS) -> None:
        self.every = every
        self.drawn = 0

    def drew(self) -> None:
        self.drawn += 1

    def settle(self, items: int) -> bool:
        """Before a frame: freeze the lines drawn since the last time, if there are enough and the
        view shows ``items``, as many as a load that froze (a short session leaves the collector
        as it is)."""
        if self.drawn < self.every or items < LONG_SESSION_ITEMS or not gc.isenabled():
            return False
        self.drawn = 0
        gc.collect(1)
        gc.freeze()
        return True
