"""An agent whose card is public but whose sessions need a token (``REWINDTUI_SERVER_TOKEN``, or a
team server's users) refuses a wrong token after the card was read: the connect screen says the
agent refused the credentials and how to give them, not "can't reach the agent ... check that an
agent is serving". Against the real embedded server started with a token."""

from __future__ import annotations

import pytest

from kit.apps import new_app, settings_app
from kit.pilot import SIZE, settle
from kit.servers import settings_in
from rewindtui.config.connection import REFUSED, AppConnector
from rewindtui.server import EmbeddedServer
from rewindtui.server.http.options import ServerOptions
from rewindtui.tui.screens.connect_error import SESSION, ConnectErrorScreen


@pytest.mark.slow
async def test_a_wrong_token_is_a_refusal_with_advice_about_credentials(tmp_path):
    token_file = tmp_path / "token"
    token_file.write_text("not-the-token\n")
    with EmbeddedServer(tmp_path / "server", options=ServerOptions(token="the-token")) as server:
        settings = settings_in(tmp_path, url=server.agent_url, bearer_file=str(token_file))
        app = settings_app(settings, new_session=False)
        async with app.run_test(size=SIZE) as pilot:
            await settle(app, pilot)
            screen = app.screen
            assert isinstance(screen, ConnectErrorScreen) and screen.part == REFUSED
            assert "The agent refused the connection" in str(screen.query_one("#connect-title").render())
            assert "401" in screen.error
            hint = str(screen.query_one("#connect-hint").render())
            assert "refused the credentials" in hint and "--bearer-env" in hint
            assert "Check that an A2A agent is serving" not in hint


@pytest.mark.slow
async def test_a_session_the_agent_does_not_have_is_named_not_called_unreachable(tmp_path):
    """``rewindtui --session ID`` with an id the agent does not have for this user (a typo; on a team
    server another user's session that is not shared): the agent answered, so the screen names the
    session, not the address."""
    with EmbeddedServer(tmp_path / "server") as server:
        settings = settings_in(tmp_path, url=server.agent_url)
        app = new_app(AppConnector(settings), session_id="no-such-session")
        async with app.run_test(size=SIZE) as pilot:
            await settle(app, pilot)
            screen = app.screen
            assert isinstance(screen, ConnectErrorScreen) and screen.part == SESSION
            assert "no such session" in str(screen.query_one("#connect-title").render())
            assert "no-such-session" in screen.error
            hint = str(screen.query_one("#connect-hint").render())
            assert "--session" in hint and "Check that an A2A agent is serving" not in hint
