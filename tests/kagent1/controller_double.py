"""A test double of kagent 1.0's controller, following kagent's own Go and proto sources
(kagent-dev/kagent; each handler names what it mirrors):

- ``proto/kagent/api/v1alpha1/agent_instances.proto`` at 50d7a1250a6b (AgentInstanceService: a
  conversation -- kagent's UI calls it a session -- with ``request_id``-idempotent create, a paged
  list filtered by agent, rename, suspend/resume, delete, shares with READ_ONLY / READ_WRITE
  permission; ``context_id`` equals the instance id, and a fork gets a new one);
- ``proto/kagent/api/v1alpha1/checkpoints.proto`` at 2235f496d86f (CheckpointService:
  CreateCheckpoint and ForkAgentInstance answer ``google.longrunning.Operation``; a Checkpoint has
  ``head_task_id`` and ``history_sequence``); ``go/core/internal/grpcserver/checkpoint.go`` at
  62b1951ae8f5 (Create(instance, request_id), Fork(checkpoint, request_id));
- ``go/core/internal/grpcserver/grpcweb.go`` at 241979a08996 (gRPC-Web on the HTTP port, a leading
  ``/api`` stripped; native gRPC by content type);
- A2A 1.0 at ``POST /agents/{ns}/{name}`` (kagent 1.0's docs; the route itself is not in the
  stored Go sources -- assumed), proxied to a real agent (the embedded server): turns,
  ``ListTasks(contextId)``, checkpoints and forks run its real code. A fork is the embedded
  server's REST fork before the first turn after the checkpoint (new context id, new task ids).

What could not be confirmed from the sources and is assumed here: the operations are polled with
``google.longrunning.Operations/GetOperation``; a checkpoint of a conversation whose head task is
not terminal is refused with FAILED_PRECONDITION; the user is the ``x-user-id`` header (as the
0.10 controller's unsecure authenticator); a share token is sent as ``Authorization: Bearer``; a
READ_ONLY share may read (get, list) but not send (HTTP 403 on a send).
"""

from __future__ import annotations

import json
import threading
import uuid
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from typing import Any

import httpx
from google.longrunning import operations_pb2
from google.protobuf.any_pb2 import Any as AnyPb
from google.protobuf.message import Message
from google.protobuf.timestamp_pb2 import Timestamp
from google.rpc import status_pb2
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, PlainTextResponse, Response, StreamingResponse
from starlette.routing import Route

from rewindtui.kagent1 import grpcweb
from rewindtui.kagent1.gen import kagent1_pb2 as pb

TERMINAL = {"completed", "failed", "canceled", "rejected", "TASK_STATE_COMPLETED", "TASK_STATE_FAILED", "TASK_STATE_CANCELED", "TASK_STATE_REJECTED"}
CODE = {name: number for number, name in grpcweb.CODES.items()}


class Refuse(Exception):
    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


def _now() -> Timestamp:
    ts = Timestamp()
    ts.GetCurrentTime()
    return ts


# every unary method this double serves: path -> (handler, request type)
METHODS: dict[str, tuple[str, type[Message]]] = {
    "kagent.api.v1alpha1.AgentInstanceService/CreateAgentInstance": ("CreateAgentInstance", pb.CreateAgentInstanceRequest),
    "kagent.api.v1alpha1.AgentInstanceService/GetAgentInstance": ("GetAgentInstance", pb.GetAgentInstanceRequest),
    "kagent.api.v1alpha1.AgentInstanceService/ListAgentInstances": ("ListAgentInstances", pb.ListAgentInstancesRequest),
    "kagent.api.v1alpha1.AgentInstanceService/UpdateAgentInstanceName": ("UpdateAgentInstanceName", pb.UpdateAgentInstanceNameRequest),
    "kagent.api.v1alpha1.AgentInstanceService/SuspendAgentInstance": ("SuspendAgentInstance", pb.SuspendAgentInstanceRequest),
    "kagent.api.v1alpha1.AgentInstanceService/ResumeAgentInstance": ("ResumeAgentInstance", pb.ResumeAgentInstanceRequest),
    "kagent.api.v1alpha1.AgentInstanceService/DeleteAgentInstance": ("DeleteAgentInstance", pb.DeleteAgentInstanceRequest),
    "kagent.api.v1alpha1.AgentInstanceService/CreateAgentInstanceShare": ("CreateAgentInstanceShare", pb.CreateAgentInstanceShareRequest),
    "kagent.api.v1alpha1.CheckpointService/CreateCheckpoint": ("CreateCheckpoint", pb.CreateCheckpointRequest),
    "kagent.api.v1alpha1.CheckpointService/GetCheckpoint": ("GetCheckpoint", pb.GetCheckpointRequest),
    "kagent.api.v1alpha1.CheckpointService/ListCheckpoints": ("ListCheckpoints", pb.ListCheckpointsRequest),
    "kagent.api.v1alpha1.CheckpointService/ForkAgentInstance": ("ForkAgentInstance", pb.ForkAgentInstanceRequest),
    "google.longrunning.Operations/GetOperation": ("GetOperation", operations_pb2.GetOperationRequest),
}


