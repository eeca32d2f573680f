"""The wire console (F5, /wire): the app's requests, answers and frames with a bearer token that
never appears; Enter copies a request as curl. Against a2a-sdk's own server
(``tests/a2a_servers/full_servers.py``)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "a2a_servers"))

from full_servers import full_app

from asgi_thread import ServeInThread
from kit.apps import settings_app
from kit.pilot import send, settle, wait_until
from kit.servers import settings_in
from rewindtui.client import wire_log
from rewindtui.tui.screens.wire_console import WireConsoleScreen

pytestmark = [pytest.mark.slow, pytest.mark.timeout(90)]
TOKEN = "console-bearer-token-31337"


@pytest.fixture
def sdk():
    served = ServeInThread(factory=lambda url: full_app(url + "/")).start()
    yield served
    served.stop()


@pytest.fixture(autouse=True)
def no_log_left():
    previous = wire_log.activate(None)
    yield
    wire_log.activate(previous)


def console_text(screen: WireConsoleScreen) -> str:
    from textual.widgets import OptionList

    listing = screen.query_one("#wire-list", OptionList)
    return "\n".join(str(listing.get_option_at_index(i).prompt) for i in range(listing.option_count))


async def test_the_console_shows_the_wire_without_the_token(sdk, tmp_path, monkeypatch):
    monkeypatch.setenv("CONSOLE_TOKEN", TOKEN)
    settings = settings_in(tmp_path, url=sdk.url + "/")
    from dataclasses import replace

    from rewindtui.client.auth import AuthOption, SecretRef

    option = AuthOption("bearer", SecretRef(env="CONSOLE_TOKEN"), where="--bearer-env")
    settings = replace(settings, auth=option, credentials=option.headers({"CONSOLE_TOKEN": TOKEN}))
    app = settings_app(settings)
    copied: list[str] = []
    app.copy_to_clipboard = copied.append  # type: ignore[method-assign]
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(app, pilot)
        await pilot.press("f5")
        await wait_until(pilot, lambda: isinstance(app.screen, WireConsoleScreen))
        screen = app.screen
        assert isinstance(screen, WireConsoleScreen)
        await pilot.press("escape")
        await wait_until(pilot, lambda: not isinstance(app.screen, WireConsoleScreen))
        await send(app, pilot, "hello wire")  # recorded while the console is closed, too
        app.chat_screen.query_one("Composer").text = "/wire"
        await pilot.press("enter")
        await wait_until(pilot, lambda: isinstance(app.screen, WireConsoleScreen))
        screen = app.screen
        await wait_until(pilot, lambda: any("TASK_STATE_COMPLETED" in str(e.get("body")) for e in screen.shown))
        text = console_text(screen)
        assert "→ POST " + sdk.url + "/" in text and "⋯ frame" in text and "SendStreamingMessage" in text
        assert TOKEN not in text and all(TOKEN not in str(e) for e in screen.wire.entries)
        request = next(
            i
            for i, e in enumerate(screen.shown)
            if e["kind"] == "request" and "SendStreamingMessage" in (e.get("body") or "")
        )
        assert screen.shown[request]["headers"]["authorization"] == "***"
        screen.query_one("#wire-list").highlighted = request
        await pilot.press("enter")
        await wait_until(pilot, lambda: bool(copied))
        assert (
            copied[-1].startswith("curl -sS -X POST") and "authorization: ***" in copied[-1] and TOKEN not in copied[-1]
        )


def test_snapshot_of_the_wire_console(snap_compare):
    """The console over a replayed a2a-sdk 1.3 stream (tests/fixtures/a2a-1.0/
    a2a-sdk-1.3.0_SendStreamingMessage_v1.0.txt), sent with a bearer token; the times are fixed
    so the picture is the same on every run."""
    import asyncio

    import httpx

    from captures import load
    from kit.offline import offline_app, offline_chat

    capture = load("a2a-1.0/a2a-sdk-1.3.0_SendStreamingMessage_v1.0.txt")
    log = wire_log.WireLog()

    from rewindtui.a2a import outgoing
    from rewindtui.a2a.dialect import Dialect

    message = outgoing.user_message("hello", dialect=Dialect.V10, context_id=None)
    message["messageId"] = "m-1"  # the capture's own
    body = outgoing.stream_request(message, Dialect.V10)
    body["id"] = "req-1"

    async def record() -> None:
        async def events():
            for event in capture.body.split(b"\n\n"):
                if event.strip():
                    yield event + b"\n\n"

        def answer(request: httpx.Request) -> httpx.Response:
            headers = {k: v for k, v in capture.headers.items() if k != "transfer-encoding"}
            return httpx.Response(capture.status, headers=headers, content=events())

        async with httpx.AsyncClient(transport=httpx.MockTransport(answer)) as http:
            wire_log.attach(http, log)
            async with http.stream(
                "POST", "http://127.0.0.1:8000/", json=body, headers={"Authorization": f"Bearer {TOKEN}"}
            ) as response:
                async for _ in response.aiter_bytes():
                    pass

    asyncio.run(record())
    for n, entry in enumerate(log.entries):
        entry["t"] = round(0.25 + n * 0.011, 3)
        if "ms" in entry:
            entry["ms"] = float(n * 11)
    assert all(TOKEN not in str(e) for e in log.entries)
    wire_log.activate(log)
    app = offline_app(offline_chat([]))

    async def open_console(pilot):
        await pilot.pause()
        app.push_screen(WireConsoleScreen())
        await pilot.pause()

    assert snap_compare(app, terminal_size=(120, 36), run_before=open_console)
