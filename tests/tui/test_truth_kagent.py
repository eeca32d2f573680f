"""The app against a kagent controller (the double in tests/kagent, following kagent's Go code),
connected exactly as ``rewindtui --kagent URL --agent NS/NAME`` connects: it opens the agent's
latest session with its whole history, sends through the controller's A2A proxy, and never offers
rewind for an agent that does not advertise it."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from kit.pilot import settle
from kit.servers import settings_in

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "kagent"))

from kagent_double import Agent, KagentController

from asgi_thread import ServeInThread
from rewindtui.chat import Chat
from rewindtui.config.connection import app_connector, connect
from rewindtui.config.settings import Settings
from rewindtui.model import ItemKind
from rewindtui.server import EmbeddedServer
from rewindtui.tui.app import RewindApp

SIZE = (110, 36)


@pytest.fixture(scope="module")
def controller(tmp_path_factory):
    with EmbeddedServer(tmp_path_factory.mktemp("kagent-pilot")) as agent_server:
        agents = {
            "kagent/helper": Agent("kagent/helper", agent_server.agent_url, agent_server.api_url),
            "kagent/stock": Agent("kagent/stock", agent_server.agent_url, agent_server.api_url, rewind_addon=False),
        }
        double = KagentController(agents)
        with ServeInThread(double.app()) as served:
            yield double, served.url


async def seed(settings: Settings, *texts: str) -> str:
    conn = await connect(settings)
    try:
        chat = Chat(conn.client)
        await chat.open(None)
        for text in texts:
            await chat.send(text)
        assert chat.session_id
        return chat.session_id
    finally:
        await conn.aclose()


async def test_app_opens_the_agents_latest_session_and_sends(controller, tmp_path):
    double, base = controller
    settings = settings_in(tmp_path, kagent=base, agent="kagent/helper", user_id="dana")
    older = await seed(settings, "an older one")
    latest = await seed(settings, "what is the weather in Lima")
    connector, hint = app_connector(settings)
    app = RewindApp(connector, hint=hint)
    app.animation_level = "none"
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        chat = app.chat
        assert chat is not None and chat.session_id == latest != older
        shown = [i for i in chat.conversation.items if i.kind is ItemKind.MESSAGE]
        assert shown[0].text == "what is the weather in Lima"
        calls = [t for i in shown for t in i.tools]
        assert [(t.name, t.has_result) for t in calls] == [("get_weather", True)]  # call and result, paired
        assert chat.permissions().can_rewind
        app.chat_screen.composer.text = "thanks"
        app.chat_screen.composer.focus()
        await pilot.press("enter")
        await settle(app, pilot)
        users = [i.text for i in chat.conversation.items if i.role == "user"]
        assert users == ["what is the weather in Lima", "thanks"]
        assert chat.conversation.turn_state == "completed"
    assert double.sessions[latest]["agent_id"] == "kagent__NS__helper"


async def test_app_never_offers_rewind_for_a_stock_agent(controller, tmp_path):
    double, base = controller
    settings = settings_in(tmp_path, kagent=base, agent="kagent/stock", user_id="dana")
    await seed(settings, "one", "two")
    connector, hint = app_connector(settings)
    app = RewindApp(connector, hint=hint)
    app.animation_level = "none"
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        chat = app.chat
        assert chat is not None
        perms = chat.permissions()
        assert not perms.can_rewind and "kagent agent (kagent/stock) does not support rewind" in perms.rewind_reason
        double.requests.clear()
        target = next(i for i in chat.conversation.items if i.rewind_target)
        app.chat_screen.handle_action("rewind", target)
        await settle(app, pilot)
        assert [i.text for i in chat.conversation.items if i.role == "user"] == ["one", "two"]
        assert not [p for m, p in double.requests if m == "POST"]  # no rewind was ever sent
