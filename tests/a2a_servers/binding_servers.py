"""a2a-sdk servers that speak both HTTP bindings, send file and data parts back, or offer what
rewindtui cannot use -- built on a2a-sdk's own classes, not ours.

- :func:`both_bindings_app`: ``DefaultRequestHandler`` + ``InMemoryTaskStore`` behind a2a-sdk's
  ``create_jsonrpc_routes`` (at ``/``) and ``create_rest_routes`` (the HTTP+JSON binding, at
  ``/rest``); its card lists both (``order`` says which first). The agent is the echo of
  ``a2a_servers.py``, except that a message carrying file or data parts, or saying ``send me a
  file``, is answered with an artifact of a file part (inline bytes), a file part by URL and a data
  part describing what it received -- the file round trip.
- :func:`card_only_app`: serves just a card (e.g. gRPC only, or one whose rewind extension names
  an ``api`` on another origin), and records every request it gets.
- :class:`Recorder`: an app that records requests (method, path, headers) and answers
  ``{"data": []}``, or redirects when asked to (``/redirect?to=URL``).
"""

from __future__ import annotations

import base64
import uuid
from dataclasses import dataclass, field
from typing import Any

from a2a.helpers.proto_helpers import new_task_from_user_message, new_text_part
from a2a.server.agent_execution.context import RequestContext
from a2a.server.events.event_queue_v2 import EventQueue
from a2a.server.request_handlers import DefaultRequestHandler
from a2a.server.routes import create_agent_card_routes, create_jsonrpc_routes
from a2a.server.routes.rest_routes import create_rest_routes
from a2a.server.tasks.inmemory_task_store import InMemoryTaskStore
from a2a.server.tasks.task_updater import TaskUpdater
from a2a.types import a2a_pb2 as pb
from google.protobuf import struct_pb2
from google.protobuf.json_format import MessageToDict, ParseDict
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, RedirectResponse, Response
from starlette.routing import Mount, Route

from a2a_servers import EchoExecutor

REST_PREFIX = "/rest"
#: What the agent sends back as its own file (inline).
REPORT_BYTES = b"line one\nline two\n" * 40
REPORT_NAME = "report.txt"


class PartsExecutor(EchoExecutor):
    """The echo agent, which also answers files and data with files and data."""

    async def execute(self, context: RequestContext, event_queue: EventQueue) -> None:
        message = context.message
        assert message is not None
        received = [p for p in message.parts if p.WhichOneof("content") in ("raw", "url", "data")]
        text = "".join(p.text for p in message.parts if p.WhichOneof("content") == "text")
        if not received and "send me a file" not in text:
            await super().execute(context, event_queue)
            return
        task = context.current_task or new_task_from_user_message(message)
        if context.current_task is None:
            await event_queue.enqueue_event(task)
        updater = TaskUpdater(event_queue, task.id, task.context_id)
        await updater.start_work()
        summary = []
        for p in received:
            kind = p.WhichOneof("content")
            entry: dict[str, Any] = {"kind": kind, "filename": p.filename, "mediaType": p.media_type}
            if kind == "raw":
                entry["size"] = len(p.raw)
            elif kind == "url":
                entry["url"] = p.url
            else:
                entry["data"] = MessageToDict(p.data)
            summary.append(entry)
        report = pb.Part(raw=REPORT_BYTES, filename=REPORT_NAME, media_type="text/plain")
        linked = pb.Part(url="https://files.example/chart.png", filename="chart.png", media_type="image/png")
        data = pb.Part(data=ParseDict({"received": summary, "count": len(summary)}, struct_pb2.Value()))
        await updater.add_artifact(
            [new_text_part(f"Got {len(summary)} part(s)."), report, linked, data],
            artifact_id=str(uuid.uuid4()),
            name="files",
        )
        await updater.complete()


