"""A server that lies: an A2A 1.0 agent (a2a-sdk's own card routes and card type) whose JSON-RPC
endpoint and kagent-style REST routes answer wrongly on purpose, and counts every request.

Shapes mirror a2a-sdk 1.x: the card comes from ``a2a.server.routes.create_agent_card_routes``; the
JSON-RPC answers are what ``a2a.server.routes.jsonrpc_dispatcher`` sends for
``SendStreamingMessage`` (SSE ``data:`` frames of ``{"jsonrpc", "id", "result": {"task"|...}}``),
``GetTask`` and ``ListTasks`` (``{"tasks", "nextPageToken"}``). The REST routes mirror our
embedded server's ``server/rest.py`` (``GET /api/sessions/{id}``, ``GET /api/sessions/{id}/tasks``
with ``limit``/``before`` and the envelope's ``next_page_token``). What they answer is set per test
(:class:`Lies`); the bodies are written as text, so nesting can exceed any parser's limit.
"""

from __future__ import annotations

import asyncio
import json
import uuid
from collections.abc import AsyncIterator
from dataclasses import dataclass, field

from a2a.server.routes import create_agent_card_routes
from a2a.types import a2a_pb2 as pb
from google.protobuf import struct_pb2
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route

EXTENSION_URI = "urn:rewindtui:ext:rewind:v1"


def deep_json(levels: int, leaf: str = '"bottom"') -> str:
    """An object nested ``levels`` deep, as text (``{"a": {"a": ... "bottom" ...}}``)."""
    return '{"a":' * levels + leaf + "}" * levels


@dataclass
class Lies:
    """What the server answers; every field is text spliced into a JSON body."""

    #: the value of the agent's data part (any JSON text)
    data: str = '{"ok": true}'
    #: how many parts the agent message carries (each one data part)
    parts: int = 1
    #: REST: the next_page_token of every page, and whether pages after the first carry tasks
    page_token: str | None = None
    pages_carry_data: bool = False
    #: ListTasks: its nextPageToken on every page
    list_token: str | None = None
    #: pad GetTask's answer to this many bytes
    pad: int = 0
    #: seconds between the bytes of GetTask's answer (a trickle)
    trickle: float = 0.0
    #: the rewind extension's ``api`` param (None: this server's own /api)
    api: str | None = None
    #: answer a turn with a 307 to this URL
    redirect_turn_to: str | None = None
    #: reattach: ListTasks and GetTask answer these tasks (JSON text), SubscribeToTask these
    #: ``result`` bodies as SSE frames (a2a-sdk's ``ActiveTask.subscribe`` taps the queue, then
    #: reads the task: a chunk can come in both)
    listed: str | None = None
    got: str | None = None
    subscribe_frames: list[str] = field(default_factory=list)
    #: the card advertises the rewind extension and its REST api
    rest: bool = True
    #: answer a turn with a body this many bytes long, sent in 64 KB pieces: ``sse_line`` one
    #: ``data:`` line without an end, ``sse_lines`` an event of endless 1 KB ``data:`` lines,
    #: ``error`` an HTTP 500 body, ``plain`` a 200 ``application/json`` body (0: no such answer)
    huge_turn: str = ""
    huge_bytes: int = 0
    #: how many bytes of the huge answer the server got to send before the client hung up
    sent: list[int] = field(default_factory=lambda: [0])
    requests: list[str] = field(default_factory=list)


def _task(task_id: str, context_id: str, lies: Lies, text: str = "answer") -> str:
    parts = ",".join([f'{{"data": {lies.data}}}'] * lies.parts)
    agent = f'{{"role": "ROLE_AGENT", "messageId": "{uuid.uuid4()}", "parts": [{{"text": "{text}"}}, {parts}]}}'
    user = f'{{"role": "ROLE_USER", "messageId": "{uuid.uuid4()}", "parts": [{{"text": "question"}}]}}'
    return (
        f'{{"id": "{task_id}", "contextId": "{context_id}", '
        f'"status": {{"state": "TASK_STATE_COMPLETED", "timestamp": "2026-01-01T00:00:00Z"}}, '
        f'"history": [{user}, {agent}], "metadata": {{"kagent_invocation_id": "e-{task_id}"}}}}'
    )


