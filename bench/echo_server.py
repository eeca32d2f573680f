"""A bare a2a-sdk echo agent: the yardstick for conformance (TCK) and throughput.

Built only on a2a-sdk's own server pieces -- ``DefaultRequestHandler`` (its v2 handler),
an ``AgentExecutor``, ``InMemoryTaskStore``, ``create_jsonrpc_routes`` and
``create_agent_card_routes`` -- the way a2a-sdk's samples build a server, with the same
dialects on one endpoint as rewindtui's embedded server (A2A 1.0 plus the 0.3 compat
adapter). No ADK, no storage, no rewind: each turn echoes the user's text.

A turn streams what an a2a-sdk agent usually streams: the Task (``submitted``), ``working``,
the answer in ``chunks`` artifact updates, then ``completed``.

    python bench/echo_server.py [--host 127.0.0.1] [--port 0]

prints ``serving on http://HOST:PORT`` (the TCK's ``--sut-url`` / ``--sut-host``) once it
accepts connections. ``build_app(base_url)`` gives the ASGI app for in-process use.
"""

from __future__ import annotations

import argparse
import asyncio
import socket

import uvicorn
from a2a.helpers.proto_helpers import new_task_from_user_message, new_text_message
from a2a.server.agent_execution import AgentExecutor, RequestContext
from a2a.server.events import EventQueue
from a2a.server.request_handlers import DefaultRequestHandler
from a2a.server.routes.agent_card_routes import create_agent_card_routes
from a2a.server.routes.jsonrpc_routes import create_jsonrpc_routes
from a2a.server.tasks import InMemoryTaskStore, TaskUpdater
from a2a.types import a2a_pb2 as pb
from starlette.applications import Starlette

AGENT_PATH = "/"
CHUNKS = 4


class EchoExecutor(AgentExecutor):
    """Echoes the user's text back, streamed in ``CHUNKS`` artifact chunks."""

    async def execute(self, context: RequestContext, event_queue: EventQueue) -> None:
        assert context.message is not None
        task = context.current_task or new_task_from_user_message(context.message)
        await event_queue.enqueue_event(task)
        updater = TaskUpdater(event_queue, task.id, task.context_id)
        await updater.start_work()
        text = "You said: " + context.get_user_input()
        step = max(1, len(text) // CHUNKS)
        pieces = [text[i : i + step] for i in range(0, len(text), step)]
        artifact_id = "answer"
        for index, piece in enumerate(pieces):
            await updater.add_artifact(
                [pb.Part(text=piece)],
                artifact_id=artifact_id,
                append=index > 0,
                last_chunk=index == len(pieces) - 1,
            )
        await updater.complete(new_text_message(text, context_id=task.context_id, task_id=task.id))

    async def cancel(self, context: RequestContext, event_queue: EventQueue) -> None:
        assert context.task_id is not None and context.context_id is not None
        await TaskUpdater(event_queue, context.task_id, context.context_id).cancel()


def agent_card(base_url: str) -> pb.AgentCard:
    url = base_url.rstrip("/") + AGENT_PATH
    return pb.AgentCard(
        name="echo",
        description="a2a-sdk echo agent (benchmark and conformance yardstick)",
        version="1.0.0",
        supported_interfaces=[
            pb.AgentInterface(url=url, protocol_binding="JSONRPC", protocol_version="1.0"),
            pb.AgentInterface(url=url, protocol_binding="JSONRPC", protocol_version="0.3.0"),
        ],
        capabilities=pb.AgentCapabilities(streaming=True, push_notifications=False),
        default_input_modes=["text"],
        default_output_modes=["text"],
        skills=[pb.AgentSkill(id="echo", name="echo", description="Echoes your text", tags=["echo"])],
    )


def build_app(base_url: str) -> Starlette:
    card = agent_card(base_url)
    handler = DefaultRequestHandler(agent_executor=EchoExecutor(), task_store=InMemoryTaskStore(), agent_card=card)
    routes = create_jsonrpc_routes(handler, AGENT_PATH, enable_v0_3_compat=True)
    routes += create_agent_card_routes(card)
    return Starlette(routes=routes)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=0)
    args = parser.parse_args(argv)
    # IPPROTO_TCP named, as the embedded server's (uvicorn_server.bind_socket): asyncio sets
    # TCP_NODELAY only on accepted sockets whose protocol says TCP
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind((args.host, args.port))
    sock.listen(128)
    base_url = f"http://{args.host}:{sock.getsockname()[1]}"

    class Server(uvicorn.Server):
        async def startup(self, sockets: list[socket.socket] | None = None) -> None:
            await super().startup(sockets=sockets)
            print(f"serving on {base_url}", flush=True)

    config = uvicorn.Config(build_app(base_url), log_level="warning", access_log=False, loop="asyncio")
    asyncio.run(Server(config).serve(sockets=[sock]))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