def card(url: str, order: tuple[str, ...]) -> pb.AgentCard:
    where = {"JSONRPC": url, "HTTP+JSON": url.rstrip("/") + REST_PREFIX}
    return pb.AgentCard(
        name="both-bindings",
        description="an a2a-sdk echo agent on JSON-RPC and HTTP+JSON (test server)",
        version="1.0.0",
        supported_interfaces=[
            pb.AgentInterface(url=where[b], protocol_binding=b, protocol_version="1.0") for b in order
        ],
        capabilities=pb.AgentCapabilities(streaming=True, push_notifications=False),
        default_input_modes=["text", "*/*"],
        default_output_modes=["text", "*/*"],
        skills=[pb.AgentSkill(id="echo", name="echo", description="echoes; answers files with files", tags=["echo"])],
    )


def both_bindings_app(url: str, *, order: tuple[str, ...] = ("JSONRPC", "HTTP+JSON")) -> Starlette:
    agent_card = card(url, order)
    handler = DefaultRequestHandler(
        agent_executor=PartsExecutor(), task_store=InMemoryTaskStore(), agent_card=agent_card
    )
    (rpc,) = create_jsonrpc_routes(handler, "/", enable_v0_3_compat=True)
    rest = [r for r in create_rest_routes(handler, path_prefix=REST_PREFIX) if not isinstance(r, Mount)]
    return Starlette(routes=[rpc, *rest, *create_agent_card_routes(agent_card)])


@dataclass
class Seen:
    method: str
    path: str
    headers: dict[str, str]
    raw_path: str = ""


def _seen(request: Request) -> Seen:
    raw = request.scope.get("raw_path") or request.url.path.encode()
    return Seen(
        request.method, request.url.path, {k.lower(): v for k, v in request.headers.items()}, raw.decode("latin-1")
    )


def card_json_10(
    url: str, *, binding: str = "JSONRPC", extensions: list[dict[str, Any]] | None = None
) -> dict[str, Any]:
    """A plain A2A 1.0 card (JSON) with one interface."""
    return {
        "name": "plain",
        "description": "a card served by a test server",
        "version": "1",
        "supportedInterfaces": [{"url": url, "protocolBinding": binding, "protocolVersion": "1.0"}],
        "capabilities": {"streaming": True, "extensions": extensions or []},
        "defaultInputModes": ["text"],
        "defaultOutputModes": ["text"],
        "skills": [{"id": "s", "name": "s", "description": "d", "tags": []}],
    }


@dataclass
class Recorder:
    """Records what reaches it (this is the "other host" credentials must not reach)."""

    seen: list[Seen] = field(default_factory=list)

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] == "lifespan":
            while True:
                message = await receive()
                if message["type"] == "lifespan.startup":
                    await send({"type": "lifespan.startup.complete"})
                elif message["type"] == "lifespan.shutdown":
                    await send({"type": "lifespan.shutdown.complete"})
                    return
        request = Request(scope, receive)
        self.seen.append(_seen(request))
        to = request.query_params.get("to")
        response: Response = RedirectResponse(to, status_code=307) if to else JSONResponse({"data": []})
        await response(scope, receive, send)


def card_only_app(card_json: dict[str, Any], recorder: Recorder | None = None) -> Starlette:
    async def card_endpoint(request: Request) -> Response:
        if recorder is not None:
            recorder.seen.append(_seen(request))
        return JSONResponse(card_json)

    async def anything(request: Request) -> Response:
        if recorder is not None:
            recorder.seen.append(_seen(request))
        to = request.query_params.get("to")
        if to:
            return RedirectResponse(to, status_code=307)
        return JSONResponse({"data": []})

    return Starlette(
        routes=[
            Route("/.well-known/agent-card.json", card_endpoint),
            Route("/{path:path}", anything, methods=["GET", "POST", "PUT", "DELETE"]),
        ]
    )


def b64(data: bytes) -> str:
    return base64.b64encode(data).decode("ascii")
