"""Issue 30: a message above the server's size limit is refused before it is read whole (HTTP 413,
a JSON-RPC error on the A2A endpoint saying the size, the limit and its setting), nothing is
stored, and the client says so; below the limit it is taken as before. Real embedded server."""

from __future__ import annotations

import sqlite3

import httpx
import pytest
from srvkit import send_body

from kit.servers import connected_chat
from rewindtui.chat import TurnRefused
from rewindtui.server import EmbeddedServer
from rewindtui.server.http.body_limit import MAX_REQUEST_ENV

pytestmark = [pytest.mark.timeout(120), pytest.mark.slow]

MB = 1024 * 1024


def _tasks(data_dir) -> int:
    with sqlite3.connect(data_dir / "rewindtui.db") as conn:
        n = int(conn.execute("SELECT COUNT(*) FROM tasks").fetchone()[0])
    conn.close()
    return n


@pytest.fixture
def small_limit(monkeypatch):
    monkeypatch.setenv(MAX_REQUEST_ENV, "1")


def test_above_the_limit_is_refused_with_413_and_nothing_stored(tmp_path, small_limit):
    with EmbeddedServer(tmp_path) as srv:
        big = httpx.post(
            srv.agent_url, json=send_body("s1", "x" * (2 * MB)), headers={"X-User-Id": "local"}, timeout=60
        )

        def chunks():  # no Content-Length: counted while read
            yield b'{"jsonrpc": "2.0", "id": "2", "method": "message/send", "params": {"message": {"text": "'
            for _ in range(40):
                yield b"y" * (64 * 1024)
            yield b'"}}}'

        streamed = httpx.post(
            srv.agent_url,
            content=chunks(),
            headers={"X-User-Id": "local", "Content-Type": "application/json"},
            timeout=60,
        )
        rest = httpx.post(
            f"{srv.api_url}/sessions",
            content=b"{" + b" " * (2 * MB) + b"}",
            headers={"X-User-Id": "local", "Content-Type": "application/json"},
            timeout=60,
        )
        fine = httpx.post(
            srv.agent_url, json=send_body("s2", "z" * (MB // 2)), headers={"X-User-Id": "local"}, timeout=60
        )
    assert big.status_code == 413 and streamed.status_code == 413 and rest.status_code == 413
    error = big.json()["error"]
    assert error["code"] == -32600 and big.json()["id"] is None
    assert "2.0 MB" in error["message"] and "1 MB" in error["message"] and MAX_REQUEST_ENV in error["message"]
    assert "more than 1 MB" in streamed.json()["error"]["message"]
    assert MAX_REQUEST_ENV in rest.json()["error"]
    assert fine.status_code == 200 and fine.json()["result"]["status"]["state"] == "completed"
    assert _tasks(tmp_path) == 1  # only the message within the limit


async def test_the_client_says_why_and_keeps_nothing(tmp_path, small_limit):
    with EmbeddedServer(tmp_path) as srv:
        chat = await connected_chat(srv)
        try:
            with pytest.raises(TurnRefused) as refused:
                await chat.send("w" * (2 * MB))
            await chat.send("a small one")
        finally:
            await chat.client.aclose()
    assert MAX_REQUEST_ENV in str(refused.value), str(refused.value)[:300]
    assert _tasks(tmp_path) == 1
