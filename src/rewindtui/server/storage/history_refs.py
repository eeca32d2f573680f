"""How a rewind (or redo) task's effective history is stored: ``tasks.history_refs``.

Two forms are read:

* **a list** of message ``seq`` (written before this form existed): the whole effective history,
  20,000 numbers at 10,000 turns, read and written whole by every rewind;
* **a chain link**, a JSON object, written since::

      {"n": 20002, "b": 9120, "u": 19980, "s": [[9121, 9130, 40311], 40320, 40321]}

  the history is the first ``u`` messages of the history the rewind task ``b`` (a task ``seq`` of
  the same session) stores, then each segment of ``s`` in order: ``[lo, hi, m]`` is the messages
  of the session's tasks ``lo`` to ``hi`` (task ``seq``, both included), each task's oldest first,
  that have a ``seq`` of at most ``m`` (the newest message when the link was written: a message a
  task gains later is not in it); a number is one message. ``n`` is the history's length. No
  ``b``: nothing comes before the segments.

A rewind goes back to a state whose history is the newest earlier rewind's on its path (all of it)
followed by the turns after it, which are consecutive tasks of the session: the new link carries
that rewind's link on (its segments, then runs for those turns; :meth:`.SessionLog.link`), so a
link holds a few numbers per branch of the conversation whatever its length, and never stands on
another link. A list met that way (a row written before links) is turned into a link there. So this
code writes no ``b``; it reads it (the form allows a chain). An answer that joins a redo's history
(``store_tasks._JOIN_REWINDS``) is appended to ``s`` as a number, and ``n`` counts it.

Pure: text in, values out; :mod:`.session_log` resolves links from the task log it holds,
:mod:`.store_tasks` from the database.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

#: a segment: one message (its seq), or (first task seq, last task seq, newest message seq)
Segment = int | tuple[int, int, int]


@dataclass(frozen=True)
class Link:
    """A history stored as a chain link (see the module)."""

    total: int
    base: int | None
    upto: int
    segments: tuple[Segment, ...]

    def dumps(self) -> str:
        data: dict[str, Any] = {"n": self.total}
        if self.base is not None:
            data["b"] = self.base
            data["u"] = self.upto
        data["s"] = [s if isinstance(s, int) else list(s) for s in self.segments]
        return json.dumps(data, separators=(",", ":"))


def _int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def parse(text: str) -> list[int] | Link:
    """A stored history: a list of message seqs (the old form) or a :class:`Link`. ValueError
    when it is neither."""
    data = json.loads(text)
    if isinstance(data, list):
        if not all(_int(r) for r in data):
            raise ValueError("its stored history references are not a list of message numbers")
        return data
    if not isinstance(data, dict):
        raise ValueError("its stored history references are not a list of message numbers")
    total, base, upto, raw = data.get("n"), data.get("b"), data.get("u", 0), data.get("s")
    if not isinstance(total, int) or not _int(total) or not (base is None or _int(base)) or not _int(upto):
        raise ValueError("its stored history link is not one")
    if not isinstance(raw, list):
        raise ValueError("its stored history link is not one")
    segments: list[Segment] = []
    for s in raw:
        if _int(s):
            segments.append(s)
        elif isinstance(s, list) and len(s) == 3 and all(_int(v) for v in s):
            segments.append((s[0], s[1], s[2]))
        else:
            raise ValueError("its stored history link holds a segment that is not one")
    return Link(total, base, upto, tuple(segments))


def problem(text: str) -> str | None:
    """Why ``text`` is not a stored history (None: it is one)."""
    try:
        parse(text)
    except ValueError as exc:
        return str(exc) if "stored" in str(exc) else "its stored history references are not JSON"
    return None


def renumber(text: str, task_offset: int, message_offset: int) -> str:
    """``text`` with every task seq moved by ``task_offset`` and every message seq by
    ``message_offset`` (a session moved into another database, :mod:`.move`)."""
    stored = parse(text)
    if isinstance(stored, list):
        return json.dumps([s + message_offset for s in stored], separators=(",", ":"))
    return Link(
        stored.total,
        None if stored.base is None else stored.base + task_offset,
        stored.upto,
        tuple(
            s + message_offset
            if isinstance(s, int)
            else (s[0] + task_offset, s[1] + task_offset, s[2] + message_offset)
            for s in stored.segments
        ),
    ).dumps()


def _moved(segment: Segment, task_offset: int, message_offset: int) -> Segment:
    if isinstance(segment, int):
        return segment + message_offset
    return (segment[0] + task_offset, segment[1] + task_offset, segment[2] + message_offset)
