"""The server's connections have Nagle's algorithm off. asyncio sets ``TCP_NODELAY`` on accepted
sockets only when their protocol number says TCP, and an accepted socket carries its listening
socket's: the server's listening socket (``uvicorn_server.bind_socket``) made with the default of
0 left Nagle on, and each streamed response's first frame, written right after its headers, waited
for the client's delayed ACK (about 40 ms a turn, on the embedded server and the echo alike)."""

from __future__ import annotations

import asyncio
import socket

from rewindtui.server.process.uvicorn_server import bind_socket


async def _accepted_nodelay(sock: socket.socket) -> int:
    accepted: asyncio.Future[int] = asyncio.get_running_loop().create_future()

    async def on_connection(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        raw = writer.get_extra_info("socket")
        accepted.set_result(raw.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY))
        writer.close()

    server = await asyncio.start_server(on_connection, sock=sock)  # as uvicorn serves sockets=[sock]
    async with server:
        host, port = sock.getsockname()[:2]
        _, writer = await asyncio.open_connection(host, port)
        try:
            return await asyncio.wait_for(accepted, 10)
        finally:
            writer.close()


async def test_connections_accepted_on_the_servers_socket_have_nagle_off() -> None:
    assert await _accepted_nodelay(bind_socket("127.0.0.1", 0)) != 0


async def test_the_check_can_fail_on_a_socket_made_without_the_protocol() -> None:
    plain = socket.socket(socket.AF_INET, socket.SOCK_STREAM)  # what bind_socket made before
    plain.bind(("127.0.0.1", 0))
    plain.listen(8)
    assert await _accepted_nodelay(plain) == 0
