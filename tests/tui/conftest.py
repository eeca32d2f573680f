"""Embedded servers shared by the app's Pilot tests (real HTTP over loopback, real SQLite)."""

from __future__ import annotations

import pytest

from kit.servers import embedded_fixture

server = embedded_fixture("pilot-data", scope="session")


#: The demo model waits between streamed deltas, so a reply stays in flight for a while.
slow_server = embedded_fixture("pilot-slow", scope="session", demo_delay=0.15)


@pytest.fixture(autouse=True)
def _utc(monkeypatch):
    """Times are shown in local time: the same zone for every run, so screens are the same."""
    import time

    monkeypatch.setenv("TZ", "UTC")
    time.tzset()
    yield
    monkeypatch.undo()
    time.tzset()
