"""The OAuth2 device-code sign-in inside the app (Pilot), against the Authlib test server and
the protected a2a-sdk agent (``oauth_stack``): with no cached token, connecting shows the address
and code in a modal and waits; the "user" approves the code at the server's verification
endpoint (as a browser would); the app connects with the token and a message is answered. Esc
cancels: the app stops polling and says it is not connected."""

from __future__ import annotations

import httpx
import pytest
from oauth_stack import DEVICE_ID, Stack

from kit.pilot import wait_until
from rewindtui.config.connection import AppConnector
from rewindtui.config.settings import load_settings
from rewindtui.tui.app import RewindApp
from rewindtui.tui.screens.connect_error import ConnectErrorScreen
from rewindtui.tui.screens.device_code import DeviceCodeScreen

pytestmark = [pytest.mark.timeout(90), pytest.mark.slow]  # an OAuth server, an agent and the app

DEVICE_GRANT = "urn:ietf:params:oauth:grant-type:device_code"


def _app(stack: Stack, tmp_path) -> RewindApp:
    config = tmp_path / "config.toml"
    config.write_text("", encoding="utf-8")
    settings = load_settings(
        {"url": stack.agent.url + "/", "oauth_client_id": DEVICE_ID}, {"REWINDTUI_CONFIG": str(config)}
    )
    app = RewindApp(AppConnector(settings), new_session=True)
    app.animation_level = "none"
    return app


async def test_the_app_signs_in_with_the_device_code_then_talks(stack: Stack, tmp_path) -> None:
    app = _app(stack, tmp_path)
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_until(pilot, lambda: isinstance(app.screen, DeviceCodeScreen), timeout=20)
        screen = app.screen
        assert isinstance(screen, DeviceCodeScreen)
        assert screen.uri == stack.issuer.url + "/activate" and screen.code

        def shown() -> str:  # the screen is current before its widgets are mounted: wait for them
            return " ".join(str(s.content) for s in screen.query("Static"))

        await wait_until(pilot, lambda: screen.uri in shown(), timeout=20)
        assert screen.code in shown() and "Esc cancels" in shown()
        assert app.chat is None  # waiting: not connected yet
        async with httpx.AsyncClient() as browser:  # the user signs in and enters the code
            await browser.post(screen.uri, data={"user_code": screen.code})
        await wait_until(
            pilot, lambda: app.chat is not None and not isinstance(app.screen, DeviceCodeScreen), timeout=20
        )
        assert stack.auth.grant_counts().get(DEVICE_GRANT, 0) >= 1
        await app.workers.wait_for_complete()
        composer = app.chat_screen.composer
        composer.focus()
        composer.text = "hello after signing in"
        await pilot.press("enter")
        await wait_until(
            pilot,
            lambda: any("You said: hello after signing in" in (i.text or "") for i in app.chat.conversation.items),
            timeout=20,
        )
        # every request past the card carried a token the server issued
        agent_calls = [auth for path, auth in stack.guard.seen if path == "/"]
        assert agent_calls and all(a and stack.auth.valid(a[7:]) for a in agent_calls)


async def test_escape_cancels_the_sign_in(stack: Stack, tmp_path) -> None:
    app = _app(stack, tmp_path)
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_until(pilot, lambda: isinstance(app.screen, DeviceCodeScreen), timeout=20)
        await pilot.press("escape")
        await wait_until(pilot, lambda: isinstance(app.screen, ConnectErrorScreen), timeout=20)
        await app.workers.wait_for_complete()
        polls = stack.auth.grant_counts().get(DEVICE_GRANT, 0)
        text = " ".join(str(s.content) for s in app.screen.query("Static"))
        assert "sign-in was canceled" in text
        assert app.chat is None
        assert not [w for w in app.workers if w.group == "connect" and not w.is_finished]  # no more polling
        assert stack.auth.grant_counts().get(DEVICE_GRANT, 0) == polls
        assert not stack.auth.tokens  # no token was issued
