"""The app's side of push: the ``push`` setting (file or ``REWINDTUI_PUSH``) makes every
connection start a loopback receiver and ask for a notification with each message; the app's
``on_notification`` hook hears a turn end even when nobody streams it any more."""

from __future__ import annotations

import asyncio

import pytest

from rewindtui.a2a.classify import EventKind
from rewindtui.client.push import describe, receiver_of
from rewindtui.config.connection import connection
from rewindtui.config.settings import SettingsError, load_settings

pytestmark = pytest.mark.timeout(90)


def write_config(tmp_path, text: str) -> dict[str, str]:
    path = tmp_path / "config.toml"
    path.write_text(text, encoding="utf-8")
    return {"REWINDTUI_CONFIG": str(path)}


def test_the_push_setting(tmp_path):
    assert load_settings({}, write_config(tmp_path, "")).push is False
    assert load_settings({}, write_config(tmp_path, "push = true\n")).push is True
    assert load_settings({}, {**write_config(tmp_path, "push = true\n"), "REWINDTUI_PUSH": "0"}).push is False
    assert load_settings({}, {**write_config(tmp_path, ""), "REWINDTUI_PUSH": "yes"}).push is True
    with pytest.raises(SettingsError, match="push must be true or false"):
        load_settings({}, write_config(tmp_path, 'push = "sometimes"\n'))


async def test_a_connection_with_push_hears_a_turn_end(tmp_path):
    from rewindtui.server import EmbeddedServer

    with EmbeddedServer(tmp_path / "server", demo_delay=0.05) as srv:
        settings = load_settings({"url": srv.agent_url}, {**write_config(tmp_path, "push = true\n")})
        heard: asyncio.Queue[dict] = asyncio.Queue()
        async with connection(settings) as conn:
            receiver = receiver_of(conn.client)
            assert receiver is not None and conn.client.push_config == receiver.config()
            receiver.on_notification = heard.put_nowait  # what the app hooks
            message = conn.client.build_message("a few words for the hook", session_id=None)
            async for event in conn.client.stream(message):
                if event.kind is EventKind.TASK:
                    break  # the app stops streaming (e.g. the user left the session)
            task = await asyncio.wait_for(heard.get(), 30)
            assert task["status"]["state"] == "TASK_STATE_COMPLETED"
            assert describe(task) == f"a turn in session {task['contextId']} ended completed"
        assert receiver_of(conn.client) is None and receiver._server is None  # stopped with the connection


def test_send_push_refuses_what_cannot_work():
    from types import SimpleNamespace

    from rewindtui.client.a2a_client import ServerConfig, capabilities_from_card
    from rewindtui.client.push import PushUnsupported, SendPush

    def card(url: str, push: bool) -> dict:
        interface = {"url": url, "protocolBinding": "JSONRPC", "protocolVersion": "1.0"}
        return {"name": "a", "supportedInterfaces": [interface], "capabilities": {"pushNotifications": push}}

    def client(url: str, push: bool) -> SimpleNamespace:
        return SimpleNamespace(capabilities=capabilities_from_card(card(url, push), ServerConfig(url=url)))

    with pytest.raises(PushUnsupported, match="does not offer push notifications"):
        SendPush(client("http://127.0.0.1:8000/", False), enabled=True).check()
    with pytest.raises(PushUnsupported, match="not on this machine"):
        SendPush(client("https://agents.example/", True), enabled=True).check()
    SendPush(client("https://agents.example/", True), enabled=False, url="https://hooks.example/x").check()
    SendPush(client("http://localhost:8000/", True), enabled=True).check()
    SendPush(client("http://127.0.0.1:8000/", False), enabled=False).check()  # no push asked: nothing to refuse
