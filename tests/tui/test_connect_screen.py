"""The connect screen says which part did not answer -- the kagent controller, the agent on it, or
the agent URL -- and the address can be corrected in place: the app's connector is rebuilt from
the corrected settings and connects, no restart. Against the kagent controller double
(tests/kagent, built to kagent's Go handlers) and the real embedded server."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from kit.apps import settings_app as app_for
from kit.servers import settings_in as load

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "kagent"))

from kagent_double import Agent, KagentController

from asgi_thread import ServeInThread
from fakeserver import closed_port
from kit.pilot import SIZE, settle
from rewindtui.config.connection import AGENT, CONTROLLER, URL, AppConnector, Target
from rewindtui.server import EmbeddedServer
from rewindtui.tui.screens.connect_error import ConnectErrorScreen


@pytest.fixture(scope="module")
def controller(tmp_path_factory):
    with EmbeddedServer(tmp_path_factory.mktemp("connect-screen")) as agent_server:
        agents = {"kagent/helper": Agent("kagent/helper", agent_server.agent_url, agent_server.api_url)}
        with ServeInThread(KagentController(agents).app()) as served:
            yield served.url, agent_server


async def correct(pilot, field: str, value: str) -> None:
    """Replace a field's text as a user would (select all, type), then Enter."""
    screen = pilot.app.screen
    field_input = screen.query_one(field)
    field_input.focus()
    field_input.value = ""
    await pilot.press(*value)
    await pilot.press("enter")


async def test_a_wrong_agent_is_named_and_corrected_in_place(controller, tmp_path):
    base, _ = controller
    app = app_for(load(tmp_path, kagent=base, agent="kagent/helpr"))
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        screen = app.screen
        assert isinstance(screen, ConnectErrorScreen) and screen.part == AGENT
        assert "The agent is not on the kagent controller" in str(screen.query_one("#connect-title").render())
        assert "agent kagent/helpr is not on the kagent controller" in screen.error
        assert screen.focused is screen.query_one("#connect-agent")  # the field at fault has the cursor
        await correct(pilot, "#connect-agent", "kagent/helper")
        await settle(app, pilot)
        assert app.chat is not None and app.chat.client.capabilities is not None
        assert app.chat.client.config.agent_ref == "kagent/helper"
        assert isinstance(app.connector, AppConnector) and app.connector.target == Target(
            kagent=base, agent="kagent/helper"
        )
        app.chat_screen.composer.text = "hello again"
        await pilot.press("enter")
        await settle(app, pilot)
        assert app.chat.conversation.turn_state == "completed"


async def test_a_controller_that_does_not_answer_is_named_and_corrected(controller, tmp_path):
    base, _ = controller
    wrong = f"http://127.0.0.1:{closed_port()}"
    app = app_for(load(tmp_path, kagent=wrong, agent="kagent/helper"))
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        screen = app.screen
        assert isinstance(screen, ConnectErrorScreen) and screen.part == CONTROLLER
        assert "The kagent controller did not answer" in str(screen.query_one("#connect-title").render())
        assert f"cannot reach the kagent controller at {wrong}" in screen.error
        await correct(pilot, "#connect-kagent", base)
        await settle(app, pilot)
        # connected through the corrected controller (to whichever A2A proxy path it serves)
        assert app.chat is not None and app.chat.client.config.url.startswith(f"{base}/api/a2a")


async def test_a_wrong_url_is_named_a_bad_value_is_refused_in_place_and_the_right_one_connects(controller, tmp_path):
    _, agent_server = controller
    wrong = f"http://127.0.0.1:{closed_port()}/"
    app = app_for(load(tmp_path, url=wrong))
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        screen = app.screen
        assert isinstance(screen, ConnectErrorScreen) and screen.part == URL
        assert "No A2A agent answered at this URL" in str(screen.query_one("#connect-title").render())
        await correct(pilot, "#connect-url", "not a url")
        await pilot.pause()
        assert app.screen is screen  # refused in place, nothing attempted
        assert "not an http(s) URL" in str(screen.query_one("#connect-invalid").render())
        await correct(pilot, "#connect-url", agent_server.agent_url)
        await settle(app, pilot)
        assert app.chat is not None and app.chat.client.config.url == agent_server.agent_url
        assert app.chat_screen.status.agent == "demo"


def test_retargeting_keeps_the_rest_of_the_settings_and_refuses_bad_values(tmp_path):
    from rewindtui.config.settings import SettingsError

    settings = load(tmp_path, url="http://old:1/a/", api="http://old:1/api", user_id="dana", header=["X-Team: blue"])
    connector = AppConnector(settings)
    moved = connector.retarget(Target(url="http://new:2/agent/"))
    assert (moved.settings.url, moved.settings.api, moved.settings.user_id) == ("http://new:2/agent/", None, "dana")
    assert moved.settings.headers == {"X-Team": "blue"} and moved.settings.data_dir == settings.data_dir
    on_kagent = connector.retarget(Target(kagent="http://ctl:8083/", agent="ns/helper"))
    assert (
        on_kagent.settings.url == "http://ctl:8083/api/a2a/ns/helper/"
        and on_kagent.settings.api == "http://ctl:8083/api"
    )
    assert on_kagent.target == Target(kagent="http://ctl:8083", agent="ns/helper")
    assert connector.retarget(connector.target) is connector
    for bad in (Target(url="ftp://x"), Target(kagent="http://ctl", agent="helper"), Target(kagent="", agent="ns/a")):
        with pytest.raises(SettingsError):
            connector.retarget(bad)
