"""``/state`` and ``/compact`` on a server that offers neither (a2a-sdk's own server, no rewind): the
app says "not offered by this server", and nothing is asked of the server."""

from __future__ import annotations

from kit.apps import app_at
from kit.pilot import SIZE, send, settle, wait_until
from rewindtui.chat.agent_state import NOT_OFFERED
from rewindtui.tui.screens.state import StateScreen


async def test_not_offered_by_a_server_without_it(sdk_server, tmp_path):
    app = app_at(sdk_server.url + "/", local_store=tmp_path / "sessions.db")
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        await send(app, pilot, "hello")
        await send(app, pilot, "/state")
        await wait_until(pilot, lambda: isinstance(app.screen, StateScreen) and app.screen.query("#state-now"))
        await wait_until(pilot, lambda: "Reading" not in str(app.screen.query_one("#state-now").render()))
        assert str(app.screen.query_one("#state-now").render()) == NOT_OFFERED


async def test_compact_not_offered_by_a_server_without_rewind(sdk_server, tmp_path):
    from kit.pilot import notifications, user_texts

    app = app_at(sdk_server.url + "/", local_store=tmp_path / "sessions.db")
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        await send(app, pilot, "one")
        await send(app, pilot, "two")
        await send(app, pilot, "/compact")
        await settle(app, pilot)
        assert "Compacting is not offered by this server: it needs a server that can rewind." in notifications(app)
        assert user_texts(app) == ["one", "two"]  # nothing was sent
