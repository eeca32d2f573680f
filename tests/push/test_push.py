"""Push notifications against the embedded server, which implements them with a2a-sdk's config
store and sender: a turn whose stream the client drops still reaches the client's loopback
receiver when it ends (over each binding), with the token the client set; the receiver refuses
notifications without it; the config methods (create / get / list / delete) keep to the caller's
own tasks."""

from __future__ import annotations

import asyncio

import httpx
import pytest

from kit.servers import embedded_fixture
from rewindtui.a2a.classify import EventKind
from rewindtui.a2a.dialect import Dialect
from rewindtui.client.a2a_client import A2AClient, ServerConfig
from rewindtui.client.push import PushReceiver

pytestmark = pytest.mark.timeout(90)


slow = embedded_fixture("push-data", scope="module", demo_delay=0.1)


def answer_text(task: dict) -> str:
    return "".join(p.get("text", "") for a in task.get("artifacts") or () for p in a.get("parts") or ())


async def test_the_receiver_takes_its_token_only():
    seen: list[dict] = []
    async with PushReceiver(on_notification=seen.append) as receiver:
        task = {"id": "t-1", "contextId": "c-1", "status": {"state": "TASK_STATE_COMPLETED"}}
        async with httpx.AsyncClient() as http:
            wrong = await http.post(receiver.url, json={"task": task}, headers={"X-A2A-Notification-Token": "guess"})
            missing = await http.post(receiver.url, json={"task": task})
            elsewhere = await http.post(
                receiver.url.rsplit("/", 1)[0] + "/other",
                json={"task": task},
                headers={"X-A2A-Notification-Token": receiver.token},
            )
            garbled = await http.post(
                receiver.url, content=b"{not json", headers={"X-A2A-Notification-Token": receiver.token}
            )
            assert (wrong.status_code, missing.status_code, elsewhere.status_code, garbled.status_code) == (
                401,
                401,
                404,
                400,
            )
            assert receiver.rejected == 4 and receiver.tasks == [] and seen == []
            ok = await http.post(
                receiver.url, json={"task": task}, headers={"X-A2A-Notification-Token": receiver.token}
            )
            assert ok.status_code == 200
        assert await receiver.wait_for("t-1", timeout=5) == task
        assert seen == [task]
        assert receiver.url.startswith("http://127.0.0.1:")


@pytest.mark.parametrize(
    ("binding", "dialect"), [("JSONRPC", "1.0"), ("JSONRPC", "0.3"), ("HTTP+JSON", "1.0"), ("GRPC", "1.0")]
)
async def test_a_turn_cut_from_the_client_arrives_by_push(slow, binding, dialect):
    """(0.3 spells the config ``configuration.pushNotificationConfig``; a2a-sdk's compat layer reads it.)"""
    async with PushReceiver() as receiver:
        config = ServerConfig(url=slow.agent_url, binding=binding, dialect=Dialect.parse(dialect))
        async with A2AClient(config) as client:
            caps = await client.connect()
            assert caps.card["capabilities"]["pushNotifications"] is True
            client.push_config = receiver.config()
            message = client.build_message("please say a great many words " * 4, session_id=None)
            async for event in client.stream(message):  # the first event, then the client goes away
                assert event.kind is EventKind.TASK
                task_id = event.body["id"]
                break
        assert receiver.tasks == []  # the turn is still running
        pushed = await receiver.wait_for(task_id, timeout=60)
        assert pushed["status"]["state"] == "TASK_STATE_COMPLETED"
        async with A2AClient(ServerConfig(url=slow.agent_url)) as reader:
            stored = await reader.get_task(task_id)
        assert answer_text(pushed) == answer_text(stored) and "great many words" in answer_text(pushed)
        assert receiver.rejected == 0


async def test_config_methods_keep_to_the_callers_tasks(slow):
    async with A2AClient(ServerConfig(url=slow.agent_url, user_id="ann")) as client:
        await client.connect()
        message = client.build_message("hi", session_id=None)
        events = [e async for e in client.stream(message)]
        task_id = next(e.body["id"] for e in events if e.kind is EventKind.TASK)

    def rpc(method: str, params: dict, user: str = "ann") -> dict:
        body = {"jsonrpc": "2.0", "id": 1, "method": method, "params": params}
        headers = {"A2A-Version": "1.0", "X-User-Id": user}
        return httpx.post(slow.agent_url, json=body, headers=headers, timeout=10).json()

    async with PushReceiver() as receiver:
        created = await asyncio.to_thread(
            rpc, "CreateTaskPushNotificationConfig", {"taskId": task_id, "id": "cfg-1", **receiver.config()}
        )
        assert created["result"]["url"] == receiver.url and created["result"]["id"] == "cfg-1"
        # the task had ended already: its notification comes at once
        assert (await receiver.wait_for(task_id, timeout=10))["status"]["state"] == "TASK_STATE_COMPLETED"
        listed = await asyncio.to_thread(rpc, "ListTaskPushNotificationConfigs", {"taskId": task_id})
        assert [c["id"] for c in listed["result"]["configs"]] == ["cfg-1"]
        got = await asyncio.to_thread(rpc, "GetTaskPushNotificationConfig", {"taskId": task_id, "id": "cfg-1"})
        assert got["result"]["token"] == receiver.token
        other = await asyncio.to_thread(rpc, "ListTaskPushNotificationConfigs", {"taskId": task_id}, "bob")
        assert other["error"]["code"] == -32001  # another user's task is not found
        bad = await asyncio.to_thread(
            rpc, "CreateTaskPushNotificationConfig", {"taskId": task_id, "url": "file:///etc/passwd", "token": "x"}
        )
        assert bad["error"]["code"] == -32602
        await asyncio.to_thread(rpc, "DeleteTaskPushNotificationConfig", {"taskId": task_id, "id": "cfg-1"})
        listed = await asyncio.to_thread(rpc, "ListTaskPushNotificationConfigs", {"taskId": task_id})
        assert listed["result"].get("configs", []) == []


async def test_nothing_is_left_watching_after_delivery(slow):
    push = slow.app.state.push
    async with PushReceiver() as receiver:
        async with A2AClient(ServerConfig(url=slow.agent_url)) as client:
            await client.connect()
            client.push_config = receiver.config()
            events = [e async for e in client.stream(client.build_message("short", session_id=None))]
            task_id = next(e.body["id"] for e in events if e.kind is EventKind.TASK)
        await receiver.wait_for(task_id, timeout=30)
    deadline = asyncio.get_running_loop().time() + 10
    while task_id in push._watching:  # the watcher ends just after its POST was answered
        assert asyncio.get_running_loop().time() < deadline, "the watcher of a delivered task is still kept"
        await asyncio.sleep(0.01)


async def test_the_receiver_keeps_the_newest_notifications_only():
    from rewindtui.client.push import MAX_KEPT

    async with PushReceiver() as receiver:
        async with httpx.AsyncClient() as http:
            for n in range(MAX_KEPT + 5):
                task = {"id": f"t-{n}", "contextId": "c", "status": {"state": "TASK_STATE_COMPLETED"}}
                answer = await http.post(
                    receiver.url, json={"task": task}, headers={"X-A2A-Notification-Token": receiver.token}
                )
                assert answer.status_code == 200
        assert len(receiver.tasks) == MAX_KEPT
        assert receiver.tasks[0]["id"] == "t-5" and receiver.tasks[-1]["id"] == f"t-{MAX_KEPT + 4}"
