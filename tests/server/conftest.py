"""Shared fixtures for the embedded-server tests: real servers on loopback, httpx clients.

Helper classes live in ``srvkit.py``.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import httpx
import pytest
from srvkit import A2A, Api

from rewindtui.base.tls import default_context
from rewindtui.server import EmbeddedServer
from rewindtui.server.http.options import ServerOptions


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    """A module that sets ``ENGINES = ("sqlite", "postgresql")`` runs its tests on a server of each
    engine (``postgresql``: a team server on a fresh database, tests/kit/postgres.py)."""
    engines = getattr(metafunc.module, "ENGINES", None)
    if engines and "engine" in metafunc.fixturenames:
        metafunc.parametrize("engine", engines, indirect=True, scope="module")


@pytest.fixture(scope="module")
def engine(request: pytest.FixtureRequest) -> str:
    """The server's database engine: ``sqlite`` unless the module asks for more (``ENGINES``)."""
    return getattr(request, "param", "sqlite")


def server_options(engine: str) -> ServerOptions:
    """The options of a test server on ``engine`` (environment as usual, plus the database)."""
    options = ServerOptions.from_env()
    if engine == "postgresql":
        from kit.postgres import new_database

        options = replace(options, database_url=new_database("m"))
    return options


@pytest.fixture
def engine_options(engine: str) -> ServerOptions:
    """Options for the servers one test starts itself (the same database across its restarts)."""
    return server_options(engine)


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory, engine: str) -> Iterator[EmbeddedServer]:
    """One server per test module (default demo model, no delay)."""
    with EmbeddedServer(tmp_path_factory.mktemp("server"), options=server_options(engine)) as srv:
        yield srv


@pytest.fixture(scope="module")
def slow_server(tmp_path_factory: pytest.TempPathFactory, engine: str) -> Iterator[EmbeddedServer]:
    """A server whose demo model waits between deltas, so a turn stays running a while."""
    with EmbeddedServer(tmp_path_factory.mktemp("slow"), demo_delay=0.15, options=server_options(engine)) as srv:
        yield srv


@pytest.fixture(scope="module")
def long(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory, engine: str
) -> Iterator[tuple[EmbeddedServer, list[str]]]:
    """A server holding one long session written in bulk (``bench/seed_turns.py``): the module's
    ``SID`` of ``TURNS`` turns; the server and the session's invocation ids, oldest first."""
    from seed_turns import seed_session  # bench/, on the path of the modules that use this

    sid, turns = request.module.SID, request.module.TURNS
    with EmbeddedServer(tmp_path_factory.mktemp("long"), options=server_options(engine)) as srv:
        yield srv, srv.call(seed_session(srv.app.state.parts, sid, turns), timeout=600)


@pytest.fixture
def http() -> Iterator[httpx.Client]:
    # the process's one default TLS context, as the product's clients use it (base/tls.py): httpx's
    # own would load certifi's bundle again for each test (about 22 ms of CPU), for loopback HTTP
    with httpx.Client(timeout=30, verify=default_context()) as client:
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
