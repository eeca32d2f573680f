"""The effective history (what the model still sees after rewinds) against the golden vectors that
rewindtui's embedded server is tested with too (``golden/effective_history.json``), and its cost:
one pass over the session's events, however many rewinds it holds."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pytest
from google.adk.events import Event

from golden.vectors import CASES, event, events
from kagent_rewind.history import effective_events, rewound_by


@pytest.mark.parametrize("case", CASES, ids=[c["name"] for c in CASES])
def test_effective_events_match_the_golden_vectors(case: dict[str, Any]) -> None:
    assert [e.id for e in effective_events(events(case))] == case["effective"], case["why"]


class Counted(Sequence[Event]):
    """The events, counting every read of one (by index or by iteration)."""

    def __init__(self, events: list[Event]) -> None:
        self.events = events
        self.reads = 0

    def __len__(self) -> int:
        return len(self.events)

    def __getitem__(self, index):  # type: ignore[override]
        self.reads += 1
        return self.events[index]


def rewound_often(turns: int) -> list[Event]:
    """A session where every turn is rewound and asked again: turn, rewind, turn, rewind, ..."""
    session: list[Event] = []
    for k in range(turns):
        session += [event({"id": f"t{k}.u", "invocation_id": f"t{k}", "author": "user"})]
        session += [event({"id": f"t{k}.a", "invocation_id": f"t{k}", "author": "agent"})]
        session += [event({"id": f"r{k}", "invocation_id": f"r{k}", "author": "user", "rewind_before": f"t{k}"})]
    session += [event({"id": "last.u", "invocation_id": "last", "author": "user"})]
    return session


@pytest.mark.parametrize("turns", [10, 400])
def test_effective_events_read_each_event_a_bounded_number_of_times(turns: int) -> None:
    """Linear: each event is read at most three times (the walk back, and once for the index of
    first events), whatever the number of rewinds. The quadratic walk read ~n²/6 here (~240,000
    reads at 400 turns)."""
    counted = Counted(rewound_often(turns))
    assert [e.id for e in effective_events(counted)] == ["last.u"]
    assert counted.reads <= 3 * len(counted)


def test_rewound_by_reads_each_event_a_bounded_number_of_times() -> None:
    """A rewind whose target is gone drops only itself; the quadratic walk read the whole session
    back to its start for each one."""
    session: list[Event] = []
    for k in range(400):
        session += [event({"id": f"t{k}.u", "invocation_id": f"t{k}", "author": "user"})]
        session += [event({"id": f"r{k}", "invocation_id": f"r{k}", "author": "user", "rewind_before": f"gone{k}"})]
    counted = Counted(session)
    assert rewound_by(counted, "t1") == [f"t{k}" for k in range(1, 400)]
    assert counted.reads <= 6 * len(counted)
