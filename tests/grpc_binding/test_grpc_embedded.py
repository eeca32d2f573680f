"""The gRPC binding both ways against the embedded server: it serves a2a-sdk's ``GrpcHandler``
over its own request handler on a second loopback port, lists it in its card (after the HTTP
bindings), and checks the same bearer token; the client, told ``binding="grpc"``, streams turns,
stops one (``CancelTask``), follows one (``SubscribeToTask``), reads tasks (``GetTask``,
``ListTasks``), and rewinds with the A2A control message over gRPC -- which runs ADK's real
``rewind_async`` (the rewind event is in the ADK session) -- then redoes it."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from rewindtui.a2a.classify import EventKind
from rewindtui.chat import Chat
from rewindtui.client.a2a_client import A2AClient, HTTPStatusFailed, RpcError, ServerConfig
from rewindtui.model import ItemKind

pytestmark = pytest.mark.timeout(90)
TOKEN = "grpc-test-token-0123456789"


@pytest.fixture(scope="module")
def embedded(tmp_path_factory):
    from rewindtui.server import EmbeddedServer
    from rewindtui.server.http.options import ServerOptions

    with EmbeddedServer(
        tmp_path_factory.mktemp("grpc-data"), demo_delay=0.02, options=ServerOptions(token=TOKEN)
    ) as srv:
        yield srv


def config(url: str, tmp_path: Path, token: str | None = TOKEN, **kw) -> ServerConfig:
    credentials = {"Authorization": f"Bearer {token}"} if token else {}
    return ServerConfig(url=url, local_store=tmp_path / "sessions.db", credentials=credentials, **kw)


def Client(config: ServerConfig) -> A2AClient:
    """A client that may send its credentials to the server's gRPC port (another port of the
    configured host), as ``--grpc-same-host`` allows, and as the app does for the embedded server
    it started itself (rewindtui.config.connection)."""
    client = A2AClient(config)
    client.scope.grpc_same_host = True
    return client


async def test_the_card_lists_grpc_and_http_stays_the_default(embedded, tmp_path):
    async with Client(config(embedded.agent_url, tmp_path)) as client:
        caps = await client.connect()
        listed = [(i["protocolBinding"], i["protocolVersion"]) for i in caps.card["supportedInterfaces"]]
        assert listed[-1] == ("GRPC", "1.0") and caps.binding == "JSONRPC"
    async with Client(config(embedded.agent_url, tmp_path, binding="grpc")) as client:
        caps = await client.connect()
        assert caps.binding == "GRPC" and caps.endpoint.startswith("127.0.0.1:")
        assert caps.rewind_mode == "a2a" and caps.redo


async def test_send_stop_history_rewind_redo_over_grpc(embedded, tmp_path):
    async with Client(config(embedded.agent_url, tmp_path, binding="grpc")) as client:
        chat = Chat(client)
        await chat.open(None)
        await chat.send("first")
        await chat.send("second")
        assert chat.conversation.turn_state == "completed"
        sid = chat.session_id
        first, second = chat.conversation.turn_invocations()
        # GetTask and ListTasks over gRPC
        task_id = next(i.task_id for i in chat.conversation.items if i.role == "user")
        task = await client.get_task(task_id, history_length=1)
        assert task["status"]["state"] == "TASK_STATE_COMPLETED" and len(task["history"]) == 1
        page = await client.list_tasks(sid, page_size=1)
        assert len(page.tasks) == 1 and page.next_page_token
        # rewind: the control message over gRPC, ADK's rewind_async on the server
        await chat.rewind(second)
        assert chat.conversation.turn_invocations() == [first]
        parts = embedded.app.state.parts
        session = embedded.call(
            parts.session_service.get_session(app_name=parts.runner.app_name, user_id="local", session_id=sid)
        )
        assert [
            e.actions.rewind_before_invocation_id for e in session.events if e.actions.rewind_before_invocation_id
        ] == [second]
        # redo brings the rewound turn back
        await chat.redo()
        assert chat.conversation.turn_invocations() == [first, second]
        # stop a running turn: CancelTask over gRPC
        running = asyncio.ensure_future(chat.send("a long one " * 30))
        while not any(i.role == "agent" and i.streaming for i in chat.conversation.items):
            await asyncio.sleep(0.01)
        await chat.stop(grace=3.0)
        await running
        assert chat.conversation.turn_state == "canceled"
    # history, read again over a new connection
    async with Client(config(embedded.agent_url, tmp_path, binding="grpc")) as client:
        again = Chat(client)
        await again.open(sid)
        assert again.conversation.turn_invocations()[:2] == [first, second]


async def test_subscribe_to_a_running_turn_over_grpc(embedded, tmp_path):
    async with Client(config(embedded.agent_url, tmp_path, binding="grpc")) as client:
        chat = Chat(client)
        await chat.open(None)
        running = asyncio.ensure_future(chat.send("tell me a long story " * 10))
        while not any(i.kind is ItemKind.MESSAGE and i.role == "agent" and i.text for i in chat.conversation.items):
            await asyncio.sleep(0.01)
        task_id = chat.conversation.items[0].task_id
        async with Client(config(embedded.agent_url, tmp_path / "other", binding="grpc")) as other:
            states = [
                e.body.get("status", {}).get("state")
                async for e in other.subscribe(task_id)
                if e.kind in (EventKind.TASK, EventKind.STATUS)
            ]
        await running
        assert states[-1] == "TASK_STATE_COMPLETED"
        # a finished task has nothing more to stream: the A2A error, as over JSON-RPC
        async with Client(config(embedded.agent_url, tmp_path / "other", binding="grpc")) as other:
            events = [e async for e in other.subscribe(task_id)]
        assert [e.kind for e in events] == [EventKind.ERROR] and events[0].body["code"] == -32004


async def test_the_token_is_checked_on_grpc_too(embedded, tmp_path):
    async with Client(config(embedded.agent_url, tmp_path, binding="grpc")) as client:
        await client.connect()  # the card is public
    for token in (None, "not-the-token"):
        async with Client(config(embedded.agent_url, tmp_path, token=token, binding="grpc")) as client:
            client.capabilities = None
            caps_card = await client.fetch_card()
            assert caps_card["securitySchemes"]
            await client.connect()
            with pytest.raises(HTTPStatusFailed) as refused:
                await client.get_task("anything")
            assert refused.value.status == 401 and "authorization: Bearer" in str(refused.value)
            assert "the agent card asks for bearer" in str(refused.value)
            with pytest.raises(HTTPStatusFailed):
                async for _ in client.stream(client.build_message("hi", session_id=None)):
                    pass
    async with Client(config(embedded.agent_url, tmp_path, binding="grpc", user_id="a/b")) as client:
        with pytest.raises(RpcError) as bad_user:
            await client.get_task("anything")
        assert bad_user.value.code == -32602 and "invalid user id" in str(bad_user.value)


async def test_a_large_file_goes_over_grpc_both_ways(embedded, tmp_path):
    """grpcio takes 4 MB in by default; a turn may carry 10 MB of inline files."""
    from rewindtui.a2a.parts import part_bytes, part_info
    from rewindtui.client.attachments import FileAttachment

    payload = bytes(range(256)) * (6 * 1024 * 1024 // 256)  # 6 MB
    async with Client(config(embedded.agent_url, tmp_path, binding="grpc")) as client:
        chat = Chat(client)
        await chat.open(None)
        await chat.send(
            "a big file", [FileAttachment(name="big.bin", media_type="application/octet-stream", data=payload)]
        )
        assert chat.conversation.turn_state == "completed"
        task_id = next(i.task_id for i in chat.conversation.items if i.role == "user")
        task = await client.get_task(task_id)  # and back: the stored task holds it
        user = next(m for m in task["history"] if m["role"] == "ROLE_USER")
        (file_part,) = [p for p in user["parts"] if part_info(p).kind == "file"]
        assert part_bytes(file_part) == payload
