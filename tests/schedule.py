"""The order xdist hands the suite's modules out, so that the run does not end with one worker alone
on a long module while the other has nothing left (docs/testing.md, "How the suite is scheduled").

pytest runs with ``--dist loadscope --no-loadscope-reorder`` (pyproject.toml): each module goes to
one worker whole (its module-scoped servers start once), in the order collected, and a worker gets
the next module when it is almost done with its last one. xdist's own reorder (on by default) hands
out the modules with the most tests first, which puts the modules of a few long tests (real server
processes, the real terminal, fault storms) at the end, where they make the tail. Here instead:

1. the modules measured longest (``tests/durations.json``, ``tests/lanes.py``: the seconds of
   their tests in a whole run), longest first -- the classic longest-processing-time order, which
   keeps the last module handed out short;
2. the modules that need the kagent-rewind add-on's venv (``tests/kagent_adk``) wait until at least
   :data:`BUILD_HEAD` seconds of other modules have been handed out: ``tests/check.py`` builds that
   venv beside pytest from the start (uv, seconds where its cache is warm) and a worker that
   reaches them earlier waits for the build;
3. modules without a measurement (new ones) come last, in their usual order.

Only the order changes; every test still runs, and within a module the tests keep their order (the
sort is stable).

One unit of work is a module, except the folder :data:`ONE_UNIT`: its modules go to one worker
together (:func:`folder_scope`), because they share session-scoped kagent-adk agents
(``tests/kagent_adk/conftest.py``: about 5 s of CPU each to start), which every worker that ran
one of its modules started again.
"""

from __future__ import annotations

from typing import Any

import pytest

from lanes import base_id, measured

#: the folder whose modules wait for the add-on's venv (built by tests/check.py beside pytest)
AFTER_THE_BUILD = "tests/kagent_adk/"
#: seconds of measured modules handed out before the add-on's modules (its build's head start: the
#: build took 40-47 s on a clean clone when it compiled every module, in which five workers hand out
#: about 250 s of modules, and at 120 the first add-on test waited 20-25 s for it; it takes 5 s
#: now with uv's cache warm, and downloads kagent-adk's dependencies first where the cache is cold)
BUILD_HEAD = 250.0
#: folders whose modules are one unit of work for xdist (their session fixtures start once)
ONE_UNIT = (AFTER_THE_BUILD,)


def scope_of(nodeid: str) -> str:
    """The unit of work a test belongs to: its module, or its folder when that is in ONE_UNIT."""
    for folder in ONE_UNIT:
        if nodeid.startswith(folder):
            return folder
    return nodeid.split("::", 1)[0]


def folder_scope(config: pytest.Config, log: Any) -> Any:
    """xdist's ``loadscope`` scheduler with :func:`scope_of` as the unit (``tests/conftest.py``
    installs it). Only the controller schedules: the workers, which import this module for
    :func:`order`, do not import xdist's schedulers (pytest rewrites the asserts of a plugin's
    modules on import, every process again where bytecode is not written)."""
    from xdist.scheduler import LoadScopeScheduling

    class FolderScope(LoadScopeScheduling):
        def _split_scope(self, nodeid: str) -> str:
            return scope_of(nodeid)

    return FolderScope(config, log)


def module_of(item: pytest.Item) -> str:
    return item.nodeid.split("::", 1)[0]


def order(items: list[pytest.Item], seconds: dict[str, float] | None = None) -> None:
    """Sort ``items`` in place; ``seconds``: measured seconds per test node id (without parameters;
    by default ``tests/durations.json``)."""
    seconds = measured() if seconds is None else seconds
    modules: dict[str, float] = {}
    for item in items:
        module = module_of(item)
        modules[module] = modules.get(module, 0.0) + seconds.get(base_id(item.nodeid), 0.0)
    first = sorted((m for m in modules if not m.startswith(AFTER_THE_BUILD)), key=lambda m: -modules[m])
    build = sorted((m for m in modules if m.startswith(AFTER_THE_BUILD)), key=lambda m: -modules[m])
    # the add-on's modules go in once BUILD_HEAD seconds of others are out (or before the unmeasured)
    handed, at = 0.0, len(first)
    for i, module in enumerate(first):
        if handed >= BUILD_HEAD or modules[module] == 0.0:
            at = i
            break
        handed += modules[module]
    sequence = first[:at] + build + first[at:]
    rank = {module: i for i, module in enumerate(sequence)}
    items.sort(key=lambda item: rank[module_of(item)])
