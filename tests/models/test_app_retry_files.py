"""The app's /retry (the same ``Chat.retry`` as ``send --retry``) sends a failed turn again with
the files it carried. Against the embedded server on the test model, driven with Pilot."""

from __future__ import annotations

import json

import pytest
from openai_double import BAD_KEY
from srvkit import Api

from kit.apps import make_app
from kit.pilot import settle, wait_until
from rewindtui.chat import Chat
from rewindtui.client.a2a_client import A2AClient, ServerConfig
from rewindtui.client.attachments import FileAttachment

pytestmark = pytest.mark.slow


async def failed_turn_with_a_file(server, double) -> str:
    client = A2AClient(ServerConfig(url=server.agent_url, api=server.api_url))
    await client.connect()
    try:
        chat = Chat(client)
        await chat.open(None)
        await chat.send("baseline turn")
        double.queue(BAD_KEY)
        await chat.send("summarize the file", [FileAttachment("notes.txt", "text/plain", data=b"seven blue herons")])
        assert chat.conversation.turn_state == "failed"
        assert chat.session_id is not None
        return chat.session_id
    finally:
        await client.aclose()


async def test_slash_retry_sends_the_failed_turns_file_again(server, double, http):
    session = await failed_turn_with_a_file(server, double)
    app = make_app(server, session)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(app, pilot)
        requests = len(double.requests)
        app.chat_screen.composer.text = "/retry"
        await pilot.press("enter")
        await wait_until(pilot, lambda: len(double.requests) > requests, timeout=30)
        await settle(app, pilot)
    last_user = [m for m in double.requests[-1]["messages"] if m["role"] == "user"][-1]
    assert "summarize the file" in json.dumps(last_user) and "seven blue herons" in json.dumps(last_user)
    turns = [
        t for t in Api(http, server.api_url).tasks(session) if not t["metadata"].get("rewindtui_effective_history")
    ]
    users = [m for t in turns for m in t["history"] if m["role"] == "user"]
    assert [p["kind"] for p in users[-1]["parts"]] == ["text", "file"]
    assert [m["parts"][0]["text"] for m in users] == ["baseline turn", "summarize the file"]


async def test_alt_r_is_offered_after_a_failed_turn_and_retries_it(server, double, http):
    """/retry had no key: after a failed turn the footer now offers alt+r (only then), and it
    sends the failed turn again, as /retry does."""
    session = await failed_turn_with_a_file(server, double)
    app = make_app(server, session)
    async with app.run_test(size=(160, 40)) as pilot:
        await settle(app, pilot)

        def offered() -> bool:
            keys = app.chat_screen.query("FooterKey")
            return any(key.action == "retry" and key.display for key in keys)  # type: ignore[attr-defined]

        await wait_until(pilot, offered)
        requests = len(double.requests)
        await pilot.press("alt+r")
        await wait_until(pilot, lambda: len(double.requests) > requests, timeout=30)
        await settle(app, pilot)
        assert app.chat is not None and app.chat.conversation.turn_state == "completed"
        await wait_until(pilot, lambda: not offered())  # the last turn did not fail: no key for it
    turns = [
        t for t in Api(http, server.api_url).tasks(session) if not t["metadata"].get("rewindtui_effective_history")
    ]
    users = [m for t in turns for m in t["history"] if m["role"] == "user"]
    assert [m["parts"][0]["text"] for m in users] == ["baseline turn", "summarize the file"]
