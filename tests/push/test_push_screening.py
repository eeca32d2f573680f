"""The embedded server screens push notification URLs (issue 30, item 8). It used to POST a task
and its token to any URL, another loopback port and 169.254.169.254 included. Now, on a server
with the default setting (``rewindtui serve``: nothing allowed), configs whose host resolves to a
loopback, link-local or private address are refused with the reason -- registered afterwards or
carried by a send, which is then refused before its turn starts -- and a name that resolves
elsewhere at delivery time (DNS rebinding) gets nothing: the check is made again before each
POST, and the POST goes to the address that was checked."""

from __future__ import annotations

import asyncio

import httpx
import pytest
from a2a.server.tasks.inmemory_push_notification_config_store import InMemoryPushNotificationConfigStore
from a2a.types import a2a_pb2 as pb

from rewindtui.a2a.classify import EventKind
from rewindtui.client.a2a_client import A2AClient, ServerConfig
from rewindtui.client.push import PushReceiver
from rewindtui.server.http.options import ServerOptions
from rewindtui.server.http.push_configs import RetryingSender
from rewindtui.server.http.push_screen import PushScreen, PushURLRefused, parse_allow

pytestmark = [pytest.mark.slow, pytest.mark.timeout(120)]


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    from rewindtui.server import EmbeddedServer

    # as `rewindtui serve` runs by default: no --push-allow
    with EmbeddedServer(tmp_path_factory.mktemp("screened"), options=ServerOptions(push_allow=())) as running:
        yield running


def rpc(server, method: str, params: dict) -> dict:
    body = {"jsonrpc": "2.0", "id": 1, "method": method, "params": params}
    return httpx.post(server.agent_url, json=body, headers={"A2A-Version": "1.0"}, timeout=10).json()


async def a_task(server) -> str:
    async with A2AClient(ServerConfig(url=server.agent_url)) as client:
        await client.connect()
        events = [e async for e in client.stream(client.build_message("hi", session_id=None))]
    return next(e.body["id"] for e in events if e.kind is EventKind.TASK)


async def test_configs_to_internal_addresses_are_refused(served):
    task_id = await a_task(served)
    async with PushReceiver() as receiver:  # a real listener on another loopback port
        cases = {
            receiver.url: "loopback",
            f"http://localhost:{receiver.port}{receiver.path}": "loopback",  # judged after DNS
            f"http://[::1]:{receiver.port}/x": "loopback",
            "http://169.254.169.254/latest/meta-data/": "link-local",
            "http://[::ffff:169.254.169.254]/latest/": "link-local",
            "http://[fe80::1]/": "link-local",
            "http://10.0.0.7:8080/hook": "private",
            "http://192.168.1.1/hook": "private",
            "http://[fd00::1]/hook": "private",
        }
        for url, kind in cases.items():
            answer = await asyncio.to_thread(
                rpc,
                served,
                "CreateTaskPushNotificationConfig",
                {"taskId": task_id, "url": url, "token": receiver.token},
            )
            assert answer["error"]["code"] == -32602, (url, answer)
            assert kind in answer["error"]["message"] and "--push-allow" in answer["error"]["message"], answer
        listed = await asyncio.to_thread(rpc, served, "ListTaskPushNotificationConfigs", {"taskId": task_id})
        assert listed["result"].get("configs", []) == []
        assert receiver.tasks == [] and receiver.rejected == 0  # nothing was ever posted to it


async def test_a_send_carrying_an_internal_push_url_is_refused_before_its_turn(served):
    async with A2AClient(ServerConfig(url=served.agent_url, api=served.api_url)) as client:
        await client.connect()
        assert client.has_api
        before = await client.list_sessions()
        client.push_config = {"url": "http://169.254.169.254/latest/meta-data/", "token": "t"}
        events = [e async for e in client.stream(client.build_message("steal", session_id=None))]
        assert [e.kind for e in events] == [EventKind.ERROR]  # the JSON-RPC error, and nothing else
        assert "link-local" in str(events[0].body)
        client.push_config = None
        after = await client.list_sessions()
        assert len(after) == len(before)  # no session, no turn was started


def test_allow_words_and_cidrs():
    nets = parse_allow(["loopback", "10.1.0.0/16, fd12::/16"])
    assert [str(n) for n in nets] == ["127.0.0.0/8", "::1/128", "10.1.0.0/16", "fd12::/16"]
    with pytest.raises(ValueError, match="push allow 'everything'"):
        parse_allow(["everything"])


async def test_the_post_goes_to_the_address_checked_and_a_rebound_name_gets_nothing():
    answers: dict[str, list[str]] = {}

    async def resolver(host: str, port: int) -> list[str]:
        return answers[host]

    task = pb.Task(id="t-1", context_id="c-1", status=pb.TaskStatus(state=pb.TaskState.TASK_STATE_COMPLETED))
    async with PushReceiver() as receiver, httpx.AsyncClient(timeout=5) as http:
        url = f"http://receiver.test:{receiver.port}{receiver.path}"  # a name only our resolver knows
        config = pb.TaskPushNotificationConfig(id="c", task_id="t-1", url=url, token=receiver.token)
        store = InMemoryPushNotificationConfigStore()

        # loopback allowed: the POST reaches 127.0.0.1 although the system cannot resolve the name
        answers["receiver.test"] = ["127.0.0.1"]
        sender = RetryingSender(http, store, attempts=1, screen=PushScreen(parse_allow(["loopback"]), resolver))
        assert await sender._dispatch_notification(task, config, "t-1") is True
        assert [t["id"] for t in receiver.tasks] == ["t-1"]

        # nothing allowed: the name checked public at registration now resolves to loopback
        strict = PushScreen((), resolver)
        answers["receiver.test"] = ["93.184.215.14"]
        assert (await strict.check(url)).url.startswith("http://93.184.215.14:")
        answers["receiver.test"] = ["93.184.215.14", "127.0.0.1"]  # one bad address is enough
        with pytest.raises(PushURLRefused, match="loopback"):
            await strict.check(url)
        answers["receiver.test"] = ["127.0.0.1"]
        sender = RetryingSender(http, store, attempts=2, base=0.01, screen=strict)
        assert await sender._dispatch_notification(task, config, "t-1") is False
        assert len(receiver.tasks) == 1 and receiver.rejected == 0  # the second POST never came
