"""The store's task log follows ADK's own rewind rule, for any sequence of turns, rewinds and
redos (hypothesis): the conversation the log calls current is the one ADK's
``_apply_rewinds`` leaves of the matching events, the rewound marks are exactly the tasks off the
current path, and "just before X" (fork) is ADK's prefix of events before X."""

from __future__ import annotations

from google.adk.events._rewind_events import _apply_rewinds
from google.adk.events.event import Event
from google.adk.events.event_actions import EventActions
from hypothesis import given, settings
from hypothesis import strategies as st

from rewindtui.server.storage.session_log import UNREAD, LogMessage, LogTask, NotInLog, SessionLog


class Model:
    """A session kept twice: ADK events, and the store's task log written the way the store does."""

    def __init__(self) -> None:
        self.events: list[Event] = []
        self.tasks: list[LogTask] = []
        self.messages: list[LogMessage] = []
        self.seq = 0

    def log(self) -> SessionLog:
        return SessionLog(self.tasks, self.messages)

    def _next(self) -> int:
        self.seq += 1
        return self.seq

    def turn(self) -> None:
        seq = self._next()
        inv = f"i{seq}"
        self.tasks.append(LogTask(seq, f"t{seq}", "turn", inv, None, None, None))
        for role in ("user", "model"):
            self.events.append(Event(invocation_id=inv, author=role))
            self.messages.append(LogMessage(self._next(), seq, f"t{seq}", inv))

    def go_back(self, before: str, *, redo_of: str | None) -> None:
        plan = self.log().plan(before, current_only=redo_of is None)
        seq = self._next()
        inv = f"r{seq}"
        self.events.append(
            Event(invocation_id=inv, author="user", actions=EventActions(rewind_before_invocation_id=before))
        )
        task_id = f"t{seq}"
        marks = {s: task_id for s in plan.hide} | {s: None for s in plan.restore}
        self.tasks = [t._replace(rewound_by=marks.get(t.seq, t.rewound_by)) for t in self.tasks]
        refs = "[" + ",".join(str(m.seq) for m in plan.effective) + "]"
        self.tasks.append(LogTask(seq, task_id, "redo" if redo_of else "rewind", inv, before, None, refs))

    def adk_invocations(self, events: list[Event] | None = None) -> list[str]:
        kept = _apply_rewinds(self.events if events is None else events)
        return list(dict.fromkeys(e.invocation_id for e in kept))


ops = st.lists(
    st.one_of(
        st.just(("turn", 0)),
        st.tuples(st.just("rewind"), st.integers(0, 20)),
        st.just(("redo_last", 0)),
        st.tuples(st.just("redo"), st.integers(0, 20)),
    ),
    min_size=1,
    max_size=25,
)


@settings(max_examples=300, deadline=None)
@given(ops, st.integers(0, 50))
def test_the_log_follows_adk_for_any_history(steps: list[tuple[str, int]], probe: int) -> None:
    model = Model()
    for op, k in steps:
        log = model.log()
        if op == "turn":
            model.turn()
        elif op == "rewind":
            current = log.current_invocations()
            if current:
                model.go_back(current[k % len(current)], redo_of=None)
        elif op == "redo_last":
            last = log.last_rewind()
            if last is not None:
                model.go_back(last.invocation_id or "", redo_of=last.id)
        else:
            rewinds = [t for t in model.tasks if t.kind in ("rewind", "redo")]
            if rewinds:
                target = rewinds[k % len(rewinds)]
                model.go_back(target.invocation_id or "", redo_of=target.id)
        log = model.log()
        turns = [inv for inv in model.adk_invocations() if inv.startswith("i")]
        assert log.current_invocations() == turns
        effective = log.effective(log.head)
        assert [m.invocation_id for m in effective] == [inv for inv in turns for _ in range(2)]
        current = {log.tasks[i].seq for i in log.current()}
        assert {t.seq for t in model.tasks if t.rewound_by is None} == current

    # "just before X", for any invocation of the session (a fork's starting point)
    log = model.log()
    invocations = [t.invocation_id for t in model.tasks if t.invocation_id]
    target = invocations[probe % len(invocations)] if invocations else None
    if target is not None:
        cut = next(i for i, e in enumerate(model.events) if e.invocation_id == target)
        expected = [inv for inv in model.adk_invocations(model.events[:cut]) if inv.startswith("i")]
        plan = log.plan(target, current_only=False)
        assert list(dict.fromkeys(m.invocation_id for m in plan.effective)) == expected

    # read lazily (the store's way): the stored histories it asks for are enough, and agree
    lazy = SessionLog([t._replace(refs_json=UNREAD) if t.refs_json else t for t in model.tasks], model.messages)
    stored = {t.seq: t.refs_json for t in model.tasks}
    lazy.give_refs({seq: stored[seq] or "" for seq in lazy.refs_needed(target)})
    assert lazy.current_invocations() == log.current_invocations()
    if target is not None:
        assert lazy.plan(target, current_only=False) == log.plan(target, current_only=False)


