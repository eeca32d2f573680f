"""kagent 1.0's controller: conversations ("sessions" in kagent's UI: ``AgentInstance``),
checkpoints and forks, over gRPC-Web on the controller's HTTP port (``/api/<package>.<Service>/
<Method>``) or native gRPC (``grpc://host:port``; needs the ``kagent1`` extra's grpcio).

Messages are rewindtui's own generated ones (``gen/``, from ``proto/kagent1.proto``). Long-running
operations (a checkpoint, a fork) are polled with ``google.longrunning.Operations/GetOperation``
until done; a failed one raises :class:`OperationFailed` with the server's reason.
"""

from __future__ import annotations

import asyncio
import time
import uuid
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any, TypeVar

import httpx
from google.longrunning import operations_pb2
from google.protobuf.message import Message

from rewindtui.kagent1 import grpcweb
from rewindtui.kagent1.gen import kagent1_pb2 as pb
from rewindtui.kagent1.grpcweb import GrpcError

PACKAGE = "kagent.api.v1alpha1"
INSTANCES = f"{PACKAGE}.AgentInstanceService"
CHECKPOINTS = f"{PACKAGE}.CheckpointService"
OPERATIONS = "google.longrunning.Operations"
USER_HEADER = "x-user-id"  # assumed: the controller's unsecure authenticator, as in 0.10

M = TypeVar("M", bound=Message)

State = pb.AgentInstanceState
READY = pb.AGENT_INSTANCE_STATE_READY
SUSPENDED = pb.AGENT_INSTANCE_STATE_SUSPENDED
CREATING = pb.AGENT_INSTANCE_STATE_CREATING
FAILED = pb.AGENT_INSTANCE_STATE_FAILED


class OperationFailed(Exception):
    """A long-running operation ended with an error (``code``, the server's ``message``)."""

    def __init__(self, what: str, code: str, message: str) -> None:
        super().__init__(f"{what} failed: {message or code}")
        self.code = code
        self.message = message


@dataclass
class Page:
    instances: list[pb.AgentInstance]
    next_page_token: str


