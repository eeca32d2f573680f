"""Fixtures: the embedded server as the agent, behind a kagent 1.0 controller double."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from controller_double import Agent1, Kagent1Double

from asgi_thread import ServeInThread
from rewindtui.server import EmbeddedServer


@pytest.fixture(scope="module")
def agent_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[EmbeddedServer]:
    with EmbeddedServer(tmp_path_factory.mktemp("kagent1-agent")) as srv:
        yield srv


@pytest.fixture(scope="module")
def kagent1(agent_server: EmbeddedServer) -> Iterator[tuple[Kagent1Double, str]]:
    double = Kagent1Double({"kagent/helper": Agent1("kagent/helper", agent_server.agent_url, agent_server.api_url)})
    with ServeInThread(double.app()) as served:
        yield double, served.url