def test_redo_last_skips_redos_and_stops_at_a_turn() -> None:
    model = Model()
    for _ in range(4):
        model.turn()
    first = model.log().current_invocations()
    model.go_back(first[3], redo_of=None)  # R1
    model.go_back(first[1], redo_of=None)  # R2
    r1, r2 = (t for t in model.tasks if t.kind == "rewind")
    assert model.log().last_rewind() == r2
    model.go_back(r2.invocation_id or "", redo_of=r2.id)
    assert model.log().last_rewind() == r1._replace(rewound_by=None)
    model.go_back(r1.invocation_id or "", redo_of=r1.id)
    assert model.log().last_rewind() is None  # everything redone: the last thing on the path is a turn
    assert model.log().current_invocations() == first
    model.go_back(first[2], redo_of=None)
    model.turn()
    assert model.log().last_rewind() is None  # a turn came after the rewind


def test_a_plain_rewind_needs_a_current_invocation() -> None:
    model = Model()
    model.turn()
    model.turn()
    inv = model.log().current_invocations()[1]
    model.go_back(inv, redo_of=None)
    try:
        model.log().plan(inv, current_only=True)
    except NotInLog as exc:
        assert exc.reason == "rewound"
    else:
        raise AssertionError("a rewound invocation was accepted for a rewind")
    try:
        model.log().plan("nope", current_only=False)
    except NotInLog as exc:
        assert exc.reason == "unknown"
    else:
        raise AssertionError("an unknown invocation was accepted")


@settings(max_examples=200, deadline=None)
@given(ops)
def test_a_log_extended_row_by_row_answers_as_one_read_whole(steps: list[tuple[str, int]]) -> None:
    """The store's log cache appends the rows written since it last read (``SessionLog.extend``):
    after any sequence of turns, rewinds and redos that log plans every invocation as a log built
    from all the rows does (the marks aside: the log does not read them), and ``is_current`` is
    membership in the current conversation."""
    model = Model()
    grown = SessionLog([], [])
    seen_tasks = seen_messages = 0
    for op, k in steps:
        log = model.log()
        if op == "turn":
            model.turn()
        elif op == "rewind":
            current = log.current_invocations()
            if current:
                model.go_back(current[k % len(current)], redo_of=None)
        else:
            rewinds = [t for t in model.tasks if t.kind in ("rewind", "redo")]
            if rewinds:
                target = rewinds[k % len(rewinds)]
                model.go_back(target.invocation_id or "", redo_of=target.id)
        if not grown.extend(model.tasks[seen_tasks:], model.messages[seen_messages:]):
            grown = SessionLog(model.tasks, model.messages)  # the log asks to be read whole
        seen_tasks, seen_messages = len(model.tasks), len(model.messages)
        whole = model.log()
        assert grown.current_invocations() == whole.current_invocations()
        ours, theirs = grown.last_rewind(), whole.last_rewind()
        assert (ours and ours._replace(rewound_by=None)) == (theirs and theirs._replace(rewound_by=None))
        current = set(whole.current_invocations())
        for task in model.tasks:
            inv = task.invocation_id
            if inv:
                assert grown.is_current(inv) == (inv in current)
                assert grown.plan(inv, current_only=False) == whole.plan(inv, current_only=False)


def test_extend_refuses_a_row_that_would_move_an_older_rewind() -> None:
    """A rewind stored before any row of the invocation it names (a damaged or partly recovered
    log) has the previous task as its parent; a later row of that invocation would give it
    another one in a log read whole, so ``extend`` refuses it and changes nothing."""
    tasks = [
        LogTask(1, "t1", "turn", "i1", None, None, None),
        LogTask(4, "r4", "rewind", "r4", "i9", None, "[2,3]"),
    ]
    messages = [LogMessage(2, 1, "t1", "i1"), LogMessage(3, 1, "t1", "i1")]
    log = SessionLog(tasks, messages)
    later = [LogTask(5, "t5", "turn", "i9", None, None, None)]
    later_messages = [LogMessage(6, 5, "t5", "i9")]
    assert not log.extend(later, later_messages)
    assert len(log.tasks) == 2 and log.current_invocations() == ["i1"]
    plain = [LogTask(7, "t7", "turn", "i7", None, None, None)]
    assert log.extend(plain, [LogMessage(8, 7, "t7", "i7")])
    assert (
        log.current_invocations()
        == SessionLog(tasks + plain, [*messages, LogMessage(8, 7, "t7", "i7")]).current_invocations()
    )
