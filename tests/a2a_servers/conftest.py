"""Fixtures: a2a-sdk test servers (1.x, and 0.3 only) on loopback."""

from __future__ import annotations

from collections.abc import Callable, Iterator

import pytest

from a2a_servers import sdk_app
from asgi_thread import ServeInThread


@pytest.fixture
def serve() -> Iterator[Callable[..., ServeInThread]]:
    """``serve(only_03=...)``: start a fresh server (its tasks live in memory); stopped after."""
    running: list[ServeInThread] = []

    def start(**kw) -> ServeInThread:
        served = ServeInThread(factory=lambda url: sdk_app(url + "/", **kw)).start()
        running.append(served)
        return served

    yield start
    for served in running:
        served.stop()


@pytest.fixture(params=["1.0", "0.3"])
def sdk_server(request: pytest.FixtureRequest, serve) -> ServeInThread:
    """One a2a-sdk server per test: A2A 1.0 (with ListTasks), or 0.3 only."""
    return serve(only_03=request.param == "0.3")