def _huge(lies: Lies) -> Response:
    """One answer of ``lies.huge_bytes`` bytes as ``lies.huge_turn`` says, counted as it is sent
    (the server stops when the client hangs up: the count is what the client let through)."""
    piece = 64 * 1024
    kind = lies.huge_turn
    if kind == "sse_lines":
        line = b"data: " + b"x" * 1017 + b"\n"
        head, body = b"", line * (piece // len(line))
    else:
        head, body = (b"data: " if kind == "sse_line" else b'{"a": "'), b"x" * piece

    async def pieces() -> AsyncIterator[bytes]:
        yield head
        while lies.sent[0] < lies.huge_bytes:
            lies.sent[0] += len(body)
            yield body
            await asyncio.sleep(0)

    media = "text/event-stream" if kind.startswith("sse") else "application/json"
    return StreamingResponse(pieces(), status_code=500 if kind == "error" else 200, media_type=media)


def hostile_app(url: str, lies: Lies) -> Starlette:
    params = struct_pb2.Struct()
    params.update({"rewind": ["a2a", "rest"], "fork": True, "api": lies.api or url + "/api"})
    card = pb.AgentCard(
        name="liar",
        description="answers wrongly on purpose (test server)",
        version="1",
        supported_interfaces=[pb.AgentInterface(url=url + "/", protocol_binding="JSONRPC", protocol_version="1.0")],
        capabilities=pb.AgentCapabilities(
            streaming=True, extensions=[pb.AgentExtension(uri=EXTENSION_URI, params=params)] if lies.rest else []
        ),
        default_input_modes=["text"],
        default_output_modes=["text"],
        skills=[pb.AgentSkill(id="lie", name="lie", description="lies", tags=["lie"])],
    )

    async def rpc(request: Request) -> Response:
        body = json.loads(await request.body())
        lies.requests.append(f"rpc {body.get('method')}")
        rid = json.dumps(body.get("id"))
        method = body.get("method")
        params = body.get("params") or {}
        if lies.redirect_turn_to and method == "SendStreamingMessage":
            return Response(status_code=307, headers={"location": lies.redirect_turn_to})
        if method == "SendStreamingMessage" and lies.huge_turn:
            return _huge(lies)
        if method == "SendStreamingMessage":
            context = params.get("message", {}).get("contextId") or "ctx-1"
            frame = f'{{"jsonrpc": "2.0", "id": {rid}, "result": {{"task": {_task("t-live", context, lies)}}}}}'
            frame += " " * max(0, lies.pad - len(frame))

            async def frames() -> AsyncIterator[bytes]:
                yield f"data: {frame}\n\n".encode()

            return StreamingResponse(frames(), media_type="text/event-stream")
        if method == "SubscribeToTask":

            async def resumed() -> AsyncIterator[bytes]:
                for result in lies.subscribe_frames:
                    yield f'data: {{"jsonrpc": "2.0", "id": {rid}, "result": {result}}}\n\n'.encode()

            return StreamingResponse(resumed(), media_type="text/event-stream")
        if method == "GetTask" and lies.got:
            return Response(f'{{"jsonrpc": "2.0", "id": {rid}, "result": {lies.got}}}', media_type="application/json")
        if method == "ListTasks" and lies.listed:
            result = f'{{"tasks": [{lies.listed}], "nextPageToken": "", "pageSize": 1, "totalSize": 1}}'
            return Response(f'{{"jsonrpc": "2.0", "id": {rid}, "result": {result}}}', media_type="application/json")
        if method == "GetTask":
            text = f'{{"jsonrpc": "2.0", "id": {rid}, "result": {_task(params.get("id", "t"), "ctx-1", lies)}}}'
            text += " " * max(0, lies.pad - len(text))
            if lies.trickle:

                async def trickle() -> AsyncIterator[bytes]:
                    for char in text:
                        await asyncio.sleep(lies.trickle)
                        yield char.encode()

                return StreamingResponse(trickle(), media_type="application/json")
            return Response(text, media_type="application/json")
        if method == "ListTasks":
            token = json.dumps(lies.list_token or "")
            task = _task(f"t-{len(lies.requests)}", params.get("contextId", "ctx-1"), lies)
            result = f'{{"tasks": [{task}], "nextPageToken": {token}, "pageSize": 1, "totalSize": 1}}'
            return Response(f'{{"jsonrpc": "2.0", "id": {rid}, "result": {result}}}', media_type="application/json")
        return JSONResponse({"jsonrpc": "2.0", "id": body.get("id"), "error": {"code": -32601, "message": "no"}})

    async def session(request: Request) -> Response:
        lies.requests.append(f"GET {request.url.path}")
        sid = request.path_params["sid"]
        return JSONResponse({"error": False, "data": {"id": sid, "name": "s", "user_id": "alice"}})

    async def sessions(request: Request) -> Response:
        lies.requests.append(f"{request.method} {request.url.path}")
        return JSONResponse({"error": False, "data": [{"id": "ctx-1", "name": "s", "user_id": "alice"}]})

    async def tasks(request: Request) -> Response:
        lies.requests.append(f"GET {request.url.path}?{request.url.query}")
        sid = request.path_params["sid"]
        first = "before" not in request.query_params
        body = ""
        if first or lies.pages_carry_data:
            body = _task(f"t-{len(lies.requests)}", sid, lies)
        token = json.dumps(lies.page_token)
        return Response(
            f'{{"error": false, "data": [{body}], "next_page_token": {token}}}', media_type="application/json"
        )

    return Starlette(
        routes=[
            *create_agent_card_routes(card),
            Route("/", rpc, methods=["POST"]),
            Route("/api/sessions", sessions, methods=["GET", "POST"]),
            Route("/api/sessions/{sid}", session),
            Route("/api/sessions/{sid}/tasks", tasks),
        ]
    )
