"""Fixtures: the Authlib OAuth server and the protected a2a-sdk agent on loopback."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

from oauth_stack import Stack, start_stack


@pytest.fixture
def stack() -> Iterator[Stack]:
    made, running = start_stack()
    yield made
    for served in running:
        served.stop()


@pytest.fixture
def short_stack() -> Iterator[Stack]:
    """Access tokens that expire at once (each use renews them)."""
    made, running = start_stack(expires_in=1)
    yield made
    for served in running:
        served.stop()
