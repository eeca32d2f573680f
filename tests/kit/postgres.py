"""A real PostgreSQL for the tests: the ``pgserver`` wheel (PostgreSQL's own binaries, installed by
the ``test`` extra), one server per pytest process (each xdist worker its own), a fresh database
per test.

::

    def test_x(pg_url: str) -> None:        # postgresql+asyncpg://postgres@/t_…?host=…
        ...

The server starts once per process (about a second: ``initdb`` in a temporary directory, then
``postgres`` on a unix socket there, no TCP port) and stops when the process ends. A test that
asks for a database and cannot get one **fails**: CI runs these tests, never skips them. Set
:data:`OPT_OUT_ENV` (``REWINDTUI_TEST_NO_POSTGRES=1``) to skip them instead, on a machine where
PostgreSQL cannot run (the skip reason names the variable).
"""

from __future__ import annotations

import atexit
import os
import re
import shutil
import tempfile
import threading
import uuid
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

#: set to 1 to skip (not fail) the PostgreSQL tests where PostgreSQL cannot run
OPT_OUT_ENV = "REWINDTUI_TEST_NO_POSTGRES"

_lock = threading.Lock()
_server: Any = None
_socket_dir: str | None = None


def _opted_out() -> bool:
    return os.environ.get(OPT_OUT_ENV, "") not in ("", "0")


def _start() -> tuple[Any, str]:
    """The process's PostgreSQL server (started on first use) and its socket directory."""
    global _server, _socket_dir
    with _lock:
        if _server is None:
            with warnings.catch_warnings():  # platformdirs: "XDG_RUNTIME_DIR is not set" in containers
                warnings.simplefilter("ignore")
                import pgserver  # the test extra installs it; missing -> ImportError -> the test fails

            # short path: a unix socket's path is limited to ~107 bytes
            root = Path(tempfile.mkdtemp(prefix="rtpg-"))
            # registered first, so it runs last: after pgserver's own exit handler stopped the server
            atexit.register(shutil.rmtree, root, True)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                _server = pgserver.get_server(root / "data", cleanup_mode="delete")
            uri = _server.get_uri()
            match = re.search(r"host=([^&]+)", uri)
            if match is None:
                raise RuntimeError(f"pgserver gave a URI without a socket directory: {uri}")
            _socket_dir = match.group(1)
        assert _socket_dir is not None
        return _server, _socket_dir


def stop() -> None:
    """Stop this process's server (if one started) and remove its files."""
    global _server, _socket_dir
    with _lock:
        server, _server, _socket_dir = _server, None, None
    if server is not None:
        server.cleanup()


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    # each pytest process (an xdist worker too: it may leave without running exit handlers) stops
    # its own server when its session ends
    stop()


def database_url(name: str, socket_dir: str) -> str:
    """The SQLAlchemy URL of database ``name`` on the server listening in ``socket_dir``."""
    return f"postgresql+asyncpg://postgres@/{name}?host={socket_dir}"


def new_database(prefix: str = "t") -> str:
    """A new, empty database on this process's server; returns its SQLAlchemy URL.

    Fails the calling test when PostgreSQL cannot be had (skips it with :data:`OPT_OUT_ENV` set)."""
    if _opted_out():
        pytest.skip(f"PostgreSQL tests skipped: {OPT_OUT_ENV} is set")
    try:
        server, socket_dir = _start()
    except Exception as exc:  # any failure to start is the test's failure, said plainly
        pytest.fail(
            f"no PostgreSQL for this test ({type(exc).__name__}: {exc}); install the test extra "
            f"(pip install -e '.[test]', which brings pgserver) or set {OPT_OUT_ENV}=1 to skip these tests"
        )
    name = f"{prefix}_{uuid.uuid4().hex[:16]}"
    server.psql(f'CREATE DATABASE "{name}";')
    return database_url(name, socket_dir)


@pytest.fixture
def pg_url() -> Iterator[str]:
    """A fresh PostgreSQL database for this test (its SQLAlchemy ``postgresql+asyncpg`` URL)."""
    yield new_database()


@pytest.fixture(scope="module")
def pg_module_url() -> Iterator[str]:
    """A fresh PostgreSQL database shared by the tests of one module."""
    yield new_database("m")
