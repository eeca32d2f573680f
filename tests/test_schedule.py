"""The lanes and the order of the suite (tests/lanes.py, tests/schedule.py), from measured times."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, cast

import pytest

import lanes
from schedule import BUILD_HEAD, order


@dataclass
class Item:
    """What ``order`` and ``mark_slow`` touch of a collected test: its node id and its marks."""

    nodeid: str
    marks: list[str] = field(default_factory=list)

    def add_marker(self, mark: Any) -> None:
        self.marks.append(mark.name)

    def get_closest_marker(self, name: str) -> object | None:
        return object() if name in self.marks else None


def ordered(items: list[Item], seconds: dict[str, float]) -> list[str]:
    order(cast(list[Any], items), seconds)
    return [item.nodeid for item in items]


def test_modules_go_out_longest_first_each_whole_and_in_its_own_order() -> None:
    items = [
        Item("tests/test_a.py::one"),
        Item("tests/test_a.py::two[x]"),
        Item("tests/test_b.py::one"),
        Item("tests/test_new.py::one"),
        Item("tests/test_c.py::one"),
        Item("tests/test_c.py::two"),
    ]
    seconds = {"tests/test_a.py::one": 1.0, "tests/test_a.py::two": 2.5, "tests/test_b.py::one": 9.0}
    seconds |= {"tests/test_c.py::one": 0.5, "tests/test_c.py::two": 0.2}
    assert ordered(items, seconds) == [
        "tests/test_b.py::one",  # 9 s
        "tests/test_a.py::one",  # 3.5 s (a parameter counts for its test)
        "tests/test_a.py::two[x]",
        "tests/test_c.py::one",  # 0.7 s
        "tests/test_c.py::two",
        "tests/test_new.py::one",  # not measured: last
    ]


def test_the_add_on_modules_wait_for_the_builds_head_start_and_not_for_the_unmeasured() -> None:
    items = [
        Item("tests/kagent_adk/test_k.py::one"),
        Item("tests/test_big.py::one"),
        Item("tests/test_mid.py::one"),
        Item("tests/test_small.py::one"),
        Item("tests/test_new.py::one"),
    ]
    seconds = {
        "tests/kagent_adk/test_k.py::one": 500.0,
        "tests/test_big.py::one": BUILD_HEAD * 0.75,
        "tests/test_mid.py::one": BUILD_HEAD * 0.5,
        "tests/test_small.py::one": 1.0,
    }
    assert ordered(items, seconds) == [
        "tests/test_big.py::one",
        "tests/test_mid.py::one",  # BUILD_HEAD handed out by now
        "tests/kagent_adk/test_k.py::one",
        "tests/test_small.py::one",
        "tests/test_new.py::one",
    ]
    # nothing measured long enough: the add-on's modules still come before the unmeasured ones
    assert ordered([Item("tests/test_new.py::one"), Item("tests/kagent_adk/test_k.py::one")], {}) == [
        "tests/kagent_adk/test_k.py::one",
        "tests/test_new.py::one",
    ]


def test_a_test_measured_at_the_threshold_or_in_a_slow_folder_is_slow(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(
        lanes,
        "measured",
        lambda: {"tests/test_a.py::long": lanes.THRESHOLD, "tests/test_a.py::short": lanes.THRESHOLD - 0.01},
    )
    items = [
        Item("tests/test_a.py::long[1]"),
        Item("tests/test_a.py::short"),
        Item("tests/test_a.py::unmeasured"),
        Item("tests/kagent_adk/test_k.py::one"),
    ]
    lanes.mark_slow(cast(list[Any], items))
    assert [bool(item.marks) for item in items] == [True, False, False, True]


def test_durations_are_summed_per_test_over_phases_and_parameters() -> None:
    log = "\n".join(
        [
            "============ slowest durations ============",
            "3.50s call     tests/test_a.py::one[x]",
            "0.25s setup    tests/test_a.py::one[x]",
            "1.25s call     tests/test_a.py::one[y]",
            "0.10s teardown tests/test_b.py::two",
            "(12 durations < 0.05s hidden.)",
        ]
    )
    assert lanes.parse(log) == {"tests/test_a.py::one": 5.0, "tests/test_b.py::two": 0.1}


def test_the_measurements_file_is_there_and_names_tests_that_exist() -> None:
    seconds = lanes.measured()
    assert len(seconds) > 500  # a whole run's worth (tests/durations.json)
    root = lanes.DURATIONS.parent.parent
    missing = sorted({nodeid.split("::", 1)[0] for nodeid in seconds if not (root / nodeid.split("::")[0]).exists()})
    assert not missing, f"tests/durations.json names modules that are gone: {missing} (python tests/lanes.py LOG)"


def test_the_kagent_adk_folder_is_one_unit_of_work_and_other_modules_are_their_own() -> None:
    from schedule import AFTER_THE_BUILD, scope_of

    folder = [scope_of(f"{AFTER_THE_BUILD}test_{name}.py::t[x]") for name in ("app", "headless")]
    assert folder == [AFTER_THE_BUILD, AFTER_THE_BUILD]
    assert scope_of("tests/tui/test_app_pilot.py::test_one[a]") == "tests/tui/test_app_pilot.py"
    assert scope_of("tests/test_kagent_adk_like.py::t") == "tests/test_kagent_adk_like.py"
