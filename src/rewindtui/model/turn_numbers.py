"""Turn numbers, one rule for every place that shows or takes one: the turn picker (ctrl+g),
``/rewind N``, ``/edit N``, ``/fork N`` and the exports.

**Turn N is the N-th turn of the conversation, counting from 1 at the session's start**; a
negative N counts back from the end (-1 is the last turn, -2 the one before). A turn is a run
of items under one rewind target (:attr:`~rewindtui.model.Item.rewind_target`: the invocation a
rewind to it goes back before); rewound turns (shown dimmed by F4) are not in the conversation
and have no number. A rewind takes turn N and every turn after it away, so the next turn sent
is numbered N again -- as the agent counts the turns it sees.

Pure: no I/O, no Textual.
"""

from __future__ import annotations

from collections.abc import Sequence

from rewindtui.model.items import Item

#: the rule in one sentence, for any face (error messages, the headless commands)
COUNTING = "turn N counts from 1 at the session's start; -1 is the last turn, -2 the one before"

#: the rule as the app says it (F1, docs/keys.md, the slash completion)
RULE = (
    "turn N counts from 1 at the session's start (the #N of the turn picker, ctrl+g); "
    "-1 is the last turn, -2 the one before"
)

#: the argument as the slash completion and F1 name it
ARGUMENT = "N"


class TurnNumberError(ValueError):
    """A turn number that is not a number, is 0, or names no turn; ``str()`` says which, in words."""


def turn_starts(items: Sequence[Item]) -> list[int]:
    """The index of the first item of each numbered turn, oldest first (turn N starts at
    ``turn_starts(items)[N - 1]``)."""
    starts: list[int] = []
    last: str | None = None
    for index, item in enumerate(items):
        target = item.rewind_target
        if target is not None and target != last:
            starts.append(index)
        last = target if target is not None else last
    return starts


def numbers_by_target(items: Sequence[Item]) -> dict[str, int]:
    """{rewind target: its turn number} for every numbered turn of ``items``."""
    numbers: dict[str, int] = {}
    for number, start in enumerate(turn_starts(items), 1):
        numbers.setdefault(items[start].rewind_target or "", number)
    return numbers


def item_numbers(items: Sequence[Item]) -> list[int | None]:
    """The turn number of each item: that of the turn it belongs to (an error or a status line
    belongs to the turn before it); None for a rewound item and for items before the first turn."""
    out: list[int | None] = []
    number = 0
    last: str | None = None
    for item in items:
        target = item.rewind_target
        if target is not None and target != last:
            number += 1
        last = target if target is not None else last
        out.append(None if item.rewound is not None or number == 0 else number)
    return out


def parse(text: str) -> int:
    """``"3"`` → 3, ``"-1"`` → -1, ``""`` → -1 (no number: the last turn). Anything else (``"0"``,
    ``"two"``, ``"+"``) is a :class:`TurnNumberError` saying the rule."""
    text = text.strip()
    if not text:
        return -1
    digits = text[1:] if text[:1] in "+-" else text
    if not digits.isascii() or not digits.isdigit() or len(digits) > 9:
        raise TurnNumberError(f"“{text}” is not a turn number ({COUNTING})")
    number = int(text)
    if number == 0:
        raise TurnNumberError(f"there is no turn 0 ({COUNTING})")
    return number


def position(number: int, count: int) -> int:
    """Where turn ``number`` is among ``count`` turns, 0-based. Out of range (or 0): a
    :class:`TurnNumberError` naming the turns there are."""
    if count <= 0:
        raise TurnNumberError("there are no turns yet")
    if number > 0 and number <= count:
        return number - 1
    if number < 0 and -number <= count:
        return count + number
    have = "only turn 1" if count == 1 else f"turns 1 to {count} (or -1 to -{count})"
    raise TurnNumberError(f"there is no turn {number}: this session has {have}")


def number_of(position_: int, count: int) -> int:
    """The number shown for the turn at 0-based ``position_`` (the inverse of :func:`position`
    for positive numbers)."""
    if not 0 <= position_ < count:
        raise IndexError(position_)
    return position_ + 1


def item_index(items: Sequence[Item], number: int) -> int:
    """The index of the first item of turn ``number`` in ``items`` (see :func:`position`)."""
    starts = turn_starts(items)
    return starts[position(number, len(starts))]
