"""Shared fixtures for the embedded-server tests: real servers on loopback, httpx clients.

Helper classes live in ``srvkit.py``.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from srvkit import A2A, Api

from rewindtui.server import EmbeddedServer


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[EmbeddedServer]:
    """One server per test module (default demo model, no delay)."""
    with EmbeddedServer(tmp_path_factory.mktemp("server")) as srv:
        yield srv


@pytest.fixture(scope="module")
def slow_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[EmbeddedServer]:
    """A server whose demo model waits between deltas, so a turn stays running a while."""
    with EmbeddedServer(tmp_path_factory.mktemp("slow"), demo_delay=0.15) as srv:
        yield srv


@pytest.fixture
def http() -> Iterator[httpx.Client]:
    with httpx.Client(timeout=30) as client:
        yield client


@pytest.fixture
def make_a2a(http: httpx.Client):
    def make(srv: EmbeddedServer, dialect: str = "0.3", user: str | None = None) -> A2A:
        return A2A(http, srv.agent_url, dialect, user)

    return make


@pytest.fixture
def make_api(http: httpx.Client):
    def make(srv: EmbeddedServer, user: str | None = None) -> Api:
        return Api(http, srv.api_url, user)

    return make


@pytest.fixture
def data_dir(tmp_path: Path) -> Path:
    return tmp_path / "data"


@pytest.fixture(params=["0.3", "1.0"])
def dialect(request: pytest.FixtureRequest) -> str:
    return request.param
