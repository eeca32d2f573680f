"""Fixtures: the real kagent-adk echo agent served on loopback, with and without rewind."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

from echo_agent import Served, build_app, serve


@pytest.fixture(scope="module")
def served() -> Iterator[Served]:
    running = serve(lambda url: build_app(url))
    yield running
    running.stop()


@pytest.fixture(scope="module")
def stock() -> Iterator[Served]:
    running = serve(lambda url: build_app(url, rewind=False))
    yield running
    running.stop()
