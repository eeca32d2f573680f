"""Turn numbers, one rule (model/turn_numbers.py): turn N counts from 1 at the session's start,
-1 is the last turn; the picker, /rewind N and the exports agree on it."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from rewindtui.model import Conversation, Item, ItemKind, turn_numbers
from rewindtui.model.rewound import Mark
from rewindtui.output import turn_list
from rewindtui.output.export import json_document, markdown


def _items(spec: list[tuple[str | None, str, bool]]) -> list[Item]:
    """(invocation or None, role, rewound) per item."""
    out = []
    for n, (inv, role, rewound) in enumerate(spec):
        item = Item(ItemKind.MESSAGE, f"k{n}", role=role, invocation_id=inv, text=f"text {n}")
        if rewound:
            item.rewound = Mark(at=None, by="task-r", fork_before=None)
        out.append(item)
    return out


def test_parse_counts_from_the_start_and_back_from_the_end():
    assert turn_numbers.parse("3") == 3
    assert turn_numbers.parse(" -1 ") == -1
    assert turn_numbers.parse("+2") == 2
    assert turn_numbers.parse("") == -1  # no number: the last turn
    for bad in ("0", "-0", "two", "1.5", "-", "²", "1e3", "9999999999"):
        with pytest.raises(turn_numbers.TurnNumberError):
            turn_numbers.parse(bad)


def test_position_and_the_errors_name_the_turns_there_are():
    assert turn_numbers.position(1, 4) == 0
    assert turn_numbers.position(4, 4) == 3
    assert turn_numbers.position(-1, 4) == 3
    assert turn_numbers.position(-4, 4) == 0
    with pytest.raises(turn_numbers.TurnNumberError, match="turns 1 to 4"):
        turn_numbers.position(5, 4)
    with pytest.raises(turn_numbers.TurnNumberError, match="turns 1 to 4"):
        turn_numbers.position(-5, 4)
    with pytest.raises(turn_numbers.TurnNumberError, match="no turns yet"):
        turn_numbers.position(1, 0)


def test_turns_are_runs_of_one_rewind_target_and_rewound_ones_have_no_number():
    items = _items(
        [
            (None, "agent", False),  # before any turn (a greeting): no number
            ("e-1", "user", False),
            ("e-1", "agent", False),
            (None, "agent", False),  # an error line: part of turn 1
            ("e-2", "user", False),
            ("e-x", "user", True),  # a rewound turn shown in place (F4)
            ("e-x", "agent", True),
            ("e-3", "user", False),
        ]
    )
    assert turn_numbers.turn_starts(items) == [1, 4, 7]
    assert turn_numbers.item_numbers(items) == [None, 1, 1, 1, 2, None, None, 3]
    assert turn_numbers.numbers_by_target(items) == {"e-1": 1, "e-2": 2, "e-3": 3}
    assert turn_numbers.item_index(items, 2) == 4
    assert turn_numbers.item_index(items, -1) == 7


_spec = st.lists(
    st.tuples(st.sampled_from([None, "e-a", "e-b", "e-c", "e-d"]), st.sampled_from(["user", "agent"]), st.booleans()),
    max_size=30,
)


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_spec, st.integers(min_value=-40, max_value=40))
def test_positive_and_negative_numbers_name_the_same_turn(spec, number):
    items = _items(spec)
    count = len(turn_numbers.turn_starts(items))
    if number == 0 or not -count <= number <= count:
        with pytest.raises(turn_numbers.TurnNumberError):
            turn_numbers.position(number, count)
        return
    here = turn_numbers.position(number, count)
    other = here + 1 if number < 0 else here - count  # the same turn, numbered the other way
    assert turn_numbers.position(other, count) == here
    assert turn_numbers.number_of(here, count) == here + 1
    index = turn_numbers.item_index(items, number)
    assert turn_numbers.item_numbers(items)[index] == here + 1  # what is shown beside it


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_spec)
def test_every_numbered_item_belongs_to_the_turn_that_starts_before_it(spec):
    items = _items(spec)
    starts = turn_numbers.turn_starts(items)
    numbers = turn_numbers.item_numbers(items)
    for index, number in enumerate(numbers):
        if number is None:
            assert items[index].rewound is not None or not starts or index < starts[0]
        else:
            assert starts[number - 1] <= index and (number == len(starts) or index < starts[number])
    assert sorted({n for n in numbers if n is not None}) == list(range(1, len(starts) + 1))


def _conversation(spec: list[tuple[str | None, str, bool]]) -> Conversation:
    conv = Conversation()
    conv.items = _items(spec)
    return conv


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_spec)
def test_the_picker_numbers_turns_by_the_rule(spec):
    conv = _conversation(spec)
    starts = turn_numbers.turn_starts(conv.items)
    numbered = {e.item.rewind_target: e.number for e in turn_list.turn_entries(conv) if e.rewound is None}
    expected = {conv.items[s].rewind_target: n for n, s in reversed(list(enumerate(starts, 1)))}
    assert numbered == {t: expected[t] for t in numbered}
    assert set(numbered) == set(expected)


def test_exports_carry_the_same_turn_numbers():
    items = _items([("e-1", "user", False), ("e-1", "agent", False), ("e-2", "user", False), ("e-2", "agent", False)])
    md = markdown(items, session_id="s1")
    assert "Turn 1" in md and "Turn 2" in md and md.index("Turn 1") < md.index("text 1") < md.index("Turn 2")
    import json

    doc = json.loads(json_document(items, session_id="s1"))
    assert [m["turn"] for m in doc["messages"]] == [1, 1, 2, 2]


def test_while_older_turns_load_the_picker_numbers_none():
    conv = _conversation([("e-1", "user", False), ("e-2", "user", False)])
    conv.older_token = "page-2"  # only the newest page is in: numbers from the start are unknown
    assert [e.number for e in turn_list.turn_entries(conv)] == [0, 0]
    conv.older_token = None
    assert [e.number for e in turn_list.turn_entries(conv)] == [2, 1]
