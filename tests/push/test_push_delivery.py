"""The embedded server's push delivery: tried again with backoff when the webhook cannot take it
(503 twice, then 200: delivered on the third try), not tried again when the webhook says no
(401), bounded when it never answers well; and the configs kept in SQLite (``push_configs.db``,
0600) so that a turn the server's stop cut short is notified (as failed) by the next start.

The webhooks are real HTTP servers on loopback (Starlette under uvicorn, or the client's own
:class:`~rewindtui.client.push.PushReceiver`)."""

from __future__ import annotations

import asyncio
import signal
import stat
import threading
from typing import Any

import pytest
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from asgi_thread import ServeInThread
from rewindtui.a2a.classify import EventKind
from rewindtui.client.a2a_client import A2AClient, ServerConfig
from rewindtui.client.push import PushReceiver
from rewindtui.server.shared.paths import PUSH_FILE
from rewindtui.server.storage.push_store import DELIVERED, FAILED

pytestmark = [pytest.mark.timeout(120), pytest.mark.slow]  # real turns of the demo model, a restart


class Webhook:
    """A webhook that answers each POST with the next status of ``statuses`` (the last one repeats)."""

    def __init__(self, *statuses: int) -> None:
        self.statuses = list(statuses)
        self.hits: list[dict[str, Any]] = []
        self._lock = threading.Lock()

    def app(self) -> Starlette:
        async def take(request: Request) -> JSONResponse:
            body = await request.json()
            with self._lock:
                status = self.statuses[min(len(self.hits), len(self.statuses) - 1)]
                self.hits.append(
                    {"status": status, "token": request.headers.get("x-a2a-notification-token"), "body": body}
                )
            return JSONResponse({"status": status}, status_code=status)

        return Starlette(routes=[Route("/hook", take, methods=["POST"])])


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    from rewindtui.server import EmbeddedServer

    with EmbeddedServer(tmp_path_factory.mktemp("push-delivery")) as srv:
        srv.app.state.push.sender.base = 0.05  # the backoff, short for the test (0.05, 0.1, 0.2 s)
        yield srv


async def _turn(agent_url: str, push_config: dict[str, Any]) -> str:
    """A whole turn with a push config; its task id."""
    async with A2AClient(ServerConfig(url=agent_url)) as client:
        await client.connect()
        client.push_config = push_config
        task_id = ""
        async for event in client.stream(client.build_message("hello there", session_id=None)):
            if event.kind is EventKind.TASK and not task_id:
                task_id = event.body["id"]
        return task_id


async def _until(condition, timeout: float = 30.0) -> None:
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while not condition():
        assert loop.time() < deadline, "condition not met in time"
        await asyncio.sleep(0.02)


def _outcome(server, task_id: str) -> tuple[str, str, int, bool] | None:
    return next((o for o in server.app.state.push.sender.outcomes if o[0] == task_id), None)


async def test_a_webhook_that_fails_twice_gets_the_third_try(server):
    hook = Webhook(503, 503, 200)
    with ServeInThread(hook.app()) as served:
        task_id = await _turn(server.agent_url, {"url": served.url + "/hook", "token": "tok-1"})
        await _until(lambda: _outcome(server, task_id) is not None)
    assert [h["status"] for h in hook.hits] == [503, 503, 200]
    assert all(h["token"] == "tok-1" and h["body"]["task"]["id"] == task_id for h in hook.hits)
    assert hook.hits[-1]["body"]["task"]["status"]["state"] == "TASK_STATE_COMPLETED"
    assert _outcome(server, task_id) == (task_id, task_id, 3, True)
    assert await server.app.state.push.store.state_of(task_id, task_id) == DELIVERED


async def test_a_webhook_that_says_no_is_not_asked_again(server):
    hook = Webhook(401)
    with ServeInThread(hook.app()) as served:
        task_id = await _turn(server.agent_url, {"url": served.url + "/hook", "token": "wrong"})
        await _until(lambda: _outcome(server, task_id) is not None)
    assert [h["status"] for h in hook.hits] == [401]
    assert await server.app.state.push.store.state_of(task_id, task_id) == FAILED


async def test_tries_are_bounded(server):
    hook = Webhook(503)
    with ServeInThread(hook.app()) as served:
        task_id = await _turn(server.agent_url, {"url": served.url + "/hook", "token": "t"})
        await _until(lambda: _outcome(server, task_id) is not None)
    attempts = server.app.state.push.sender.attempts
    assert len(hook.hits) == attempts == 4
    assert _outcome(server, task_id) == (task_id, task_id, attempts, False)
    assert await server.app.state.push.store.state_of(task_id, task_id) == FAILED


async def test_a_turn_cut_by_a_killed_server_is_notified_by_the_next_start(tmp_path):
    """The server process is killed mid-turn (SIGKILL: no stop, no notification); the next start
    reads the config from ``push_configs.db``, its recovery marks the turn failed, and that is
    what reaches the webhook."""
    from rewindtui.server import EmbeddedServer
    from rewindtui.server.process.spawn import spawn_server

    data = tmp_path / "data"
    async with PushReceiver() as receiver:
        child = await asyncio.to_thread(spawn_server, data, demo_delay=0.3, timeout=120, share=False)
        try:
            config = ServerConfig(url=child.agent_url, credentials={"Authorization": f"Bearer {child.token}"})
            async with A2AClient(config) as client:
                await client.connect()
                client.push_config = receiver.config()
                async for event in client.stream(client.build_message("a long answer please " * 10, session_id=None)):
                    if event.kind is EventKind.TASK:
                        task_id = event.body["id"]
                        break
                child.process.send_signal(signal.SIGKILL)
                await asyncio.to_thread(child.process.wait, 30)
        finally:
            await asyncio.to_thread(child.stop)
        assert receiver.tasks == []  # nothing was sent: the process died
        assert stat.S_IMODE((data / PUSH_FILE).stat().st_mode) == 0o600

        second = EmbeddedServer(data)
        await asyncio.to_thread(second.start)
        try:
            pushed = await receiver.wait_for(task_id, timeout=30)
            assert pushed["status"]["state"] == "TASK_STATE_FAILED"  # the start's recovery marked it failed
            configs = await second.app.state.push.store.get_info_for_dispatch(task_id)
            assert [c.url for c in configs] == [receiver.url]  # kept across the restart
            await _until(lambda: _outcome(second, task_id) is not None)
            assert await second.app.state.push.store.state_of(task_id, task_id) == DELIVERED
        finally:
            await asyncio.to_thread(second.stop)
        assert receiver.rejected == 0


async def test_a_server_stop_notifies_the_running_turn_as_canceled(tmp_path):
    """A clean stop ends the running turn (canceled) and sends that before the server goes."""
    from rewindtui.server import EmbeddedServer

    async with PushReceiver() as receiver:
        server = EmbeddedServer(tmp_path / "data", demo_delay=0.3)
        await asyncio.to_thread(server.start)
        try:
            async with A2AClient(ServerConfig(url=server.agent_url)) as client:
                await client.connect()
                client.push_config = receiver.config()
                async for event in client.stream(client.build_message("a long answer please " * 10, session_id=None)):
                    if event.kind is EventKind.TASK:
                        task_id = event.body["id"]
                        break
        finally:
            await asyncio.to_thread(server.stop)
        pushed = await receiver.wait_for(task_id, timeout=10)
        assert pushed["status"]["state"] == "TASK_STATE_CANCELED"
