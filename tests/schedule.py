"""The order xdist hands the suite's modules out, so that the run does not end with one worker alone
on a long module while the other has nothing left (docs/testing.md, "How the suite is scheduled").

pytest runs with ``--dist loadscope --no-loadscope-reorder`` (pyproject.toml): each module goes to
one worker whole (its module-scoped servers start once), in the order collected, and a worker gets
the next module when it is almost done with its last one. xdist's own reorder (on by default) hands
out the modules with the most tests first, which puts the modules of a few long tests (real server
processes, the real terminal, fault storms) at the end, where they make the tail. Here instead:

1. the modules with ``slow`` tests (``tests/lanes.py``: each measured at a second or more, or
   starting processes), the most such tests first;
2. then the modules that need the kagent-rewind add-on's venv (``tests/kagent_adk``): late, because
   ``tests/check.py`` builds that venv beside pytest from the start (pip, a minute or more on a
   clean clone) and a worker that reaches them earlier waits for the build;
3. then every other module (each short), in its usual order: they fill the tail.

Only the order changes; every test still runs, and within a module the tests keep their order (the
sort is stable).
"""

from __future__ import annotations

from collections import Counter

import pytest

#: the folder whose modules wait for the add-on's venv (built by tests/check.py beside pytest)
AFTER_THE_BUILD = "tests/kagent_adk/"


def module_of(item: pytest.Item) -> str:
    return item.nodeid.split("::", 1)[0]


def order(items: list[pytest.Item]) -> None:
    """Sort ``items`` in place (call after the ``slow`` marks are set)."""
    slow = Counter(module_of(item) for item in items if item.get_closest_marker("slow") is not None)

    def rank(item: pytest.Item) -> tuple[int, int]:
        module = module_of(item)
        if module.startswith(AFTER_THE_BUILD):
            return (1, 0)
        if slow[module]:
            return (0, -slow[module])
        return (2, 0)

    items.sort(key=rank)
