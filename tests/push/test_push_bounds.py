"""The push receiver bounds what it is sent (issue 30, item 6): a body nested 100,000 deep with
the right token used to get no answer at all and print a RecursionError traceback (asyncio's
"Unhandled exception in client_connected_cb"). Now it is answered 400 with the reason, a body
larger than the bound 413 (by its Content-Length, before it is read), and nothing is logged."""

from __future__ import annotations

import asyncio
import logging

import httpx
import pytest

from rewindtui.client.push import MAX_BODY, MAX_DEPTH, PushReceiver

pytestmark = pytest.mark.timeout(60)

TASK = {"id": "t-1", "contextId": "c-1", "status": {"state": "TASK_STATE_COMPLETED"}}


async def test_a_body_nested_100000_deep_is_answered_400_without_a_traceback(caplog):
    caplog.set_level(logging.DEBUG)
    deep = b'{"task": ' + b"[" * 100_000 + b"]" * 100_000 + b"}"
    async with PushReceiver() as receiver:
        headers = {"X-A2A-Notification-Token": receiver.token}
        async with httpx.AsyncClient(timeout=20) as http:
            refused = await http.post(receiver.url, content=deep, headers=headers)
            assert refused.status_code == 400
            assert refused.json()["message"] == f"nested deeper than {MAX_DEPTH} levels"
            # the receiver still serves: a real notification arrives
            ok = await http.post(receiver.url, json={"task": TASK}, headers=headers)
            assert ok.status_code == 200
        assert receiver.rejected == 1 and receiver.tasks == [TASK]
    assert not [r for r in caplog.records if r.exc_info or "Traceback" in r.getMessage()]


async def test_a_body_just_within_the_depth_bound_is_taken():
    data: object = "leaf"
    for _ in range(MAX_DEPTH - 8):
        data = [data]
    task = {**TASK, "history": [{"messageId": "m", "role": "ROLE_AGENT", "parts": [{"data": data}]}]}
    async with PushReceiver() as receiver:
        async with httpx.AsyncClient(timeout=20) as http:
            ok = await http.post(
                receiver.url, json={"task": task}, headers={"X-A2A-Notification-Token": receiver.token}
            )
        assert ok.status_code == 200 and len(receiver.tasks) == 1


async def test_a_body_over_the_size_bound_is_answered_413_before_it_is_read():
    async with PushReceiver() as receiver:
        async with httpx.AsyncClient(timeout=20) as http:

            async def endless():  # a generator body: sent chunked, no Content-Length
                chunk = b" " * 65536
                for _ in range(MAX_BODY // len(chunk) + 64):
                    yield chunk

            # only the head is sent: the answer comes without the body being waited for
            reader, writer = await asyncio.open_connection("127.0.0.1", receiver.port)
            writer.write(
                f"POST {receiver.path} HTTP/1.1\r\nHost: 127.0.0.1\r\nX-A2A-Notification-Token: {receiver.token}\r\n"
                f"Content-Type: application/json\r\nContent-Length: {MAX_BODY + 1}\r\n\r\n{{".encode()
            )
            await writer.drain()
            head = await asyncio.wait_for(reader.read(4096), 10)
            writer.close()
            assert head.startswith(b"HTTP/1.1 413") and b"too large" in head
            try:
                chunked = await http.post(
                    receiver.url, content=endless(), headers={"X-A2A-Notification-Token": receiver.token}
                )
            except httpx.HTTPError:  # the receiver answered and closed while we were still sending
                pass
            else:
                assert chunked.status_code == 413
        assert receiver.rejected == 2 and receiver.tasks == []
