"""``rewindtui web`` in a real headless browser: Debian's chromium driven by Playwright for Python
(``executable_path``; browser downloads are not used). The app served by textual-serve talks to
the embedded server the test started; what the browser does is checked on that server (the
view is the server's truth): a message typed in the page is answered, Esc Esc + Enter rewinds it.
Screenshots are kept in the test's tmp directory (``web-*.png``)."""

from __future__ import annotations

import asyncio
import os
import shutil
import socket
import subprocess
import sys
import time
from collections.abc import Awaitable, Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from rewindtui.chat import Chat
from rewindtui.config.connection import connection
from rewindtui.config.settings import load_settings

CHROMIUM = os.environ.get("REWINDTUI_TEST_CHROMIUM") or shutil.which("chromium") or "/usr/bin/chromium"
FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
SRC = str(Path(__file__).resolve().parents[2] / "src")

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(not Path(CHROMIUM).exists(), reason="no chromium executable (Debian: apt-get install chromium)"),
]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture
def agent(tmp_path: Path) -> Iterator[Any]:
    from rewindtui.server.process.spawn import spawn_server

    server = spawn_server(tmp_path / "server-data", share=False)
    try:
        yield server
    finally:
        server.stop()


def _web(
    tmp_path: Path, agent: Any, *flags: str, env: dict[str, str] | None = None
) -> tuple[subprocess.Popen[str], str]:
    """``rewindtui web`` on a free loopback port, pointed at ``agent``; (process, base URL)."""
    port = _free_port()
    config = tmp_path / "config.toml"
    config.write_text("")
    clean = {k: v for k, v in os.environ.items() if not k.startswith("REWINDTUI_")}
    clean.update(
        REWINDTUI_CONFIG=str(config),
        REWINDTUI_DATA_DIR=str(tmp_path / "client-data"),
        AGENT_TOKEN=agent.token or "",
        PYTHONPATH=SRC + os.pathsep + os.environ.get("PYTHONPATH", ""),
        **(env or {}),
    )
    argv = [
        sys.executable,
        "-m",
        "rewindtui",
        "web",
        "--port",
        str(port),
        "--url",
        agent.agent_url,
        "--bearer-env",
        "AGENT_TOKEN",
        *flags,
    ]
    proc = subprocess.Popen(argv, env=clean, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    assert proc.stderr is not None
    line = proc.stderr.readline()
    assert line.startswith("rewindtui web: open "), line
    base = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 30
    while True:  # it printed before listening: wait until it answers
        try:
            httpx.get(base + "/static/css/xterm.css", timeout=2)
            break
        except httpx.TransportError:
            if time.monotonic() > deadline or proc.poll() is not None:
                raise
            time.sleep(0.1)
    return proc, base


def _stop(proc: subprocess.Popen[str]) -> None:
    proc.terminate()
    try:
        proc.wait(15)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait(5)


async def _server_users(agent: Any) -> dict[str, list[str]]:
    """Each session on the server -> its user messages, as the server has them."""
    settings = load_settings({"url": agent.agent_url, "bearer_env": "T"}, env={"T": agent.token or ""})
    async with connection(settings) as conn:
        found: dict[str, list[str]] = {}
        for session in await Chat(conn.client).list_sessions():
            chat = Chat(conn.client)
            await chat.open(session.id)
            items = chat.conversation.items
            found[session.id] = [i.text for i in items if i.role == "user"]
            found[session.id + ":agent"] = [i.text for i in items if i.role != "user" and i.text.strip()]
        return found


async def _until(check: Callable[[], Awaitable[Any]], timeout: float = 45.0) -> Any:
    deadline = time.monotonic() + timeout
    while True:
        value = await check()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"not reached in {timeout}s; last: {value!r}")
        await asyncio.sleep(0.25)


