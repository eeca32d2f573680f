"""kagent 1.0's controller as kagent defines it today: ``SessionService`` (sessions, their names,
lifecycle and shares) and ``CheckpointService`` (checkpoints and forks), over gRPC-Web on the
controller's HTTP port (``/api/<package>.<Service>/<Method>``) or native gRPC (``grpc://host:port``;
needs the ``kagent1`` extra's grpcio).

Followed (kagent-dev/kagent): ``docs/protobuf-api.md``@3855fe51 ("Current API cutover":
SessionService, ForkSession and ``session_id`` replace the AgentInstance surface);
``proto/kagent/api/v1alpha1/sessions.proto``@1e2422ff; ``go/core/internal/service/checkpoint/
service.go``@105cc5d7 (a checkpoint and a fork are answered directly: no long-running operation;
FAILED_PRECONDITION with ``google.rpc.ErrorInfo`` reasons); ``go/core/internal/grpcserver/
interceptors.go``@21559195 (the user in ``x-user-id``, a share token in ``X-Share-Token`` beside
the caller's own credentials). The messages are ``gen/`` from ``proto/kagent1.proto``, a copy of
kagent's; CheckpointService's field numbers are unverified (see that file): every failed
checkpoint call says so (:data:`UNVERIFIED`).
"""

from __future__ import annotations

import asyncio
import time
import uuid
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any, TypeVar

import httpx
from google.protobuf.message import DecodeError, Message

from rewindtui.base.tls import default_context
from rewindtui.client.auth import register_secret
from rewindtui.kagent1 import grpcweb, wire
from rewindtui.kagent1.gen import kagent1_pb2 as pb
from rewindtui.kagent1.grpcweb import GrpcError

PACKAGE = "kagent.api.v1alpha1"
SESSIONS = f"{PACKAGE}.SessionService"  # sessions.proto@1e2422ff
CHECKPOINTS = f"{PACKAGE}.CheckpointService"  # grpcserver/checkpoint.go@105cc5d7
USER_HEADER = "x-user-id"  # grpcserver/interceptors.go@21559195 forwardedMetadataKeys
SHARE_HEADER = "x-share-token"  # grpcserver/interceptors.go@21559195: a share rides beside the login
#: google.rpc.ErrorInfo of a refused checkpoint (service/checkpoint/service.go@105cc5d7)
ERROR_DOMAIN = "kagent.dev"
SNAPSHOT_PENDING = "KAGENT_CHECKPOINT_SNAPSHOT_PENDING"  # retry the same request
CONVERSATION_ADVANCED = "KAGENT_CHECKPOINT_CONVERSATION_ADVANCED"  # re-read, choose again

#: CheckpointService's methods: names from kagent's Go sources, field numbers from none
UNVERIFIED_METHODS = (
    "CreateCheckpoint",
    "GetCheckpoint",
    "ListCheckpoints",
    "DeleteCheckpoint",
    "UpdateCheckpointName",
    "ForkSession",
)
UNVERIFIED = (
    "rewindtui's kagent CheckpointService field numbers are unverified (no readable kagent file of the "
    "current API gives them; see docs/kagent.md)"
)

M = TypeVar("M", bound=Message)

State = pb.SessionState
READY = pb.SESSION_STATE_READY
SUSPENDED = pb.SESSION_STATE_SUSPENDED
CREATING = pb.SESSION_STATE_CREATING
FAILED = pb.SESSION_STATE_FAILED
DELETED = pb.SESSION_STATE_DELETED


class OperationFailed(Exception):
    """A session ended FAILED (its ``Failure.reason``, ``Failure.message``)."""

    def __init__(self, what: str, code: str, message: str) -> None:
        super().__init__(f"{what} failed: {message or code}")
        self.code = code
        self.message = message


class CheckpointAdvanced(Exception):
    """``KAGENT_CHECKPOINT_CONVERSATION_ADVANCED``: the session moved past the task the checkpoint
    was asked for. Re-read the session and choose again."""


