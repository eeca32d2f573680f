"""The first turn on a server whose agent is still starting says so ("starting the agent…"),
then streams as usual: the server's front (rewindtui.server.http.front) answered the card and
the session while its agent runtime loads, and holds the turn until it runs."""

from __future__ import annotations

import threading
from pathlib import Path
from types import SimpleNamespace

import pytest

from asgi_thread import ServeInThread
from kit.apps import make_app
from kit.pilot import SIZE, wait_until
from rewindtui.server.http.app import create_app
from rewindtui.server.http.front import Front
from rewindtui.server.http.front_card import plain_agent_card
from rewindtui.server.http.options import ServerOptions
from rewindtui.server.shared.paths import AGENT_PATH, API_PATH
from rewindtui.tui.screens.confirm import ConfirmScreen
from rewindtui.tui.widgets.status_line import STARTING, StatusLine

pytestmark = pytest.mark.slow  # the full agent app is built (google-adk)


def _status(app) -> str:
    line = app.chat_screen.query_one(StatusLine)
    return line.render().plain


async def test_the_first_turn_says_the_agent_is_starting_then_streams(tmp_path: Path) -> None:
    data = tmp_path / "data"
    release = threading.Event()
    urls: dict[str, str] = {}

    def build():
        release.wait(60)  # the agent runtime is "still importing" until the test says
        return create_app(data, urls["base"])

    def card() -> dict:
        base = urls["base"]
        return plain_agent_card(agent_url=base + AGENT_PATH, api_url=base + API_PATH, name="demo", model="demo")

    def factory(url: str) -> Front:
        urls["base"] = url
        return Front(data, build=build, card=card, options=ServerOptions(), bind_host="127.0.0.1")

    served = ServeInThread(factory=factory).start()
    try:
        server = SimpleNamespace(agent_url=served.url + AGENT_PATH, api_url=served.url + API_PATH)
        app = make_app(server)
        async with app.run_test(size=SIZE) as pilot:
            await wait_until(pilot, lambda: app.chat is not None, timeout=30)
            assert app.chat.client.capabilities.starting
            assert STARTING not in _status(app)  # nothing waits yet
            app.chat_screen.composer.focus()
            app.chat_screen.composer.text = "hello"
            await pilot.press("enter")  # (not pilotkit.send: it waits for the turn to end)
            await wait_until(pilot, lambda: STARTING in _status(app), timeout=30)
            await pilot.press("ctrl+q")  # the turn waits for the agent: quitting asks first, as during a reply
            await pilot.pause()
            assert isinstance(app.screen, ConfirmScreen) and app.screen.purpose == "quit"
            await pilot.press("escape")
            await pilot.pause()
            assert not isinstance(app.screen, ConfirmScreen) and app.return_code is None
            release.set()  # the agent has loaded: the held turn runs
            await wait_until(
                pilot, lambda: any("You said: hello" in it.text for it in app.chat.conversation.items), timeout=60
            )
            await wait_until(pilot, lambda: app.chat.conversation.turn_state == "completed", timeout=60)
            assert STARTING not in _status(app)
            assert not app.chat_screen.status.starting  # a second turn never says it
    finally:
        release.set()
        served.stop()
