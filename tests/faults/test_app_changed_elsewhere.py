"""Issue item 4 in the app (Pilot, today's public app API): the app is open on one/two/three;
another client (the CLI's Chat) rewinds before "two"; the app's send of "four" re-reads the
session and says so instead of showing one, two, three, four over a server holding one, four."""

from __future__ import annotations

import pytest

from kit.apps import make_app
from kit.pilot import send, settle, user_texts
from rewindtui.chat import Chat
from rewindtui.chat.freshness import CHANGED
from rewindtui.client.a2a_client import A2AClient, ServerConfig

pytestmark = pytest.mark.timeout(90)


def _said(app) -> str:
    notes = " ".join(str(n.message) for n in app._notifications)
    status = app.chat.permissions().history_note if app.chat else ""
    return f"{notes} {status} {app.chat_screen.composer.text}"


async def test_the_app_sees_another_clients_rewind(server):
    async with A2AClient(ServerConfig(url=server.agent_url, api=server.api_url)) as cli_client:
        cli = Chat(cli_client)
        await cli.open(None)
        for text in ("one", "two", "three"):
            await cli.send(text)
        sid = cli.session_id
        turns = cli.conversation.turn_invocations()
        app = make_app(server, sid)
        async with app.run_test(size=(120, 40)) as pilot:
            await settle(app, pilot)
            assert user_texts(app) == ["one", "two", "three"]
            await cli.rewind(turns[1])  # the CLI, elsewhere: before "two"
            await send(app, pilot, "four")
            assert user_texts(app) == ["one"]  # reloaded: the server's view, "four" not sent
            said = CHANGED.split(":")[0].lower()  # the app says it as a sentence
            assert said in _said(app).lower() or any(said in str(n.message).lower() for n in app._notifications), _said(
                app
            )
            assert app.chat_screen.composer.text == "four"  # the draft is kept
            await send(app, pilot, "four")
            assert user_texts(app) == ["one", "four"]
        await cli.refresh()
        assert [i.text for i in cli.conversation.items if i.role == "user"] == ["one", "four"]
