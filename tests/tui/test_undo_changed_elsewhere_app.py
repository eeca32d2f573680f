"""ctrl+z in the app after another client made a different rewind: nothing is undone, the app says
the session changed, and it shows what the server holds now (core level:
``tests/test_undo_changed_elsewhere.py``). The real app on the embedded server over loopback, the
other client a ``Chat`` of its own."""

from __future__ import annotations

import pytest

from kit.apps import make_app
from kit.pilot import SIZE, notifications, server_users, settle, turns, user_texts, wait_until
from kit.servers import chat_for

pytestmark = pytest.mark.slow  # real turns on the embedded server: seconds


async def test_ctrl_z_after_another_clients_different_rewind_undoes_nothing_and_shows_the_server(server):
    app = make_app(server)
    async with app.run_test(size=SIZE) as pilot:
        await turns(app, pilot, "one", "two", "three")
        screen = app.chat_screen
        await pilot.press("alt+up", "enter")  # this app: "three" goes
        await settle(app, pilot)
        assert user_texts(app) == ["one", "two"] and app.chat.undo_label() == "undo the rewind of 1 turn"

        other = await chat_for(server, app.chat.session_id)
        await other.rewind(other.conversation.turn_invocations()[1])  # another client: "two" goes too
        await other.client.aclose()

        await pilot.press("ctrl+z")
        await settle(app, pilot)
        await wait_until(pilot, lambda: any("changed on the server since" in n for n in notifications(app)))
        assert await server_users(server, app) == ["one"], "the undo changed the session"
        assert user_texts(app) == ["one"]  # the view is the server's, re-read
        assert not screen.rewind_mode
