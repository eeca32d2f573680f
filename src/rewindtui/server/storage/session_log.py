"""A session's task log: which tasks are current, and what the conversation was at any point.

A session's tasks form a log, oldest first (``seq``). Turn and fork tasks own messages. A rewind
task went back to just before an invocation (``before``); a redo task is a rewind whose ``before``
is an earlier rewind's own invocation (ADK's rewind event), so it undoes that rewind.

ADK decides what the model sees by one rule (``google.adk.events._rewind_events._apply_rewinds``):
walking back from the end, a rewind event hides everything from the first event of the invocation
it names up to itself. So after a rewind before X the session is exactly what it was just before
X began -- and that holds when X is itself a rewind (redo) or a rewound turn (fork from a branch).

Over the task log the same rule is a tree: a task's parent is the task before it, except a
rewind's, whose parent is the task before X's first task. The current tasks are the path from
the last task to the root; the state just before any task is the path from the task before it.
The effective history of a state is its path's messages, oldest first -- up to the newest rewind
on the path, whose stored history (``refs``) is the effective history at that moment (it may
hold part of a task the rewind cut, e.g. a fork's copied history). Between two rewinds a path is
consecutive tasks, so a new rewind's history is stored as a link (:mod:`.history_refs`): the newest
rewind's on the path carried on, and the runs of tasks after it (:meth:`SessionLog.link`).

Pure: rows in, plans out; :class:`rewindtui.server.storage.store.Store` reads the rows and writes the
result.
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from itertools import islice
from operator import attrgetter
from typing import NamedTuple

from rewindtui.server.storage.history_refs import Link, Segment, parse

#: ``LogTask.refs_json`` of a rewind task whose history is stored but not read yet (see
#: :meth:`SessionLog.refs_needed`): a long session's rewinds each hold its whole history.
UNREAD = ""
#: Task kinds whose tasks hold their own messages, and those that go back in the log.
OWNING_KINDS = frozenset({"turn", "fork"})
REWIND_KINDS = frozenset({"rewind", "redo"})


class LogTask(NamedTuple):
    """A task of the log (a named tuple: a long session's log holds tens of thousands of these)."""

    seq: int
    id: str
    kind: str  # turn | fork | rewind | redo
    invocation_id: str | None  # a turn's invocation; a rewind's own (ADK's rewind event)
    before: str | None  # rewind / redo: the invocation it went back before
    rewound_by: str | None
    refs_json: str | None  # rewind / redo: its stored history (:mod:`.history_refs`); UNREAD: not read yet
    created_at: str = ""


class LogMessage(NamedTuple):
    seq: int
    task_seq: int  # the task that owns it
    task_id: str
    invocation_id: str | None


@dataclass(frozen=True)
class Plan:
    """Going back to just before an invocation: the effective history then, and the tasks whose
    rewound mark changes (seqs)."""

    #: the effective history then, as the rewind task stores it (:mod:`.history_refs`)
    link: Link
    boundary_task_seq: int  # the task where the invocation begins
    hide: list[int] = field(default_factory=list)
    restore: list[int] = field(default_factory=list)
    #: how many of the hidden tasks are turns (not rewinds): what the rewind takes away, in turns
    hidden_turns: int = 0
    #: the log the plan was made from (resolves :attr:`link`)
    log: SessionLog | None = field(default=None, repr=False, compare=False)

    @property
    def total(self) -> int:
        """How many messages the effective history holds (none of them resolved)."""
        return self.link.total

    @cached_property
    def effective(self) -> list[LogMessage]:
        """The effective history then, oldest first (the whole of it)."""
        assert self.log is not None
        return self.log.resolve_link(self.link)

    def newest(self, count: int) -> list[LogMessage]:
        """The newest ``count`` messages of :attr:`effective`, oldest first: only those resolved."""
        assert self.log is not None
        return list(reversed(list(islice(self.log.newest_first(self.link), max(0, count)))))


class NotInLog(LookupError):
    """No such invocation in the session (``reason``: ``unknown``, or ``rewound`` when it is in
    the log but not in the current conversation and only a current one was asked for)."""

    def __init__(self, reason: str, message: str) -> None:
        super().__init__(message)
        self.reason = reason


class SessionLog:
    def __init__(self, tasks: Sequence[LogTask], messages: Iterable[LogMessage]) -> None:
        self.tasks: list[LogTask] = []
        self._index: dict[int, int] = {}
        self._by_id: dict[str, int] = {}
        self._messages: dict[int, list[LogMessage]] = {}
        self._message: dict[int, LogMessage] = {}
        #: invocation -> (index of the task where it begins, seq of its first message or None)
        self._first: dict[str, tuple[int, int | None]] = {}
        self._parent: list[int] = []
        #: the invocations rewind tasks went back before (their parents depend on ``_first``)
        self._befores: set[str] = set()
        #: stored histories parsed (task index -> list | Link | None: unreadable), per view
        self._parsed: dict[int, list[int] | Link | None] = {}
        #: the newest rewind task at or before each task index (-1: none): a walk down the path
        #: steps from one to the next (the tasks between are consecutive on it)
        self._prev_rewind: list[int] = []
        #: messages the tasks before each index own (``_owned[i]``: tasks ``0..i-1``), counted as far
        #: as ``_owned_valid[0]`` (a message added to an older task counts again from it); both
        #: shared with the views, which count what the log holds
        self._owned: list[int] = [0]
        self._owned_valid = [0]
        self._add(list(tasks), messages)

    def _add(self, tasks: list[LogTask], messages: Iterable[LogMessage]) -> None:
        """Append ``tasks`` (newer than every task here) and ``messages`` (newer than every message
        here), in the order one log of all the rows reads them."""
        start = len(self.tasks)
        for i, task in enumerate(tasks, start):
            self._index[task.seq] = i
            self._by_id[task.id] = i
        self.tasks.extend(tasks)
        for message in messages:
            owned = self._messages.get(message.task_seq)
            if owned is None:
                self._messages[message.task_seq] = [message]
            else:
                owned.append(message)
            self._message[message.seq] = message
            owner = self._index.get(message.task_seq)
            if owner is not None and owner < self._owned_valid[0]:
                self._owned_valid[0] = owner
            inv = message.invocation_id
            if inv and inv not in self._first and message.task_seq in self._index:
                self._first[inv] = (self._index[message.task_seq], message.seq)
        for i, task in enumerate(tasks, start):
            if task.kind in REWIND_KINDS and task.invocation_id and task.invocation_id not in self._first:
                self._first[task.invocation_id] = (i, None)
        for i, task in enumerate(tasks, start):
            parent = i - 1
            if task.kind in REWIND_KINDS and task.before is not None:
                self._befores.add(task.before)
                if task.before in self._first:
                    begins = self._first[task.before][0]
                    if begins < i:
                        parent = begins - 1
            self._parent.append(parent)
            before = self._prev_rewind[i - 1] if i else -1
            self._prev_rewind.append(i if task.kind in REWIND_KINDS else before)

    def extend(self, tasks: Sequence[LogTask], messages: Sequence[LogMessage]) -> bool:
        """Append newer rows (``tasks`` after every task here, ``messages`` after every message), in
        place: only the new rows are looked at. False, having changed nothing, when that would not
        give what one log of all the rows gives: a new row names, for the first time, an invocation
        an older rewind went back before (that rewind's place in the tree would move) -- then build
        the log afresh. Logs :meth:`view` handed out share what grows: use a view for one plan."""
        if self._befores:
            named = {m.invocation_id for m in messages if m.invocation_id}
            named |= {t.invocation_id for t in tasks if t.kind in REWIND_KINDS and t.invocation_id}
            if any(inv in self._befores and inv not in self._first for inv in named):
                return False
        self._add(list(tasks), messages)
        return True

    def view(self) -> SessionLog:
        """A log sharing this one's indexes whose rewind histories can be given
        (:meth:`give_refs`) without this one seeing them (a cached log stays unread)."""
        new = SessionLog.__new__(SessionLog)
        new.__dict__.update(self.__dict__)
        new.tasks = list(self.tasks)
        new._parsed = {}
        return new

    # -- the tree ----------------------------------------------------------------------
    def path(self, index: int) -> list[int]:
        """Task indexes of the state after task ``index`` (-1: the empty session), newest first."""
        return list(self._walk(index))

    def _walk(self, index: int) -> Iterator[int]:
        """:meth:`path`, step by step (a walk that stops early reads only what it passes)."""
        while index >= 0:
            yield index
            index = self._parent[index]

    @property
    def head(self) -> int:
        return len(self.tasks) - 1

    def current(self) -> list[int]:
        return self.path(self.head)

    def effective(self, index: int) -> list[LogMessage]:
        """The effective history of the state after task ``index``, oldest first."""
        chunks: list[list[LogMessage]] = []
        for i in self._walk(index):
            task = self.tasks[i]
            if task.kind in REWIND_KINDS:
                if task.refs_json is not None:
                    chunks.append(self.resolve(i))
                    break
                continue
            chunks.append(self._messages.get(task.seq, []))
        out: list[LogMessage] = []
        for chunk in reversed(chunks):
            out += chunk
        return out

    # -- stored histories (:mod:`.history_refs`) ---------------------------------------
    def _stored(self, index: int) -> list[int] | Link | None:
        """The stored history of rewind task ``index``, parsed (None: it cannot be read)."""
        if index in self._parsed:
            return self._parsed[index]
        task = self.tasks[index]
        if task.refs_json == UNREAD:
            raise LookupError(f"the history of rewind task {task.id!r} was not read (SessionLog.refs_needed)")
        try:
            stored = parse(task.refs_json) if task.refs_json else []
        except ValueError:
            stored = None
        self._parsed[index] = stored
        return stored

    def _base(self, index: int, link: Link) -> int | None:
        """The task index of ``link``'s base (a rewind task before ``index``; None: none or not one)."""
        if link.base is None:
            return None
        base = self._index.get(link.base)
        if base is None or base >= index or self.tasks[base].kind not in REWIND_KINDS:
            return None
        return base

    def _chain(self, index: int) -> Iterator[int]:
        """Rewind task ``index`` and the bases under it, newest first (each stored history read)."""
        at: int | None = index
        while at is not None:
            yield at
            stored = self._stored(at)
            at = self._base(at, stored) if isinstance(stored, Link) else None

    def _expand(self, segment: Segment) -> list[LogMessage]:
        if isinstance(segment, int):
            message = self._message.get(segment)
            return [] if message is None else [message]
        lo, hi, newest = segment
        seq = attrgetter("seq")
        out: list[LogMessage] = []
        for task in self.tasks[bisect_left(self.tasks, lo, key=seq) : bisect_right(self.tasks, hi, key=seq)]:
            for message in self._messages.get(task.seq, ()):
                if message.seq > newest:
                    break
                out.append(message)
        return out

    def _expand_newest_first(self, segment: Segment) -> Iterator[LogMessage]:
        if isinstance(segment, int):
            yield from self._expand(segment)
            return
        lo, hi, newest = segment
        seq = attrgetter("seq")
        first, last = bisect_left(self.tasks, lo, key=seq), bisect_right(self.tasks, hi, key=seq)
        for i in range(last - 1, first - 1, -1):
            for message in reversed(self._messages.get(self.tasks[i].seq, ())):
                if message.seq <= newest:
                    yield message

    def resolve(self, index: int) -> list[LogMessage]:
        """The whole stored history of rewind task ``index``, oldest first (its chain resolved)."""
        chain = list(self._chain(index))
        out: list[LogMessage] = []
        for i in reversed(chain):  # the oldest base first
            stored = self._stored(i)
            if stored is None:
                out = []
            elif isinstance(stored, list):
                out = [m for m in map(self._message.get, stored) if m is not None]
            else:
                out = out[: stored.upto] if self._base(i, stored) is not None else []
                for segment in stored.segments:
                    out += self._expand(segment)
        return out

    def resolve_link(self, link: Link, index: int | None = None) -> list[LogMessage]:
        """The history ``link`` stands for (not stored yet: its base is any rewind task here)."""
        base = self._base(len(self.tasks) if index is None else index, link)
        out = self.resolve(base)[: link.upto] if base is not None else []
        for segment in link.segments:
            out += self._expand(segment)
        return out

    def _length(self, index: int) -> int:
        stored = self._stored(index)
        if stored is None:
            return 0
        if isinstance(stored, list):
            return sum(1 for s in stored if s in self._message)
        return stored.total

    def _newest_of(self, index: int, limit: int) -> Iterator[LogMessage]:
        """The first ``limit`` messages of rewind task ``index``'s stored history, newest first,
        resolved one at a time (a chain link's own segments first, then its base's)."""
        stored = self._stored(index)
        if stored is None or limit <= 0:
            return
        if isinstance(stored, list):
            history = [m for m in map(self._message.get, stored) if m is not None][:limit]
            yield from reversed(history)
            return
        yield from self._link_newest_first(stored, index, limit)

    def _link_newest_first(self, link: Link, index: int, limit: int) -> Iterator[LogMessage]:
        base = self._base(index, link)
        upto = min(link.upto, self._length(base)) if base is not None else 0
        skip = max(0, upto + sum(self._segment_length(s) for s in link.segments) - limit) if limit < link.total else 0
        for segment in reversed(link.segments):
            for message in self._expand_newest_first(segment):
                if skip:
                    skip -= 1
                    continue
                yield message
        if base is not None:
            yield from self._newest_of(base, min(upto, limit))

    def _segment_length(self, segment: Segment) -> int:
        if isinstance(segment, int):
            return int(segment in self._message)
        lo, hi, newest = segment
        seq = attrgetter("seq")
        owned = self._messages
        tasks = self.tasks[bisect_left(self.tasks, lo, key=seq) : bisect_right(self.tasks, hi, key=seq)]
        if self._message and newest >= next(reversed(self._message)):  # every message they hold
            return sum(len(owned.get(t.seq, ())) for t in tasks)
        return len(self._expand(segment))

    def newest_first(self, link: Link) -> Iterator[LogMessage]:
        """The history ``link`` stands for, newest first, resolved as far as it is read."""
        return self._link_newest_first(link, len(self.tasks), link.total)

    def _runs(self, index: int) -> tuple[int | None, list[tuple[int, int]]]:
        """The path from task ``index`` down to the newest rewind on it with a stored history: that
        rewind (None: none) and the runs of consecutive task indexes before it, newest first. A
        step per rewind on the way, not per task (``_prev_rewind``)."""
        runs: list[tuple[int, int]] = []
        i = index
        while i >= 0:
            r = self._prev_rewind[i]
            if r < i:
                runs.append((r + 1, i))
            if r < 0:
                return None, runs
            if self.tasks[r].refs_json is not None:
                return r, runs
            i = self._parent[r]
        return None, runs

    def _owned_count(self, first: int, last: int) -> int:
        """Messages the tasks ``first`` to ``last`` (indexes, both included) own."""
        owned, valid = self._owned, self._owned_valid
        if len(owned) < last + 2 or valid[0] < last + 1:
            start = min(valid[0], len(owned) - 1)
            del owned[start + 1 :]
            messages = self._messages
            for task in self.tasks[start:]:
                owned.append(owned[-1] + len(messages.get(task.seq, ())))
            valid[0] = len(self.tasks)
        return owned[last + 1] - owned[first]

    def link(self, index: int, *, boundary: int | None = None, before_message: int | None = None) -> Link:
        """The effective history after task ``index`` as a chain link: the newest rewind on the path
        (all of it) and the runs of tasks after it, each a segment; with ``boundary``, also the
        messages of that task older than ``before_message`` (a fork's copied history cut)."""
        base, runs = self._runs(index)
        newest = next(reversed(self._message), 0) if self._message else 0
        segments: list[Segment] = []
        lengths: list[int] = []
        for first, last in reversed(runs):
            segments.append((self.tasks[first].seq, self.tasks[last].seq, newest))
            lengths.append(self._owned_count(first, last))
        if boundary is not None and before_message is not None:
            cut: Segment = (self.tasks[boundary].seq, self.tasks[boundary].seq, before_message - 1)
            segments.append(cut)
            lengths.append(self._segment_length(cut))
        ours = [r for r, n in zip(segments, lengths, strict=True) if n]
        stored = self._stored(base) if base is not None else None
        if base is None:
            link = Link(0, None, 0, ())
        elif isinstance(stored, Link):
            link = stored
        else:  # a list (written before links; None: unreadable, as empty): as a link, once
            link = self._as_link(self.resolve(base))
        # the base's history whole, then ours: the base's own link carried on (its base and
        # segments, ours after them), so a link never stands on another link
        out = list(link.segments)
        for segment in ours:
            self._append(out, segment)
        return Link(link.total + sum(lengths), link.base, link.upto, tuple(out))

    def _as_link(self, history: list[LogMessage]) -> Link:
        """``history`` (a stored list, resolved) as a link: each block of messages of consecutive
        tasks (tasks between owning none) a run, where the run holds exactly that block; else
        the block's messages one by one."""
        segments: list[Segment] = []
        block: list[LogMessage] = []
        last = -1

        def flush() -> None:
            if not block:
                return
            run: Segment = (block[0].task_seq, block[-1].task_seq, max(m.seq for m in block))
            if self._expand(run) == block:
                self._append(segments, run)
            else:
                for m in block:
                    segments.append(m.seq)

        for message in history:
            owner = self._index.get(message.task_seq, -1)
            on = owner == last or (owner > last and self._owned_count(last + 1, owner - 1) == 0)
            if block and not (owner >= 0 and on):
                flush()
                block = []
            block.append(message)
            last = owner
        flush()
        return Link(len(history), None, 0, tuple(segments))

    #: messages :meth:`_append` looks at to merge two runs of tasks (more: the runs stay two)
    MERGE_LOOK = 256

    def _append(self, segments: list[Segment], segment: Segment) -> None:
        """Add ``segment`` to ``segments``: merged with the last one where both are runs of tasks
        and one run from the first's start to the second's end holds the same messages -- the
        tasks between them own none, and no message of the first run is newer than its bound
        (else it would be in the merged run at its task's place, not where a join put it)."""
        last = segments[-1] if segments else None
        if isinstance(last, tuple) and isinstance(segment, tuple) and segment[2] >= last[2]:
            first, end = self._index.get(last[0]), self._index.get(last[1])
            start = self._index.get(segment[0])
            if first is not None and end is not None and start is not None and end < start:
                between = self._owned_count(end + 1, start - 1) if start > end + 1 else 0
                if between == 0 and not self._newer_in(first, end, last[2]):
                    segments[-1] = (last[0], segment[1], segment[2])
                    return
        segments.append(segment)

    def _newer_in(self, first: int, last: int, bound: int) -> bool:
        """A task ``first`` to ``last`` (indexes) owns a message newer than ``bound`` (True also
        when more than :data:`MERGE_LOOK` messages are newer: not looked at)."""
        for n, message in enumerate(reversed(self._message.values())):
            if message.seq <= bound:
                return False
            if n >= self.MERGE_LOOK:
                return True
            owner = self._index.get(message.task_seq)
            if owner is not None and first <= owner <= last:
                return True
        return False

    def _newest_rewind(self, index: int) -> int | None:
        """The task index whose stored history :meth:`effective` of ``index`` reads (None: none)."""
        return self._runs(index)[0]

    def refs_needed(self, invocation_id: str | None = None) -> list[int]:
        """Seqs of the rewind tasks whose unread histories :meth:`current_invocations` and
        :meth:`plan` of ``invocation_id`` read (give them with :meth:`give_refs`)."""
        wanted = {self._newest_rewind(self.head)}
        found = self._first.get(invocation_id) if invocation_id is not None else None
        if found is not None:
            wanted.add(self._newest_rewind(found[0] - 1))
        needed = set()
        for i in wanted:
            while i is not None:  # down the chain of bases, to the first not read
                if self.tasks[i].refs_json == UNREAD:
                    needed.add(self.tasks[i].seq)
                    break
                stored = self._stored(i)
                i = self._base(i, stored) if isinstance(stored, Link) else None
        return sorted(needed)

    def give_refs(self, refs: dict[int, str]) -> None:
        """The stored histories (seq -> JSON) of rewind tasks read late."""
        for seq, text in refs.items():
            i = self._index[seq]
            self.tasks[i] = self.tasks[i]._replace(refs_json=text)
            self._parsed.pop(i, None)

    def current_invocations(self) -> list[str]:
        """The invocations of the current conversation, in order (each once)."""
        return list(dict.fromkeys(m.invocation_id for m in self.effective(self.head) if m.invocation_id))

    def is_current(self, invocation_id: str) -> bool:
        """``invocation_id`` is in :meth:`current_invocations`: the current conversation read from
        its newest message back, as far as the invocation's first message (not the whole of it)."""
        for i in self._walk(self.head):
            task = self.tasks[i]
            if task.kind in REWIND_KINDS:
                if task.refs_json is not None:
                    return any(m.invocation_id == invocation_id for m in self._newest_of(i, self._length(i)))
                continue
            if any(m.invocation_id == invocation_id for m in self._messages.get(task.seq, ())):
                return True
        return False

    # -- going back --------------------------------------------------------------------
    def plan(self, invocation_id: str, *, current_only: bool) -> Plan:
        """Go back to just before ``invocation_id`` (a turn's, or a rewind's own). With
        ``current_only``, it must be in the current conversation (a plain rewind)."""
        found = self._first.get(invocation_id)
        if found is None:
            raise NotInLog("unknown", f"{invocation_id!r} is not an invocation of this session")
        begins, first_message = found
        if current_only and not self.is_current(invocation_id):
            raise NotInLog(
                "rewound",
                f"invocation {invocation_id!r} was already rewound; choose one from the current history",
            )
        task = self.tasks[begins]
        # with the messages of earlier invocations the task holds too (a fork's copied history)
        cut = task.kind in OWNING_KINDS and first_message is not None
        link = self.link(begins - 1, boundary=begins if cut else None, before_message=first_message)
        # the tasks on one path and not the other: both walked back until they meet (a parent's
        # index is below its child's, so the one further on steps back), not the shared part
        now, then = self.head, begins - 1
        hide: list[int] = []
        restore: list[int] = []
        while now != then:
            if now > then:
                hide.append(now)
                now = self._parent[now]
            else:
                restore.append(then)
                then = self._parent[then]
        return Plan(
            link=link,
            boundary_task_seq=task.seq,
            hide=sorted(self.tasks[i].seq for i in hide),
            restore=sorted(self.tasks[i].seq for i in restore),
            hidden_turns=sum(1 for i in hide if self.tasks[i].kind == "turn"),
            log=self,
        )

    def task(self, task_id: str) -> LogTask | None:
        index = self._by_id.get(task_id)
        return self.tasks[index] if index is not None else None

    def last_rewind(self) -> LogTask | None:
        """The rewind a plain redo undoes: the newest current rewind with no turn after it (redos
        of later rewinds may follow it). None when a turn came after the last rewind."""
        for i in self._walk(self.head):
            task = self.tasks[i]
            if task.kind == "redo":
                continue
            return task if task.kind == "rewind" else None
        return None
