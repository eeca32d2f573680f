"""Embedded servers shared by the app's Pilot tests (real HTTP over loopback, real SQLite)."""

from __future__ import annotations

import pytest

from rewindtui.server import EmbeddedServer


@pytest.fixture(scope="session")
def server(tmp_path_factory):
    with EmbeddedServer(tmp_path_factory.mktemp("pilot-data")) as running:
        yield running


@pytest.fixture(scope="session")
def slow_server(tmp_path_factory):
    """The demo model waits between streamed deltas, so a reply stays in flight for a while."""
    with EmbeddedServer(tmp_path_factory.mktemp("pilot-slow"), demo_delay=0.15) as running:
        yield running


@pytest.fixture(autouse=True)
def _utc(monkeypatch):
    """Times are shown in local time: the same zone for every run, so screens are the same."""
    import time

    monkeypatch.setenv("TZ", "UTC")
    time.tzset()
    yield
    monkeypatch.undo()
    time.tzset()
