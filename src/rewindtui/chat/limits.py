"""How much a chat asks for and keeps: answer bounds, page sizes, stop grace, and the
collector policy for long sessions."""

from __future__ import annotations

import contextlib
import gc
import logging
from collections.abc import Iterator

log = logging.getLogger(__name__)


#: How long :meth:`Chat.stop` waits for the server to end the turn before aborting locally.
STOP_GRACE = 2.0
#: How long a stop pressed before the server's first frame named the turn waits for that frame
#: while the stream is alive (the cancel needs the task's id). Not the grace: on a loaded machine
#: the first frame took over 2 s, and a stop that gave up sent no cancel, so the turn completed.
STOP_NAME_WAIT = 30.0
#: A rewind (or redo) asks for at most this many of the effective history's newest messages; the
#: view keeps what it holds before them (:meth:`Conversation.apply_effective_tail`).
ANSWER_TAIL = 200
#: How often :meth:`Chat.resume` re-reads a running task when the server cannot stream it again.
POLL_INTERVAL = 1.0
_NAME_LIMIT = 40


#: Tasks per page when a session is read over REST by pages (newest first): one page is parsed and
#: shown at a time, so the memory a load peaks at is a page's, not the whole session's answer.
OPEN_PAGE_TASKS = 250

#: A load that leaves at least this many new objects for the cyclic collector (two a message, its
#: item and its list of message ids: about 10,000 messages) freezes what is alive out of its way
#: afterwards (see :func:`gc_paused`) ...
FREEZE_AFTER_OBJECTS = 20_000
#: ... as does, a page at a time, a session this long (in items) loaded by pages.
LONG_SESSION_ITEMS = FREEZE_AFTER_OBJECTS // 2


@contextlib.contextmanager
def gc_paused() -> Iterator[None]:
    """Pause the cyclic garbage collector: loading a long session makes thousands of small objects,
    none of them garbage, and the collector's passes over them would cost a third of the load.

    After a long load, what is alive is frozen (``gc.freeze``) after a collection of the young
    generations (what the load made, and any garbage among it): otherwise each later full pass
    walks every message again -- 0.2 s at 50,000 messages, a stall in the middle of a streamed
    reply or a scroll. Frozen objects are still freed by reference counting when nothing refers
    to them (a session's parsed JSON and its items hold no cycles, so leaving the session frees
    them). A full collection before freezing would also free cycles that were already garbage
    in the oldest generation, but it walks the whole session: a third of the time of loading
    100,000 messages (bench/bench_wire.py), so it is not made."""
    enabled = gc.isenabled()
    before = gc.get_count()[0]
    gc.disable()
    try:
        yield
    finally:
        if gc.get_count()[0] - before >= FREEZE_AFTER_OBJECTS:
            gc.collect(1)
            gc.freeze()
        if enabled:
            gc.enable()


def freeze_if_large(items: int) -> None:
    """While a long session's pages come in: what is alive is frozen out of the cyclic
    collector's way once the session is long (see :func:`gc_paused`), a page at a time."""
    if items >= LONG_SESSION_ITEMS:
        gc.collect(1)
        gc.freeze()


def derive_title(text: str) -> str:
    line = " ".join(text.strip().split("\n", 1)[0].split())
    return line if len(line) <= _NAME_LIMIT else line[: _NAME_LIMIT - 1].rstrip() + "…"