@dataclass
class Agent1:
    ref: str  # "ns/name"
    url: str  # the agent's A2A endpoint
    api: str  # the agent's REST API (its store)


@dataclass
class Kagent1Double:
    agents: dict[str, Agent1]
    instances: dict[str, pb.AgentInstance] = field(default_factory=dict)
    owners: dict[str, str] = field(default_factory=dict)  # instance id -> user
    created_by_request: dict[tuple[str, str], str] = field(default_factory=dict)
    checkpoints: dict[str, pb.Checkpoint] = field(default_factory=dict)
    checkpoint_requests: dict[tuple[str, str], str] = field(default_factory=dict)
    fork_requests: dict[tuple[str, str], str] = field(default_factory=dict)
    operations: dict[str, operations_pb2.Operation] = field(default_factory=dict)
    shares: dict[str, tuple[str, int]] = field(default_factory=dict)  # token -> (instance, permission)
    calls: list[str] = field(default_factory=list)
    failures: dict[str, tuple[str, str]] = field(default_factory=dict)
    #: fault injection: the next fork operation fails with this message
    fail_next_fork: str | None = None
    #: fault injection: the next created instance ends FAILED with this (reason, message)
    fail_next_create: tuple[str, str] | None = None
    #: operations stay pending for this many GetOperation polls (a long-running operation)
    polls_before_done: int = 1
    _pending: dict[str, tuple[int, Callable[[], Any]]] = field(default_factory=dict)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    # -- helpers ---------------------------------------------------------------------------------
    def _user(self, headers: dict[str, str]) -> tuple[str, str | None]:
        """(the user, the share token if one was sent)."""
        auth = headers.get("authorization", "")
        token = auth[7:] if auth.lower().startswith("bearer ") else None
        return headers.get("x-user-id") or "admin@kagent.dev", token

    def _visible(self, instance_id: str, user: str, token: str | None) -> pb.AgentInstance:
        inst = self.instances.get(instance_id)
        if inst is None or inst.state == pb.AGENT_INSTANCE_STATE_DELETED:
            raise Refuse("NOT_FOUND", f"agent instance {instance_id} not found")
        if self.owners.get(instance_id) == user:
            return inst
        if token and self.shares.get(token, ("", 0))[0] == instance_id:
            return inst
        raise Refuse("NOT_FOUND", f"agent instance {instance_id} not found")

    def _owned(self, instance_id: str, user: str) -> pb.AgentInstance:
        inst = self._visible(instance_id, user, None)
        return inst

    async def _tasks(self, context_id: str, user: str) -> list[dict[str, Any]]:
        """The agent's tasks of a context, oldest first (its REST store)."""
        agent = self._agent_of(context_id)
        async with httpx.AsyncClient(timeout=60) as http:
            r = await http.get(f"{agent.api}/sessions/{context_id}/tasks", headers={"X-User-Id": user})
        if r.status_code == 404:
            return []
        r.raise_for_status()
        return r.json().get("data") or []

    def _agent_of(self, instance_id: str) -> Agent1:
        inst = self.instances[instance_id]
        return self.agents[f"{inst.agent.namespace}/{inst.agent.name}"]

    def _operation(self, kind: str, metadata: Message, finish: Callable[[], Message]) -> operations_pb2.Operation:
        """A long-running operation: ``finish`` runs when it is polled to done (it may raise Refuse)."""
        name = f"operations/{kind}/{uuid.uuid4()}"
        meta = AnyPb()
        meta.Pack(metadata)
        op = operations_pb2.Operation(name=name, metadata=meta, done=False)
        self.operations[name] = op
        self._pending[name] = (self.polls_before_done, finish)
        return op

    # -- AgentInstanceService: agent_instances.proto at 50d7a1250a6b -----------------------------
    async def CreateAgentInstance(self, req: pb.CreateAgentInstanceRequest, user: str, token: str | None) -> Message:
        ref = f"{req.agent.namespace}/{req.agent.name}"
        if not req.request_id:
            raise Refuse("INVALID_ARGUMENT", "request_id: value length must be at least 1 characters")
        if ref not in self.agents:
            raise Refuse("NOT_FOUND", f"agent {ref} not found")
        key = (user, req.request_id)
        if key in self.created_by_request:  # idempotent: the same request gives the same instance
            return pb.CreateAgentInstanceResponse(agent_instance=self.instances[self.created_by_request[key]])
        iid = str(uuid.uuid4())
        inst = pb.AgentInstance(
            id=iid, creator=user, agent=req.agent, state=pb.AGENT_INSTANCE_STATE_CREATING,
            operation=pb.AGENT_INSTANCE_OPERATION_CREATE, created_at=_now(), updated_at=_now(), name=req.name, context_id=iid,
        )
        self.instances[iid] = inst
        self.owners[iid] = user
        self.created_by_request[key] = iid
        self._pending[f"instance/{iid}"] = (self.polls_before_done, lambda: None)
        if self.fail_next_create is not None:
            self.failures[iid], self.fail_next_create = self.fail_next_create, None
        return pb.CreateAgentInstanceResponse(agent_instance=inst)

    def _advance_instance(self, inst: pb.AgentInstance) -> None:
        key = f"instance/{inst.id}"
        if key in self._pending:
            left, _ = self._pending[key]
            if left <= 0:
                del self._pending[key]
                inst.state = pb.AGENT_INSTANCE_STATE_READY
                inst.operation = pb.AGENT_INSTANCE_OPERATION_UNSPECIFIED
                if inst.id in self.failures:  # AgentInstance.failure: reason and message
                    reason, message = self.failures.pop(inst.id)
                    inst.state = pb.AGENT_INSTANCE_STATE_FAILED
                    inst.failure.CopyFrom(pb.Failure(reason=reason, message=message))
            else:
                self._pending[key] = (left - 1, lambda: None)

    async def GetAgentInstance(self, req: pb.GetAgentInstanceRequest, user: str, token: str | None) -> Message:
        inst = self._visible(req.agent_instance_id, user, token)
        self._advance_instance(inst)
        return pb.GetAgentInstanceResponse(agent_instance=inst)

    async def ListAgentInstances(self, req: pb.ListAgentInstancesRequest, user: str, token: str | None) -> Message:
        rows = [
            i for i in self.instances.values()
            if self.owners[i.id] == user and i.state != pb.AGENT_INSTANCE_STATE_DELETED
            and (not req.agent.name or (i.agent.namespace, i.agent.name) == (req.agent.namespace, req.agent.name))
        ]
        rows.sort(key=lambda i: (i.created_at.seconds, i.created_at.nanos, i.id), reverse=True)
        start = int(req.page.page_token or 0)
        limit = req.page.limit or 50
        page = rows[start : start + limit]
        token_out = str(start + limit) if start + limit < len(rows) else ""
        return pb.ListAgentInstancesResponse(agent_instances=page, page=pb.PageResponse(next_page_token=token_out))

    async def UpdateAgentInstanceName(self, req: pb.UpdateAgentInstanceNameRequest, user: str, token: str | None) -> Message:
        inst = self._owned(req.agent_instance_id, user)
        inst.name = req.name
        inst.updated_at.CopyFrom(_now())
        return pb.UpdateAgentInstanceNameResponse(agent_instance=inst)

    async def SuspendAgentInstance(self, req: pb.SuspendAgentInstanceRequest, user: str, token: str | None) -> Message:
        inst = self._owned(req.agent_instance_id, user)
        inst.state = pb.AGENT_INSTANCE_STATE_SUSPENDED
        return pb.SuspendAgentInstanceResponse(agent_instance=inst)

    async def ResumeAgentInstance(self, req: pb.ResumeAgentInstanceRequest, user: str, token: str | None) -> Message:
        inst = self._owned(req.agent_instance_id, user)
        if inst.state == pb.AGENT_INSTANCE_STATE_SUSPENDED:
            inst.state = pb.AGENT_INSTANCE_STATE_READY
        return pb.ResumeAgentInstanceResponse(agent_instance=inst)

    async def DeleteAgentInstance(self, req: pb.DeleteAgentInstanceRequest, user: str, token: str | None) -> Message:
        inst = self._owned(req.agent_instance_id, user)
        inst.state = pb.AGENT_INSTANCE_STATE_DELETED
        return pb.DeleteAgentInstanceResponse(agent_instance=inst)

    async def CreateAgentInstanceShare(self, req: pb.CreateAgentInstanceShareRequest, user: str, token: str | None) -> Message:
        self._owned(req.agent_instance_id, user)
        if req.permission == pb.AGENT_INSTANCE_SHARE_PERMISSION_UNSPECIFIED:
            raise Refuse("INVALID_ARGUMENT", "permission: value must not be in list [0]")
        secret = uuid.uuid4().hex
        self.shares[secret] = (req.agent_instance_id, req.permission)
        share = pb.AgentInstanceShare(id=str(uuid.uuid4()), agent_instance_id=req.agent_instance_id, permission=req.permission, created_at=_now())
        return pb.CreateAgentInstanceShareResponse(share=share, token=secret)

    # -- CheckpointService: checkpoints.proto at 2235f496d86f, checkpoint.go at 62b1951ae8f5 ------
    async def CreateCheckpoint(self, req: pb.CreateCheckpointRequest, user: str, token: str | None) -> Message:
        inst = self._owned(req.agent_instance_id, user)
        key = (inst.id, req.request_id)
        if req.request_id and key in self.checkpoint_requests:  # idempotent per request id
            done = self.operations[self.checkpoint_requests[key]]
            return done
        tasks = await self._tasks(inst.context_id, user)
        if not tasks:
            raise Refuse("FAILED_PRECONDITION", "agent instance has no head task to checkpoint")
        head = tasks[-1]
        state = (head.get("status") or {}).get("state")
        if state not in TERMINAL:
            raise Refuse("FAILED_PRECONDITION", f"head task {head.get('id')} is not terminal (state {state})")
        cid = str(uuid.uuid4())
        checkpoint = pb.Checkpoint(
            id=cid, namespace=req.namespace, agent_instance_id=inst.id, head_task_id=head.get("id", ""),
            history_sequence=len(tasks), state=pb.CHECKPOINT_STATE_CREATING, created_at=_now(),
        )
        self.checkpoints[cid] = checkpoint

        def finish() -> Message:
            checkpoint.state = pb.CHECKPOINT_STATE_READY
            return checkpoint

        op = self._operation("checkpoint", pb.CreateCheckpointOperationMetadata(namespace=req.namespace, agent_instance_id=inst.id, checkpoint_id=cid), finish)
        if req.request_id:
            self.checkpoint_requests[key] = op.name
        return op

    async def GetCheckpoint(self, req: pb.GetCheckpointRequest, user: str, token: str | None) -> Message:
        cp = self.checkpoints.get(req.checkpoint_id)
        if cp is None:
            raise Refuse("NOT_FOUND", f"checkpoint {req.checkpoint_id} not found")
        self._owned(cp.agent_instance_id, user)
        return pb.GetCheckpointResponse(checkpoint=cp)

    async def ListCheckpoints(self, req: pb.ListCheckpointsRequest, user: str, token: str | None) -> Message:
        self._owned(req.agent_instance_id, user)
        rows = [c for c in self.checkpoints.values() if c.agent_instance_id == req.agent_instance_id]
        return pb.ListCheckpointsResponse(checkpoints=rows, page=pb.PageResponse())

    async def ForkAgentInstance(self, req: pb.ForkAgentInstanceRequest, user: str, token: str | None) -> Message:
        cp = self.checkpoints.get(req.checkpoint_id)
        if cp is None:
            raise Refuse("NOT_FOUND", f"checkpoint {req.checkpoint_id} not found")
        source = self._owned(cp.agent_instance_id, user)
        key = (cp.id, req.request_id)
        if req.request_id and key in self.fork_requests:
            return self.operations[self.fork_requests[key]]
        failure = self.fail_next_fork
        self.fail_next_fork = None
        tasks = await self._tasks(source.context_id, user)
        agent = self._agent_of(source.id)
        fork_id: str | None = None
        if failure is None:
            if cp.history_sequence >= len(tasks):
                failure = "the checkpoint is the conversation's head: nothing to fork away (not modeled by this double)"
            else:
                after = tasks[cp.history_sequence]
                invocation = (after.get("metadata") or {}).get("adk_invocation_id") or (after.get("metadata") or {}).get("kagent_invocation_id")
                async with httpx.AsyncClient(timeout=60) as http:
                    r = await http.post(
                        f"{agent.api}/sessions/{source.context_id}/fork",
                        json={"rewind_before_invocation_id": invocation}, headers={"X-User-Id": user},
                    )
                if r.status_code >= 400:
                    failure = f"the agent could not fork: HTTP {r.status_code} {r.text[:200]}"
                else:
                    fork_id = r.json()["data"]["id"]

        def finish() -> Message:
            if failure is not None:
                raise Refuse("ABORTED", failure)
            assert fork_id is not None
            inst = pb.AgentInstance(
                id=fork_id, creator=user, agent=source.agent, state=pb.AGENT_INSTANCE_STATE_READY,
                created_at=_now(), updated_at=_now(), name=source.name, context_id=fork_id,
            )
            self.instances[fork_id] = inst
            self.owners[fork_id] = user
            return inst

        op = self._operation("fork", pb.ForkAgentInstanceOperationMetadata(namespace=req.namespace, checkpoint_id=cp.id, agent_instance_id=fork_id or ""), finish)
        if req.request_id:
            self.fork_requests[key] = op.name
        return op

    # -- google.longrunning.Operations (assumed) -------------------------------------------------
    async def GetOperation(self, req: operations_pb2.GetOperationRequest, user: str, token: str | None) -> Message:
        op = self.operations.get(req.name)
        if op is None:
            raise Refuse("NOT_FOUND", f"operation {req.name} not found")
        if req.name in self._pending:
            left, finish = self._pending[req.name]
            if left > 0:
                self._pending[req.name] = (left - 1, finish)
                return op
            del self._pending[req.name]
            op.done = True
            try:
                result = finish()
            except Refuse as exc:
                op.error.CopyFrom(status_pb2.Status(code=CODE[exc.code], message=exc.message))
            else:
                op.response.Pack(result)
        return op

    # -- dispatch --------------------------------------------------------------------------------

    async def dispatch(self, path: str, body: bytes, headers: dict[str, str]) -> bytes:
        """One unary call: the answer's bytes, or Refuse."""
        entry = METHODS.get(path.strip("/"))
        if entry is None:
            raise Refuse("UNIMPLEMENTED", f"unknown method {path}")
        name, request_type = entry
        self.calls.append(name)
        user, token = self._user(headers)
        answer = await getattr(self, name)(request_type.FromString(body), user, token)
        return answer.SerializeToString()

    async def grpc_web(self, request: Request) -> Response:
        """grpcweb.go HandlerOr: gRPC-Web by content type, ``/api`` trimmed."""
        if not request.headers.get("content-type", "").startswith("application/grpc-web"):
            return PlainTextResponse("404 page not found\n", status_code=404)
        path = request.url.path.removeprefix("/api")
        reply = grpcweb.parse(await request.body())
        headers = {k.lower(): v for k, v in request.headers.items()}
        try:
            answer = await self.dispatch(path, reply.messages[0] if reply.messages else b"", headers)
        except Refuse as exc:
            body = grpcweb.trailers(CODE[exc.code], exc.message)
        else:
            body = grpcweb.frame(answer) + grpcweb.trailers(0)
        return Response(body, media_type=grpcweb.CONTENT_TYPE)

    # -- A2A 1.0 at /agents/{ns}/{name} ----------------------------------------------------------
    async def a2a(self, request: Request) -> Response:
        ref = f"{request.path_params['namespace']}/{request.path_params['name']}"
        agent = self.agents.get(ref)
        if agent is None:
            return PlainTextResponse(f"agent {ref} not found\n", status_code=404)
        headers = {k.lower(): v for k, v in request.headers.items()}
        user, token = self._user(headers)
        if request.method == "GET":
            async with httpx.AsyncClient(timeout=60) as http:
                card = (await http.get(agent.url.rstrip("/") + "/.well-known/agent-card.json")).json()
            here = str(request.url).split(".well-known/")[0].rstrip("/")
            for iface in card.get("supportedInterfaces") or []:
                iface["url"] = here
            card["url"] = here
            caps = card.setdefault("capabilities", {})
            caps["extensions"] = [e for e in caps.get("extensions") or [] if not str(e.get("uri", "")).startswith("urn:rewindtui:")]
            return JSONResponse(card)
        body = await request.body()
        try:
            rpc = json.loads(body)
        except ValueError:
            rpc = {}
        params = rpc.get("params") or {}
        context = (params.get("message") or {}).get("contextId") or params.get("contextId")
        method = rpc.get("method", "")
        if isinstance(context, str) and context:
            inst = self.instances.get(context)
            if inst is None or inst.state == pb.AGENT_INSTANCE_STATE_DELETED:
                return JSONResponse({"jsonrpc": "2.0", "id": rpc.get("id"), "error": {"code": -32001, "message": f"agent instance {context} not found"}})
            if self.owners.get(context) != user:
                share = self.shares.get(token or "")
                if share is None or share[0] != context:
                    return PlainTextResponse("permission denied\n", status_code=403)
                if share[1] == pb.AGENT_INSTANCE_SHARE_PERMISSION_READ_ONLY and method not in ("GetTask", "ListTasks", "SubscribeToTask"):
                    return PlainTextResponse("permission denied: a read-only share may not send\n", status_code=403)
                user = self.owners[context]
            if inst.state == pb.AGENT_INSTANCE_STATE_SUSPENDED and method.startswith("Send"):
                return JSONResponse({"jsonrpc": "2.0", "id": rpc.get("id"), "error": {"code": -32603, "message": "agent instance is suspended"}})
        forward = {k: v for k, v in request.headers.items() if k.lower() in ("content-type", "accept", "a2a-version")}
        forward["X-User-Id"] = user
        http = httpx.AsyncClient(timeout=httpx.Timeout(60.0, read=None))
        upstream = http.build_request("POST", agent.url, content=body, headers=forward)
        response = await http.send(upstream, stream=True)

        async def relay() -> AsyncIterator[bytes]:
            try:
                async for chunk in response.aiter_raw():
                    yield chunk
            finally:
                await response.aclose()
                await http.aclose()

        kept = {k: v for k, v in response.headers.items() if k.lower() in ("content-type", "cache-control")}
        return StreamingResponse(relay(), status_code=response.status_code, headers=kept)

    def app(self) -> Starlette:
        routes = [
            Route("/agents/{namespace}/{name}", self.a2a, methods=["GET", "POST"]),
            Route("/agents/{namespace}/{name}/", self.a2a, methods=["GET", "POST"]),
            Route("/agents/{namespace}/{name}/.well-known/agent-card.json", self.a2a, methods=["GET"]),
            Route("/api/{service}/{method}", self.grpc_web, methods=["POST"]),
            Route("/{service}/{method}", self.grpc_web, methods=["POST"]),
        ]
        return Starlette(routes=routes)