@dataclass
class Page:
    sessions: list[pb.Session]
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
            self.metadata[SHARE_HEADER] = share_token  # never as a credential (interceptors.go@21559195)
            register_secret(share_token)  # redacted wherever redact() runs: errors, logs, the wire log
        self._own_http = http is None
        self._http = http or httpx.AsyncClient(timeout=httpx.Timeout(60.0), verify=default_context())
        self._channel: Any = None
        #: what checkpoints and forks cost: (kind, seconds, tries), newest last
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
        """One call; recorded in the wire log while one is active (:mod:`rewindtui.kagent1.wire`)."""
        if self.native:
            record = wire.start("gRPC", f"{self.url}/{service}/{method}", self.metadata, request)
        else:
            path = self._web_path(service, method)
            record = wire.start("gRPC-Web", path, {**grpcweb.HEADERS, **self.metadata}, request)
        try:
            result = await self._call(service, method, request, answer)
        except GrpcError as exc:
            if record is not None:
                record.failed(exc)
            raise
        except BaseException as exc:  # cancelled, or a failure below gRPC: the entry still ends
            if record is not None:
                code = "CANCELLED" if isinstance(exc, asyncio.CancelledError) else "UNKNOWN"
                record.failed(GrpcError(code, f"{type(exc).__name__}: {exc}"))
            raise
        if record is not None:
            record.answered(result)
        return result

    async def _call(self, service: str, method: str, request: Message, answer: type[M]) -> M:
        try:
            if self.native:
                return await self._call_native(service, method, request, answer)
            return await self._call_web(service, method, request, answer)
        except GrpcError as exc:
            if service == CHECKPOINTS and exc.code not in ("UNAVAILABLE", "DEADLINE_EXCEEDED", "UNAUTHENTICATED"):
                raise GrpcError(
                    exc.code, f"{exc.message} ({UNVERIFIED})", reason=exc.reason, domain=exc.domain
                ) from None
            raise
        except DecodeError as exc:
            why = f" ({UNVERIFIED})" if service == CHECKPOINTS else ""
            raise GrpcError(
                "DATA_LOSS",
                f"{method}: the controller's answer does not decode as {answer.DESCRIPTOR.full_name}: {exc}{why}",
            ) from None

    def _web_path(self, service: str, method: str) -> str:
        return f"{self.url}/api/{service}/{method}"  # grpcserver/grpcweb.go@241979a0: /api stripped

    async def _call_web(self, service: str, method: str, request: Message, answer: type[M]) -> M:
        path = self._web_path(service, method)
        headers = {**grpcweb.HEADERS, **self.metadata}
        try:
            response = await self._http.post(path, content=grpcweb.frame(request.SerializeToString()), headers=headers)
        except httpx.TransportError as exc:
            raise GrpcError("UNAVAILABLE", f"cannot reach the kagent controller at {self.url}: {exc}") from None
        if response.status_code != 200 and "grpc-status" not in {k.lower() for k in response.headers}:
            code = "UNIMPLEMENTED" if response.status_code == 404 else "UNKNOWN"
            raise GrpcError(code, f"HTTP {response.status_code} from {path}")
        body = grpcweb.check(grpcweb.parse(response.content, dict(response.headers)))
        decoded: M = answer()  # protobuf ships no type hints: Message, so M, reads as Any
        decoded.ParseFromString(body)
        return decoded

    async def _call_native(self, service: str, method: str, request: Message, answer: type[M]) -> M:
        import grpc  # the kagent1 extra

        if self._channel is None:
            self._channel = grpc.aio.insecure_channel(self.url.removeprefix("grpc://"))
        rpc = self._channel.unary_unary(
            f"/{service}/{method}",
            request_serializer=lambda m: m.SerializeToString(),
            response_deserializer=answer.FromString,
        )
        try:
            result: M = await rpc(request, metadata=tuple(self.metadata.items()))
        except grpc.aio.AioRpcError as exc:
            details = dict(exc.trailing_metadata() or ()).get("grpc-status-details-bin", b"")
            reason, domain = grpcweb.error_info(details if isinstance(details, bytes) else b"")
            raise GrpcError(exc.code().name, exc.details() or "", reason=reason, domain=domain) from None
        return result

    # -- SessionService (sessions.proto@1e2422ff) -------------------------------------------------
    async def list_sessions(self, agent: str, *, limit: int = 50, page_token: str = "") -> Page:
        ns, _, name = agent.partition("/")
        request = pb.ListSessionsRequest(
            agent=pb.ResourceReference(namespace=ns, name=name), page=pb.PageRequest(limit=limit, page_token=page_token)
        )
        got = await self.call(SESSIONS, "ListSessions", request, pb.ListSessionsResponse)
        return Page(list(got.sessions), got.page.next_page_token)

    async def all_sessions(self, agent: str, *, limit: int = 50, pages: int = 200) -> list[pb.Session]:
        """Every page (docs/protobuf-api.md@3855fe51: continue until ``next_page_token`` is empty,
        even past an empty page), at most ``pages`` of them."""
        out: list[pb.Session] = []
        token = ""
        for _ in range(pages):
            page = await self.list_sessions(agent, limit=limit, page_token=token)
            out.extend(page.sessions)
            token = page.next_page_token
            if not token:
                break
        return out

    async def create_session(self, agent: str, *, name: str = "", request_id: str | None = None) -> pb.Session:
        """Create a session; ``request_id`` makes a retry return the same one (idempotent)."""
        ns, _, agent_name = agent.partition("/")
        request = pb.CreateSessionRequest(
            agent=pb.ResourceReference(namespace=ns, name=agent_name),
            request_id=request_id or str(uuid.uuid4()),
            name=name,
        )
        return (await self.call(SESSIONS, "CreateSession", request, pb.CreateSessionResponse)).session

    async def get_session(self, session_id: str) -> pb.Session:
        request = pb.GetSessionRequest(session_id=session_id)
        return (await self.call(SESSIONS, "GetSession", request, pb.GetSessionResponse)).session

    async def rename(self, session_id: str, name: str) -> pb.Session:
        request = pb.UpdateSessionNameRequest(session_id=session_id, name=name)
        return (await self.call(SESSIONS, "UpdateSessionName", request, pb.UpdateSessionNameResponse)).session

    async def suspend(self, session_id: str) -> pb.Session:
        request = pb.SuspendSessionRequest(session_id=session_id)
        return (await self.call(SESSIONS, "SuspendSession", request, pb.SuspendSessionResponse)).session

    async def resume(self, session_id: str) -> pb.Session:
        request = pb.ResumeSessionRequest(session_id=session_id)
        return (await self.call(SESSIONS, "ResumeSession", request, pb.ResumeSessionResponse)).session

    async def delete(self, session_id: str) -> pb.Session:
        request = pb.DeleteSessionRequest(session_id=session_id)
        return (await self.call(SESSIONS, "DeleteSession", request, pb.DeleteSessionResponse)).session

    async def share(self, session_id: str, *, read_only: bool) -> tuple[pb.SessionShare, str]:
        """A new share of the session and its token (kagent returns the token only now)."""
        permission = pb.SESSION_SHARE_PERMISSION_READ_ONLY if read_only else pb.SESSION_SHARE_PERMISSION_READ_WRITE
        request = pb.CreateSessionShareRequest(session_id=session_id, permission=permission)
        got = await self.call(SESSIONS, "CreateSessionShare", request, pb.CreateSessionShareResponse)
        return got.share, got.token

    async def shares(self, session_id: str, *, pages: int = 50) -> list[pb.SessionShare]:
        out: list[pb.SessionShare] = []
        token = ""
        for _ in range(pages):
            request = pb.ListSessionSharesRequest(
                session_id=session_id, page=pb.PageRequest(limit=100, page_token=token)
            )
            got = await self.call(SESSIONS, "ListSessionShares", request, pb.ListSessionSharesResponse)
            out.extend(got.shares)
            token = got.page.next_page_token
            if not token:
                break
        return out

    async def revoke_share(self, share_id: str) -> None:
        request = pb.RevokeSessionShareRequest(share_id=share_id)
        await self.call(SESSIONS, "RevokeSessionShare", request, pb.RevokeSessionShareResponse)

    async def wait_ready(
        self, session_id: str, *, timeout: float = 120.0, progress: Callable[[str], None] | None = None
    ) -> pb.Session:
        """Wait while a session is being created (or resumed); a failed one raises with its reason."""
        return await _poll(
            lambda: self.get_session(session_id),
            lambda s: s.state not in (CREATING, pb.SESSION_STATE_UNSPECIFIED),
            timeout,
            progress,
            "the session is being created",
            _session_failure,
        )

    async def open(self, session_id: str, *, progress: Callable[[str], None] | None = None) -> pb.Session:
        """The session, ready to talk to: a suspended one is resumed, a creating one waited for."""
        session = await self.get_session(session_id)
        if session.state == SUSPENDED:
            if progress:
                progress("resuming the suspended session")
            session = await self.resume(session_id)
        if session.state != READY:
            session = await self.wait_ready(session_id, progress=progress)
        _session_failure(session)
        return session

    # -- CheckpointService (service/checkpoint/service.go@105cc5d7; numbers unverified) -----------
    async def checkpoint(
        self, session_id: str, request_id: str, expected_head_task_id: str, *, tries: int = 8, delay: float = 0.2
    ) -> pb.Checkpoint:
        """A checkpoint of the session at its terminal task ``expected_head_task_id``, answered
        directly. A pending snapshot (``KAGENT_CHECKPOINT_SNAPSHOT_PENDING``) is retried with the
        same request and task ids, at most ``tries`` times; an advanced conversation raises
        :class:`CheckpointAdvanced`; any other refusal raises its :class:`GrpcError`."""
        started = time.monotonic()
        request = pb.CreateCheckpointRequest(
            session_id=session_id, request_id=request_id, expected_head_task_id=expected_head_task_id
        )
        for attempt in range(1, tries + 1):
            try:
                got = await self.call(CHECKPOINTS, "CreateCheckpoint", request, pb.CreateCheckpointResponse)
            except GrpcError as exc:
                if exc.code == "FAILED_PRECONDITION" and exc.reason == CONVERSATION_ADVANCED:
                    raise CheckpointAdvanced(exc.message) from None
                if exc.code == "FAILED_PRECONDITION" and exc.reason == SNAPSHOT_PENDING and attempt < tries:
                    await asyncio.sleep(min(delay * attempt, 2.0))
                    continue
                raise
            self.costs.append(("checkpoint", time.monotonic() - started, attempt))
            return got.checkpoint
        raise AssertionError("unreachable")  # the last try returns or raises

    async def checkpoints(self, session_id: str, *, pages: int = 50) -> list[pb.Checkpoint]:
        out: list[pb.Checkpoint] = []
        token = ""
        for _ in range(pages):
            request = pb.ListCheckpointsRequest(session_id=session_id, page=pb.PageRequest(limit=100, page_token=token))
            got = await self.call(CHECKPOINTS, "ListCheckpoints", request, pb.ListCheckpointsResponse)
            out.extend(got.checkpoints)
            token = got.page.next_page_token
            if not token:
                break
        return out

    async def rename_checkpoint(self, checkpoint_id: str, name: str) -> pb.Checkpoint:
        """Empty ``name`` restores the generated one (docs/protobuf-api.md@3855fe51)."""
        request = pb.UpdateCheckpointNameRequest(checkpoint_id=checkpoint_id, name=name)
        return (
            await self.call(CHECKPOINTS, "UpdateCheckpointName", request, pb.UpdateCheckpointNameResponse)
        ).checkpoint

    async def delete_checkpoint(self, checkpoint_id: str) -> None:
        request = pb.DeleteCheckpointRequest(checkpoint_id=checkpoint_id)
        await self.call(CHECKPOINTS, "DeleteCheckpoint", request, pb.DeleteCheckpointResponse)

    async def fork(self, checkpoint_id: str, request_id: str) -> pb.Session:
        """A new session from the checkpoint (fresh session, context and task ids); the original
        is kept. Answered directly: the new session."""
        started = time.monotonic()
        request = pb.ForkSessionRequest(checkpoint_id=checkpoint_id, request_id=request_id)
        session = (await self.call(CHECKPOINTS, "ForkSession", request, pb.ForkSessionResponse)).session
        self.costs.append(("fork", time.monotonic() - started, 1))
        return session


def _session_failure(session: pb.Session) -> None:
    if session.state == FAILED:
        reason = session.failure.message or session.failure.reason or "no reason given"
        raise OperationFailed("the session", session.failure.reason or "FAILED", reason)


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