async def test_typed_in_the_browser_answered_and_rewound(tmp_path: Path, agent: Any) -> None:
    from playwright.async_api import async_playwright

    proc, base = _web(tmp_path, agent)
    try:
        async with async_playwright() as pw:
            browser = await pw.chromium.launch(executable_path=CHROMIUM, args=FLAGS)
            try:
                page = await browser.new_page(viewport={"width": 1200, "height": 800})
                await page.goto(base + "/")
                # textual-serve marks the body once the app's first bytes arrive
                await page.wait_for_selector("body.-first-byte", state="attached", timeout=60_000)
                # the terminal is a canvas (nothing to wait for in the DOM): give the app its first
                # frame before the click that focuses the terminal (a click before layout misses)
                await page.wait_for_timeout(1500)
                await page.mouse.click(600, 745)
                for text in ("first from the browser", "second from the browser"):
                    await page.keyboard.type(text)
                    await page.keyboard.press("Enter")

                    async def answered(text: str = text) -> bool:
                        users = await _server_users(agent)
                        return any(text in u for k, u in users.items() if not k.endswith(":agent")) and any(
                            any(text in a for a in v) for k, v in users.items() if k.endswith(":agent")
                        )

                    await _until(answered)
                await page.screenshot(path=str(tmp_path / "web-answered.png"))

                users = await _server_users(agent)
                (session,) = [k for k in users if not k.endswith(":agent")]
                assert users[session] == ["first from the browser", "second from the browser"]

                # Esc Esc on the empty composer chooses the last turn; Enter rewinds it. At a
                # person's pace, as the real-terminal lane types (tests/terminal/ptyterm.py): an Esc
                # is a prefix as well as a key (alt+<next> is Esc then the key), so a key that comes
                # within the terminal's escape delay (0.1 s) after an Esc is read with it. The
                # Enter came 96 ms after the second Esc once the server's reads between them
                # answered sooner, and the app saw Esc, alt+Enter (Textual's parser, logged)
                for key in ("Escape", "Escape"):
                    await page.keyboard.press(key)
                    await page.wait_for_timeout(150)
                await page.screenshot(path=str(tmp_path / "web-rewind-preview.png"))
                assert (await _server_users(agent))[session] == users[session]  # a preview: nothing sent
                await page.keyboard.press("Enter")

                async def rewound() -> bool:
                    return (await _server_users(agent))[session] == ["first from the browser"]

                await _until(rewound)
                await page.screenshot(path=str(tmp_path / "web-rewound.png"))
            finally:
                await browser.close()
    finally:
        _stop(proc)
    assert (tmp_path / "web-rewound.png").stat().st_size > 0


async def test_with_a_token_only_its_holder_gets_in_and_other_sites_are_refused(tmp_path: Path, agent: Any) -> None:
    from playwright.async_api import async_playwright

    proc, base = _web(tmp_path, agent, "--token-env", "WEB_TOKEN", env={"WEB_TOKEN": "web-secret-123"})
    try:
        async with httpx.AsyncClient() as http:
            assert (await http.get(base + "/")).status_code == 403
            assert (await http.get(base + "/ws")).status_code == 403
            assert (await http.get(base + "/?token=wrong")).status_code == 403
        async with async_playwright() as pw:
            browser = await pw.chromium.launch(executable_path=CHROMIUM, args=FLAGS)
            try:
                page = await browser.new_page()
                answer = await page.goto(base + "/?token=web-secret-123")
                assert answer is not None and answer.status == 200
                # the websocket carried the cookie the page set: the app starts
                await page.wait_for_selector("body.-first-byte", state="attached", timeout=60_000)
                cookies = {c["name"]: c for c in await page.context.cookies()}
                assert (
                    cookies["rewindtui_web_token"]["httpOnly"]
                    and cookies["rewindtui_web_token"]["sameSite"] == "Strict"
                )
            finally:
                await browser.close()
        # a page on another site cannot open the app's websocket, even with the token
        import aiohttp

        async with aiohttp.ClientSession() as http2:
            with pytest.raises(aiohttp.WSServerHandshakeError) as refused:
                await http2.ws_connect(base + "/ws?token=web-secret-123", headers={"Origin": "http://evil.example"})
            assert refused.value.status == 403
    finally:
        _stop(proc)
