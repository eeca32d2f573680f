"""Fixtures: the kagent-rewind venv (built on first use) and kagent-adk agents on loopback."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from kagent_adk.kagent_proc import KagentAgent, ensure_addon_venv, kagent_agent


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """The first test here builds the add-on's venv (uv, under a minute cold): past the suite's default
    timeout, so these get the build's own bound on top of theirs."""
    from kagent_adk.kagent_proc import BUILD_TIMEOUT

    for item in items:
        if "addon_python" in getattr(item, "fixturenames", ()) and item.get_closest_marker("timeout") is None:
            item.add_marker(pytest.mark.timeout(BUILD_TIMEOUT + 300))


@pytest.fixture(scope="session")
def addon_python() -> Path:
    return ensure_addon_venv()


# one agent process of each kind for the whole run: kagent-adk takes seconds to import
@pytest.fixture(scope="session")
def with_addon(addon_python: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[KagentAgent]:
    with kagent_agent(addon_python, tmp_path_factory.mktemp("kagent") / "requests.jsonl") as agent:
        yield agent


@pytest.fixture(scope="session")
def without_addon(addon_python: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[KagentAgent]:
    with kagent_agent(addon_python, tmp_path_factory.mktemp("kagent") / "requests.jsonl", rewind=False) as agent:
        yield agent
