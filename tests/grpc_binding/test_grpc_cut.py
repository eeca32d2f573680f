"""A gRPC stream cut in the middle of a turn (fault injection: a TCP relay that drops its first
connection once some of the answer has passed): the client reads it as a lost connection, resumes
the turn with ``SubscribeToTask`` on a new connection, and shows what the server holds."""

from __future__ import annotations

import asyncio
import contextlib

import pytest

from kit.servers import embedded_fixture
from rewindtui.chat import Chat
from rewindtui.client.a2a_client import A2AClient, ServerConfig
from rewindtui.client.transports.grpc import GrpcTransport

pytestmark = pytest.mark.timeout(90)


class CuttingRelay:
    """Relays TCP to ``upstream``; the first connection is closed once ``cut_after`` bytes of
    answer have passed (after the HTTP/2 preface and a few stream messages)."""

    def __init__(self, upstream: tuple[str, int], cut_after: int) -> None:
        self.upstream = upstream
        self.cut_after = cut_after
        self.connections = 0
        self.cut = asyncio.Event()
        self.port = 0
        self._server: asyncio.Server | None = None

    async def start(self) -> CuttingRelay:
        self._server = await asyncio.start_server(self._relay, "127.0.0.1", 0)
        self.port = self._server.sockets[0].getsockname()[1]
        return self

    async def stop(self) -> None:
        if self._server is not None:
            self._server.close()
            await self._server.wait_closed()

    async def _relay(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.connections += 1
        first = self.connections == 1
        up_reader, up_writer = await asyncio.open_connection(*self.upstream)

        async def pump(src: asyncio.StreamReader, dst: asyncio.StreamWriter, limit: int | None) -> None:
            passed = 0
            with contextlib.suppress(ConnectionError):
                while data := await src.read(4096):
                    dst.write(data)
                    await dst.drain()
                    passed += len(data)
                    if limit is not None and passed >= limit:
                        self.cut.set()
                        return

        down = asyncio.ensure_future(pump(up_reader, writer, self.cut_after if first else None))
        up = asyncio.ensure_future(pump(reader, up_writer, None))
        await asyncio.wait({down, up}, return_when=asyncio.FIRST_COMPLETED)
        for task in (down, up):
            task.cancel()
        for w in (writer, up_writer):
            w.close()


slow = embedded_fixture("grpc-cut", scope="module", demo_delay=0.1)


async def test_a_cut_grpc_stream_is_resumed(slow, tmp_path):
    async with A2AClient(ServerConfig(url=slow.agent_url, binding="grpc", local_store=tmp_path / "s.db")) as client:
        caps = await client.connect()
        host, port = caps.endpoint.rsplit(":", 1)
        relay = await CuttingRelay((host, int(port)), cut_after=3000).start()
        try:
            # the same binding, reached through the relay (fault injection)
            await client._transport.aclose()
            client._transport = transport = GrpcTransport(f"127.0.0.1:{relay.port}", client.scope, 10)
            resumed: list[str] = []
            subscribe = transport.subscribe
            transport.subscribe = lambda task_id: resumed.append(task_id) or subscribe(task_id)  # type: ignore[method-assign]
            chat = Chat(client)
            await chat.open(None)
            await chat.send("tell me a long story " * 8)
            assert relay.cut.is_set() and relay.connections >= 2  # cut, then a new connection
            assert resumed == [chat.conversation.items[0].task_id]  # SubscribeToTask took the turn up
            assert chat.conversation.turn_state == "completed"
            shown = [(i.role, i.text) for i in chat.conversation.items if i.role in ("user", "agent")]
        finally:
            await relay.stop()
        async with A2AClient(ServerConfig(url=slow.agent_url, local_store=tmp_path / "t.db")) as reader:
            truth = Chat(reader)
            await truth.open(chat.session_id)
            assert [(i.role, i.text) for i in truth.conversation.items if i.role in ("user", "agent")] == shown
