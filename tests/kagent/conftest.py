"""Fixtures: the embedded server as the agent, behind a kagent controller double."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from kagent_double import Agent, KagentController

from asgi_thread import ServeInThread
from rewindtui.server import EmbeddedServer


@pytest.fixture(scope="module")
def agent_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[EmbeddedServer]:
    with EmbeddedServer(tmp_path_factory.mktemp("kagent-agent")) as srv:
        yield srv


def start_controller(agent_server: EmbeddedServer, flavor: str) -> tuple[KagentController, ServeInThread]:
    agents = {
        "kagent/helper": Agent("kagent/helper", agent_server.agent_url, agent_server.api_url, rewind_addon=True),
        "kagent/stock-agent": Agent(
            "kagent/stock-agent", agent_server.agent_url, agent_server.api_url, rewind_addon=False
        ),
    }
    controller = KagentController(agents, flavor=flavor)
    return controller, ServeInThread(controller.app()).start()


@pytest.fixture(scope="module", params=["v0.10.x", "ae5a948"])
def controller(request: pytest.FixtureRequest, agent_server: EmbeddedServer) -> Iterator[tuple[KagentController, str]]:
    """The controller double in both flavors, and its base URL."""
    double, served = start_controller(agent_server, request.param)
    try:
        yield double, served.url
    finally:
        served.stop()