class NativeGrpc:
    """The same services over native gRPC (grpcweb.go's HandlerOr sends ``application/grpc`` on
    HTTP/2 to the gRPC server itself), on a loopback port. grpcio's threaded server (grpc.aio
    wants one event loop per process, and the test's client has one): each call runs the
    double's handler in an event loop of its own."""

    def __init__(self, double: Kagent1Double) -> None:
        self.double = double
        self.port = 0
        self._server: Any = None

    def start(self) -> NativeGrpc:
        from concurrent.futures import ThreadPoolExecutor

        import grpc

        server = grpc.server(ThreadPoolExecutor(max_workers=4))
        services: dict[str, dict[str, Any]] = {}
        for path in METHODS:
            service, method = path.split("/")
            services.setdefault(service, {})[method] = grpc.unary_unary_rpc_method_handler(self._handler(path))
        for service, handlers in services.items():
            server.add_generic_rpc_handlers((grpc.method_handlers_generic_handler(service, handlers),))
        self.port = server.add_insecure_port("127.0.0.1:0")
        server.start()
        self._server = server
        return self

    def _handler(self, path: str) -> Callable[..., Any]:
        import asyncio

        import grpc

        def handle(request: bytes, context: Any) -> bytes:
            headers = {k.lower(): v for k, v in context.invocation_metadata()}
            try:
                with self.double._lock:  # one call at a time, as the gRPC-Web side's single loop does
                    return asyncio.run(self.double.dispatch(path, request, headers))
            except Refuse as exc:
                context.abort(grpc.StatusCode[exc.code], exc.message)
                raise  # abort raises; never reached

        return handle

    def stop(self) -> None:
        if self._server is not None:
            self._server.stop(None).wait(30)

    def __enter__(self) -> NativeGrpc:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
