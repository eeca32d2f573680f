"""An a2a-sdk server on all three bindings with push notifications, built on a2a-sdk's own classes
(not ours): ``DefaultRequestHandler`` + ``InMemoryTaskStore`` + ``InMemoryPushNotificationConfigStore``
+ ``BasePushNotificationSender`` (a2a-sdk 1.3, ``a2a/server/tasks/``), behind a2a-sdk's
``create_jsonrpc_routes`` (at ``/``, with the 0.3 compat layer), ``create_rest_routes`` (HTTP+JSON,
at ``/rest``) and ``GrpcHandler`` (a ``grpc.aio`` server started in the app's lifespan). Its card
lists the three interfaces in 1.0 and JSON-RPC in 0.3 too.

``full_app(url, only_03=True)``: the same handler answering the 0.3 dialect only on JSON-RPC (as
``a2a_servers.sdk_app(only_03=True)``, plus the 0.3 push-config methods), with a 0.3 card.

The agent is :class:`a2a_servers.EchoExecutor` (``slow`` in the text: a tenth of a second a word).
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import AsyncIterator
from typing import Any

import grpc.aio
import httpx
from a2a.server.request_handlers import DefaultRequestHandler
from a2a.server.request_handlers.grpc_handler import GrpcHandler
from a2a.server.routes import create_agent_card_routes, create_jsonrpc_routes
from a2a.server.routes.rest_routes import create_rest_routes
from a2a.server.tasks.base_push_notification_sender import BasePushNotificationSender
from a2a.server.tasks.inmemory_push_notification_config_store import InMemoryPushNotificationConfigStore
from a2a.server.tasks.inmemory_task_store import InMemoryTaskStore
from a2a.types import a2a_pb2 as pb
from a2a.types import a2a_pb2_grpc
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Mount, Route

from a2a_servers import V03_METHODS, EchoExecutor, card_03

REST_PREFIX = "/rest"
V03_PUSH_METHODS = {
    "tasks/pushNotificationConfig/set",
    "tasks/pushNotificationConfig/get",
    "tasks/pushNotificationConfig/list",
    "tasks/pushNotificationConfig/delete",
}


def full_card(url: str) -> pb.AgentCard:
    return pb.AgentCard(
        name="full-sdk",
        description="an a2a-sdk echo agent on JSON-RPC, HTTP+JSON and gRPC, with push (test server)",
        version="1.0.0",
        supported_interfaces=[
            pb.AgentInterface(url=url, protocol_binding="JSONRPC", protocol_version="1.0"),
            pb.AgentInterface(url=url.rstrip("/") + REST_PREFIX, protocol_binding="HTTP+JSON", protocol_version="1.0"),
            pb.AgentInterface(url=url, protocol_binding="JSONRPC", protocol_version="0.3.0"),
        ],
        capabilities=pb.AgentCapabilities(streaming=True, push_notifications=True),
        default_input_modes=["text"],
        default_output_modes=["text"],
        skills=[pb.AgentSkill(id="echo", name="echo", description="echoes", tags=["echo"])],
    )


def full_app(url: str, *, only_03: bool = False, executor: EchoExecutor | None = None) -> Starlette:
    """``url``: where the app will be reached (for its card). The gRPC port is added to the card
    once the lifespan has started it."""
    card = full_card(url)
    http = httpx.AsyncClient(timeout=10)
    configs = InMemoryPushNotificationConfigStore()
    handler = DefaultRequestHandler(
        agent_executor=executor or EchoExecutor(slow_delay=0.1),
        task_store=InMemoryTaskStore(),
        agent_card=card,
        push_config_store=configs,
        push_sender=BasePushNotificationSender(http, configs),
    )
    (rpc,) = create_jsonrpc_routes(handler, "/", enable_v0_3_compat=True)

    @contextlib.asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        server = grpc.aio.server()
        a2a_pb2_grpc.add_A2AServiceServicer_to_server(GrpcHandler(handler), server)
        port = server.add_insecure_port("127.0.0.1:0")
        await server.start()
        if not only_03:
            card.supported_interfaces.append(
                pb.AgentInterface(url=f"127.0.0.1:{port}", protocol_binding="GRPC", protocol_version="1.0")
            )
        try:
            yield
        finally:
            await server.stop(0.5)
            await http.aclose()

    if only_03:
        data = card_03(url)
        data["name"] = "full-sdk-03"
        data["capabilities"]["pushNotifications"] = True

        async def endpoint_03(request: Request) -> Response:
            try:
                method = json.loads(await request.body()).get("method")
            except (ValueError, AttributeError):
                method = None
            if method not in V03_METHODS | V03_PUSH_METHODS or request.headers.get("A2A-Version"):
                error = {"code": -32601, "message": f"Method not found: {method}"}
                return JSONResponse({"jsonrpc": "2.0", "id": None, "error": error})
            return await rpc.endpoint(request)  # type: ignore[attr-defined]

        async def card_endpoint(request: Request) -> Response:
            return JSONResponse(data)

        routes: list[Any] = [
            Route("/", endpoint_03, methods=["POST"]),
            Route("/.well-known/agent-card.json", card_endpoint),
        ]
        return Starlette(routes=routes, lifespan=lifespan)
    rest = [r for r in create_rest_routes(handler, path_prefix=REST_PREFIX) if not isinstance(r, Mount)]
    return Starlette(routes=[rpc, *rest, *create_agent_card_routes(card)], lifespan=lifespan)
