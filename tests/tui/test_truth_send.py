"""The app keeps the draft when the server refuses a send, and shows nothing the server did not
take (Pilot, against the real embedded server behind the fault proxy)."""

from __future__ import annotations

import asyncio

import pytest

from faults.proxy import Fault, FaultProxy, is_turn
from kit.apps import proxied_app as app_for
from kit.pilot import settle
from kit.servers import embedded_fixture
from rewindtui.chat import Chat, freshness
from rewindtui.client.a2a_client import A2AClient, ServerConfig
from rewindtui.model import ItemKind
from rewindtui.tui.app import RewindApp

SIZE = (100, 30)


server = embedded_fixture("truth-send", scope="module", demo_delay=0.2)


@pytest.fixture(scope="module")
def proxy(server):
    with FaultProxy(server.base_url) as p:
        yield p


def shown(app: RewindApp) -> list[tuple[str, str]]:
    assert app.chat is not None
    return [(i.role, i.text) for i in app.chat.conversation.items if i.kind is ItemKind.MESSAGE]


async def test_http_refusal_keeps_the_draft_and_shows_nothing(server, proxy):
    proxy.add(Fault(is_turn, status=500, body=b'{"error": "database is locked"}'))
    app = app_for(proxy, server)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        await pilot.press(*"keep me")
        await pilot.press("enter")
        await settle(app, pilot)
        assert app.chat_screen.composer.text == "keep me"
        assert shown(app) == []
        assert app.chat.session_id is None  # no session was created for a message that never got through
        assert app.chat.conversation.turn_state == "idle"
    proxy.clear()


async def test_refused_while_another_clients_turn_runs(server, proxy, monkeypatch):
    """The server refuses with a failed status (not an HTTP error): the composer gets the draft
    back, the transcript is as before, and the other client's turn is untouched."""
    async with A2AClient(ServerConfig(url=server.agent_url, api=server.api_url)) as other_client:
        other = Chat(other_client)
        await other.open(None)
        await other.send("hello")
        sid = other.session_id
        app = app_for(proxy, server, session_id=sid)
        async with app.run_test(size=SIZE) as pilot:
            await settle(app, pilot)
            monkeypatch.setattr(freshness, "ensure_fresh", no_check)  # the server's own refusal (reload: freshness)
            before = shown(app)
            running = asyncio.ensure_future(other.send("a long one"))
            while not other.conversation.busy:
                await asyncio.sleep(0.01)
            await asyncio.sleep(0.05)
            await pilot.press(*"me too")
            await pilot.press("enter")
            await settle(app, pilot)
            assert app.chat_screen.composer.text == "me too"
            assert shown(app) == before
            await running
        assert [t for r, t in ((i.role, i.text) for i in other.conversation.items) if r == "user"] == [
            "hello",
            "a long one",
        ]


async def no_check(chat, error) -> None:
    """The client's freshness check, off: what the server itself refuses (client/freshness.py)."""
