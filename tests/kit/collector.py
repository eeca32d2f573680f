"""The cyclic garbage collector in a pytest process, kept off what every module leaves alive.

A pytest worker holds, after collecting, every test module and what they import (Textual,
google-adk, a2a-sdk, SQLAlchemy, ...), and after each module the caches and modules its tests
loaded: about half a million objects. Each full pass of the collector walks all of them (0.2 s
here), and the tests allocate fast enough (Textual's styles and strips, ADK's pydantic events)
for a full pass every second or so of CPU: a quarter of a worker's CPU went to the collector
(measured with ``gc.callbacks`` over five Pilot and server modules, ``-n 0``: 12.0 of 48.4 s).

So, as ``rewindtui serve`` does for its own process once its app is loaded
(``server/process/serve.py``): the collector is paused while the tests are collected (0.9 s of a
worker's 4 s of CPU collecting went to its passes over what was being imported); what is alive
after collection, and after each module's last test and its module fixtures' teardown, is frozen
(``gc.freeze``) after a full collection (the module's garbage is freed first, so nothing that was
garbage is kept), and the young generation is collected every 20,000 allocations, not 700. Frozen
objects are still freed by reference counting; one that becomes part of an unreachable cycle later
stays, its finalizer not run (a module's fixtures are torn down before its freeze). Same five
modules: 41.4 s, 3.3 s of it the collector.

Tests of the app's own use of the collector (``tests/test_long_sessions.py``) unfreeze and
collect in their fixture, as they did before: a module boundary freezes again.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator

import pytest


def _freeze() -> None:
    gc.collect()
    gc.freeze()


def pytest_configure(config: pytest.Config) -> None:
    """Collecting imports every test module and what they import, none of it garbage: the
    collector is paused until it is done (as the app's launch pauses it over its imports), in each
    process that collects (not an xdist controller, which collects nothing)."""
    if getattr(config.option, "numprocesses", None) and not hasattr(config, "workerinput"):
        return
    gc.disable()


def pytest_collection_finish(session: pytest.Session) -> None:
    from rewindtui.server.process.serve import GC_THRESHOLDS  # imported by the tests already

    _freeze()
    gc.set_threshold(*GC_THRESHOLDS)
    gc.enable()


def _module(item: pytest.Item | None) -> str | None:
    return None if item is None else item.nodeid.split("::", 1)[0]


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_teardown(item: pytest.Item, nextitem: pytest.Item | None) -> Iterator[None]:
    yield  # the module's fixtures are torn down in here when the next test is another module's
    if _module(nextitem) != _module(item):
        _freeze()
