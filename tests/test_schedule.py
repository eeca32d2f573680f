"""The order the suite's modules go to the xdist workers (tests/schedule.py)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, cast

from schedule import order


@dataclass
class Item:
    """What ``order`` reads of a collected test: its node id and whether it is marked slow."""

    nodeid: str
    slow: bool = False

    def get_closest_marker(self, name: str) -> object | None:
        return object() if name == "slow" and self.slow else None


def ordered(items: list[Item]) -> list[str]:
    order(cast(list[Any], items))
    return [item.nodeid for item in items]


def test_slow_modules_first_most_slow_tests_first_then_the_add_on_then_the_rest_in_their_order() -> None:
    items = [  # as collected: each module's tests together
        Item("tests/test_a.py::one"),
        Item("tests/test_a.py::two"),
        Item("tests/test_b.py::one", slow=True),
        Item("tests/test_b.py::two"),
        Item("tests/kagent_adk/test_k.py::one", slow=True),
        Item("tests/test_c.py::one"),
        Item("tests/test_d.py::one", slow=True),
        Item("tests/test_d.py::two", slow=True),
    ]
    assert ordered(items) == [
        "tests/test_d.py::one",
        "tests/test_d.py::two",
        "tests/test_b.py::one",
        "tests/test_b.py::two",
        "tests/kagent_adk/test_k.py::one",
        "tests/test_a.py::one",
        "tests/test_a.py::two",
        "tests/test_c.py::one",
    ]