class Kagent1Controller:
    """``Kagent1Controller(url)``: ``url`` is the controller's HTTP base (gRPC-Web under ``/api``)
    or ``grpc://host:port`` (native gRPC)."""

    def __init__(
        self,
        url: str,
        *,
        user_id: str | None = None,
        http: httpx.AsyncClient | None = None,
        headers: dict[str, str] | None = None,
        share_token: str | None = None,
    ) -> None:
        self.url = url.rstrip("/")
        self.native = self.url.startswith("grpc://")
        self.metadata: dict[str, str] = {k.lower(): v for k, v in (headers or {}).items()}
        if user_id:
            self.metadata[USER_HEADER] = user_id
        if share_token:
            self.metadata["authorization"] = f"Bearer {share_token}"  # assumed: a share token is a bearer credential
        self._own_http = http is None
        self._http = http or httpx.AsyncClient(timeout=httpx.Timeout(60.0))
        self._channel: Any = None
        #: what the last operations cost: (kind, seconds, polls), newest last
        self.costs: list[tuple[str, float, int]] = []

    async def aclose(self) -> None:
        if self._own_http:
            await self._http.aclose()
        if self._channel is not None:
            await self._channel.close()

    async def __aenter__(self) -> Kagent1Controller:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    # -- one call --------------------------------------------------------------------------------
    async def call(self, service: str, method: str, request: Message, answer: type[M]) -> M:
        if self.native:
            return await self._call_native(service, method, request, answer)
        path = f"{self.url}/api/{service}/{method}"
        headers = {**grpcweb.HEADERS, **self.metadata}
        try:
            response = await self._http.post(path, content=grpcweb.frame(request.SerializeToString()), headers=headers)
        except httpx.TransportError as exc:
            raise GrpcError("UNAVAILABLE", f"cannot reach the kagent controller at {self.url}: {exc}") from None
        if response.status_code != 200 and "grpc-status" not in {k.lower() for k in response.headers}:
            raise GrpcError("UNIMPLEMENTED" if response.status_code == 404 else "UNKNOWN", f"HTTP {response.status_code} from {path}")
        body = grpcweb.check(grpcweb.parse(response.content, dict(response.headers)))
        return answer.FromString(body)

    async def _call_native(self, service: str, method: str, request: Message, answer: type[M]) -> M:
        import grpc  # the kagent1 extra

        if self._channel is None:
            self._channel = grpc.aio.insecure_channel(self.url.removeprefix("grpc://"))
        rpc = self._channel.unary_unary(
            f"/{service}/{method}", request_serializer=lambda m: m.SerializeToString(), response_deserializer=answer.FromString
        )
        try:
            result: M = await rpc(request, metadata=tuple(self.metadata.items()))
        except grpc.aio.AioRpcError as exc:
            raise GrpcError(exc.code().name, exc.details() or "") from None
        return result

    # -- conversations (AgentInstanceService) ----------------------------------------------------
    async def list_instances(self, agent: str, *, limit: int = 50, page_token: str = "") -> Page:
        ns, _, name = agent.partition("/")
        request = pb.ListAgentInstancesRequest(
            agent=pb.ResourceReference(namespace=ns, name=name), page=pb.PageRequest(limit=limit, page_token=page_token)
        )
        got = await self.call(INSTANCES, "ListAgentInstances", request, pb.ListAgentInstancesResponse)
        return Page(list(got.agent_instances), got.page.next_page_token)

    async def all_instances(self, agent: str, *, limit: int = 50) -> list[pb.AgentInstance]:
        out: list[pb.AgentInstance] = []
        token = ""
        while True:
            page = await self.list_instances(agent, limit=limit, page_token=token)
            out.extend(page.instances)
            token = page.next_page_token
            if not token or not page.instances:
                return out

    async def create_instance(self, agent: str, *, name: str = "", request_id: str | None = None) -> pb.AgentInstance:
        """Create a conversation; ``request_id`` makes a retry return the same one (idempotent)."""
        ns, _, agent_name = agent.partition("/")
        request = pb.CreateAgentInstanceRequest(
            agent=pb.ResourceReference(namespace=ns, name=agent_name), request_id=request_id or str(uuid.uuid4()), name=name
        )
        got = await self.call(INSTANCES, "CreateAgentInstance", request, pb.CreateAgentInstanceResponse)
        return got.agent_instance

    async def get_instance(self, instance_id: str) -> pb.AgentInstance:
        request = pb.GetAgentInstanceRequest(agent_instance_id=instance_id)
        return (await self.call(INSTANCES, "GetAgentInstance", request, pb.GetAgentInstanceResponse)).agent_instance

    async def rename(self, instance_id: str, name: str) -> pb.AgentInstance:
        request = pb.UpdateAgentInstanceNameRequest(agent_instance_id=instance_id, name=name)
        got = await self.call(INSTANCES, "UpdateAgentInstanceName", request, pb.UpdateAgentInstanceNameResponse)
        return got.agent_instance

    async def suspend(self, instance_id: str) -> pb.AgentInstance:
        request = pb.SuspendAgentInstanceRequest(agent_instance_id=instance_id)
        return (await self.call(INSTANCES, "SuspendAgentInstance", request, pb.SuspendAgentInstanceResponse)).agent_instance

    async def resume(self, instance_id: str) -> pb.AgentInstance:
        request = pb.ResumeAgentInstanceRequest(agent_instance_id=instance_id)
        return (await self.call(INSTANCES, "ResumeAgentInstance", request, pb.ResumeAgentInstanceResponse)).agent_instance

    async def delete(self, instance_id: str) -> None:
        request = pb.DeleteAgentInstanceRequest(agent_instance_id=instance_id)
        await self.call(INSTANCES, "DeleteAgentInstance", request, pb.DeleteAgentInstanceResponse)

    async def share(self, instance_id: str, *, read_only: bool) -> str:
        permission = pb.AGENT_INSTANCE_SHARE_PERMISSION_READ_ONLY if read_only else pb.AGENT_INSTANCE_SHARE_PERMISSION_READ_WRITE
        request = pb.CreateAgentInstanceShareRequest(agent_instance_id=instance_id, permission=permission)
        return (await self.call(INSTANCES, "CreateAgentInstanceShare", request, pb.CreateAgentInstanceShareResponse)).token

    async def wait_ready(self, instance_id: str, *, timeout: float = 120.0, progress: Callable[[str], None] | None = None) -> pb.AgentInstance:
        """Wait while a conversation is being created (or resumed); a failed one raises with its reason."""
        return await _poll(
            lambda: self.get_instance(instance_id),
            lambda i: i.state not in (CREATING, pb.AGENT_INSTANCE_STATE_UNSPECIFIED),
            timeout,
            progress,
            "the conversation is being created",
            _instance_failure,
        )

    async def open(self, instance_id: str, *, progress: Callable[[str], None] | None = None) -> pb.AgentInstance:
        """The conversation, ready to talk to: a suspended one is resumed, a creating one waited for."""
        instance = await self.get_instance(instance_id)
        if instance.state == SUSPENDED:
            if progress:
                progress("resuming the suspended conversation")
            instance = await self.resume(instance_id)
        if instance.state != READY:
            instance = await self.wait_ready(instance_id, progress=progress)
        _instance_failure(instance)
        return instance

    # -- checkpoints and forks (CheckpointService, long-running) ---------------------------------
    async def checkpoint(self, namespace: str, instance_id: str, request_id: str) -> pb.Checkpoint:
        """A checkpoint of the conversation at its (terminal) head task; the same ``request_id``
        gives the same checkpoint."""
        request = pb.CreateCheckpointRequest(namespace=namespace, agent_instance_id=instance_id, request_id=request_id)
        return await self._long_running("CreateCheckpoint", request, "checkpoint", pb.Checkpoint())

    async def checkpoints(self, namespace: str, instance_id: str) -> list[pb.Checkpoint]:
        out: list[pb.Checkpoint] = []
        token = ""
        while True:
            request = pb.ListCheckpointsRequest(namespace=namespace, agent_instance_id=instance_id, page=pb.PageRequest(limit=100, page_token=token))
            got = await self.call(CHECKPOINTS, "ListCheckpoints", request, pb.ListCheckpointsResponse)
            out.extend(got.checkpoints)
            token = got.page.next_page_token
            if not token or not got.checkpoints:
                return out

    async def fork(self, namespace: str, checkpoint_id: str, request_id: str) -> pb.AgentInstance:
        """A new conversation from the checkpoint (new context and task ids); the original is kept."""
        request = pb.ForkAgentInstanceRequest(namespace=namespace, checkpoint_id=checkpoint_id, request_id=request_id)
        return await self._long_running("ForkAgentInstance", request, "fork", pb.AgentInstance())

    async def _long_running(self, method: str, request: Message, kind: str, result: M) -> M:
        """Start a CheckpointService operation, wait until it is done, and unpack its result into
        ``result``; its time and polls go to :attr:`costs`."""
        started = time.monotonic()
        op = await self.call(CHECKPOINTS, method, request, operations_pb2.Operation)
        done, polls = await self._wait(op, f"the {kind}")
        self.costs.append((kind, time.monotonic() - started, polls))
        done.response.Unpack(result)
        return result

    async def _wait(self, op: operations_pb2.Operation, what: str, timeout: float = 300.0) -> tuple[operations_pb2.Operation, int]:
        polls = 0

        async def get() -> operations_pb2.Operation:
            nonlocal polls
            polls += 1
            request = operations_pb2.GetOperationRequest(name=op.name)
            return await self.call(OPERATIONS, "GetOperation", request, operations_pb2.Operation)

        if not op.done:
            op = await _poll(get, lambda o: o.done, timeout, None, what, None)
        if op.HasField("error"):
            raise OperationFailed(what, grpcweb.CODES.get(op.error.code, str(op.error.code)), op.error.message)
        return op, polls


def _instance_failure(instance: pb.AgentInstance) -> None:
    if instance.state == FAILED:
        reason = instance.failure.message or instance.failure.reason or "no reason given"
        raise OperationFailed("the conversation", instance.failure.reason or "FAILED", reason)


T = TypeVar("T")


async def _poll(
    get: Callable[[], Awaitable[T]],
    done: Callable[[T], bool],
    timeout: float,
    progress: Callable[[str], None] | None,
    what: str,
    failed: Callable[[T], None] | None,
) -> T:
    deadline = time.monotonic() + timeout
    delay = 0.05
    while True:
        value = await get()
        if failed is not None:
            failed(value)
        if done(value):
            return value
        if time.monotonic() > deadline:
            raise GrpcError("DEADLINE_EXCEEDED", f"{what}: not done after {timeout:.0f} s")
        if progress:
            progress(what)
        await asyncio.sleep(delay)
        delay = min(delay * 2, 1.0)
