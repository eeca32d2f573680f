"""A test double of kagent 1.0's controller, built on kagent's own definitions: its message
classes come from kagent's compiled descriptors (``kagent_types``: ``sessions_pb.ts``@105cc5d7 and
``common_pb.ts``@3d8cc790, made into ``tests/fixtures/kagent1/*.binpb`` by ``make_descriptors.py``),
never from rewindtui's ``kagent1.proto``. What each handler does follows kagent's sources
(kagent-dev/kagent), named where it is:

- SessionService: ``proto/kagent/api/v1alpha1/sessions.proto``@1e2422ff and
  ``docs/protobuf-api.md``@3855fe51 (``request_id``-idempotent create, lists paged by ID cursor and
  filtered by agent, ``context_id`` = id, shares whose token is returned once, read-only shares);
- CheckpointService: ``go/core/internal/service/checkpoint/service.go``@105cc5d7 (Create(session,
  request, expected_head_task_id) answered directly; FAILED_PRECONDITION + ``google.rpc.ErrorInfo``
  in domain ``kagent.dev``: ``KAGENT_CHECKPOINT_SNAPSHOT_PENDING`` / ``..._CONVERSATION_ADVANCED``;
  a paused task is not checkpointable; ALREADY_EXISTS on a reused ``request_id``; Fork answers the
  new Session). Its messages are ``kagent_types.UNVERIFIED_CHECKPOINTS``: kagent's names, numbers
  no readable kagent file confirms (docs/kagent.md);
- ``go/core/internal/grpcserver/interceptors.go``@21559195: the user from ``x-user-id``, a share
  from ``x-share-token`` beside it; a read-only share may only read ("this share link is
  read-only"); an unknown token is PERMISSION_DENIED;
- ``go/core/internal/grpcserver/grpcweb.go``@241979a0: gRPC-Web on the HTTP port, ``/api`` stripped;
  a status's details in ``grpc-status-details-bin``;
- A2A 1.0 at ``POST /agents/{ns}/{name}`` (docs/protobuf-api.md@3855fe51), proxied to a real agent
  (the embedded server): turns and ``ListTasks(contextId)`` run its real code, and a fork is its REST
  fork before the first turn after the checkpoint (new context and task ids), as kagent's fork
  copies the events up to the checkpoint (docs/architecture/persistence-checkpoints-and-forks.md).
"""

from __future__ import annotations

import json
import threading
import uuid
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

import httpx
from google.protobuf.message import Message
from google.rpc import error_details_pb2, status_pb2
from kagent_types import KAGENT
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, PlainTextResponse, Response, StreamingResponse
from starlette.routing import Route

from rewindtui.base.tls import default_context
from rewindtui.kagent1 import grpcweb

TERMINAL = {
    "completed",
    "failed",
    "canceled",
    "rejected",
    "TASK_STATE_COMPLETED",
    "TASK_STATE_FAILED",
    "TASK_STATE_CANCELED",
    "TASK_STATE_REJECTED",
}
CODE = {name: number for number, name in grpcweb.CODES.items()}
K = KAGENT.message
SESSION_STATE = {v.name: v.number for v in KAGENT.enum("SessionState").values}
PERMISSION = {v.name: v.number for v in KAGENT.enum("SessionSharePermission").values}
CHECKPOINT_STATE = {v.name: v.number for v in KAGENT.enum("CheckpointState").values}
READ_ONLY, READ_WRITE = (
    PERMISSION["SESSION_SHARE_PERMISSION_READ_ONLY"],
    PERMISSION["SESSION_SHARE_PERMISSION_READ_WRITE"],
)
DELETED = SESSION_STATE["SESSION_STATE_DELETED"]


class Refuse(Exception):
    def __init__(self, code: str, message: str, reason: str = "") -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.reason = reason  # a google.rpc.ErrorInfo reason (domain kagent.dev), or ""

    def details(self) -> bytes:
        """The google.rpc.Status with its ErrorInfo, serialized (b"": none)."""
        if not self.reason:
            return b""
        status = status_pb2.Status(code=CODE[self.code], message=self.message)
        status.details.add().Pack(error_details_pb2.ErrorInfo(domain="kagent.dev", reason=self.reason))
        return status.SerializeToString()


def _now() -> datetime:
    """Now, for a timestamp field (protobuf fills kagent's pool's Timestamp from a datetime)."""
    return datetime.now(UTC)


#: the methods this double serves, by path: (service, method); request and answer types are kagent's
METHODS: dict[str, tuple[str, str]] = {
    f"kagent.api.v1alpha1.{service}/{method}": (service, method)
    for service, methods in (
        ("SessionService", KAGENT.services()["kagent.api.v1alpha1.SessionService"]),
        ("CheckpointService", KAGENT.services()["kagent.api.v1alpha1.CheckpointService"]),
    )
    for method in methods
}


@dataclass
class Agent1:
    ref: str  # "ns/name"
    url: str  # the agent's A2A endpoint
    api: str  # the agent's REST API (its store)


@dataclass
class Share:
    id: str
    session_id: str
    permission: int
    created_at: datetime
    revoked: bool = False


@dataclass
class Kagent1Double:
    agents: dict[str, Agent1]
    sessions: dict[str, Any] = field(default_factory=dict)  # id -> kagent Session
    owners: dict[str, str] = field(default_factory=dict)  # session id -> user
    created_by_request: dict[tuple[str, str], str] = field(default_factory=dict)
    checkpoints: dict[str, Any] = field(default_factory=dict)  # id -> Checkpoint (unverified numbers)
    checkpoint_requests: dict[tuple[str, str], tuple[str, str, str]] = field(
        default_factory=dict
    )  # (user, request) -> (session, task, checkpoint)
    fork_requests: dict[tuple[str, str], tuple[str, str]] = field(
        default_factory=dict
    )  # (user, request) -> (checkpoint, session)
    forked_from: dict[str, str] = field(default_factory=dict)  # fork session -> checkpoint
    shares: dict[str, Share] = field(default_factory=dict)  # token -> share
    calls: list[str] = field(default_factory=list)
    #: every request as it arrived: (method, its headers, the decoded kagent message)
    received: list[tuple[str, dict[str, str], Any]] = field(default_factory=list)
    failures: dict[str, tuple[str, str]] = field(default_factory=dict)
    #: fault injection: the next fork fails with this message
    fail_next_fork: str | None = None
    #: fault injection: the next created session ends FAILED with this (reason, message)
    fail_next_create: tuple[str, str] | None = None
    #: fault injection: this many CreateCheckpoint calls answer KAGENT_CHECKPOINT_SNAPSHOT_PENDING first
    pending_snapshots: int = 0
    #: a created session is CREATING for this many GetSession reads
    reads_before_ready: int = 1
    #: the headers of every A2A request (what the client sent the agent)
    a2a_headers: list[dict[str, str]] = field(default_factory=list)
    _creating: dict[str, int] = field(default_factory=dict)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    # -- who is asking (interceptors.go@21559195) -------------------------------------------------
    def _caller(self, headers: dict[str, str]) -> tuple[str, Share | None]:
        """(the user, the share presented). A share token rides in x-share-token beside the
        login; one sent as the login itself is just an invalid credential."""
        auth = headers.get("authorization", "")
        if auth.lower().startswith("bearer ") and auth[7:] in self.shares:
            raise Refuse("UNAUTHENTICATED", "invalid credentials")
        user = headers.get("x-user-id") or "admin@kagent.dev"
        token = headers.get("x-share-token", "")
        if not token:
            return user, None
        share = self.shares.get(token)
        if share is None or share.revoked:
            raise Refuse("PERMISSION_DENIED", "invalid or expired share token")
        return user, share

    def _visible(self, session_id: str, user: str, share: Share | None) -> Any:
        session = self.sessions.get(session_id)
        if session is None or session.state == DELETED:
            raise Refuse("NOT_FOUND", "Session not found")
        if self.owners.get(session_id) == user or (share is not None and share.session_id == session_id):
            return session
        raise Refuse("NOT_FOUND", "Session not found")

    def _owned(self, session_id: str, user: str) -> Any:
        return self._visible(session_id, user, None)

    async def _tasks(self, context_id: str, user: str) -> list[dict[str, Any]]:
        """The agent's tasks of a context, oldest first (its REST store)."""
        agent = self._agent_of(context_id)
        async with httpx.AsyncClient(timeout=60, verify=default_context()) as http:
            r = await http.get(f"{agent.api}/sessions/{context_id}/tasks", headers={"X-User-Id": user})
        if r.status_code == 404:
            return []
        r.raise_for_status()
        return r.json().get("data") or []

    def _agent_of(self, session_id: str) -> Agent1:
        session = self.sessions[session_id]
        return self.agents[f"{session.agent.namespace}/{session.agent.name}"]

    @staticmethod
    def _page(rows: list[Any], page: Any) -> tuple[list[Any], str]:
        """An ID cursor (docs/protobuf-api.md@3855fe51): the token is the last id shown."""
        limit = page.limit or 50
        if limit > 100:
            raise Refuse("INVALID_ARGUMENT", "page limit must be between 1 and 100")
        ids = [r.id for r in rows]
        start = ids.index(page.page_token) + 1 if page.page_token in ids else 0
        shown = rows[start : start + limit]
        return shown, (shown[-1].id if start + limit < len(rows) else "")

    # -- SessionService: sessions.proto@1e2422ff ----------------------------------------------------
    async def CreateSession(self, req: Any, user: str, share: Share | None) -> Message:
        if share is not None:
            raise Refuse("PERMISSION_DENIED", "shares cannot create Sessions")
        ref = f"{req.agent.namespace}/{req.agent.name}"
        if not req.request_id or len(req.request_id) > 128:
            raise Refuse("INVALID_ARGUMENT", "request_id: value length must be between 1 and 128")
        if ref not in self.agents:
            raise Refuse("NOT_FOUND", f"Agent {ref} not found")
        key = (user, req.request_id)
        if key in self.created_by_request:  # idempotent; reusing the key does not rename
            return K("CreateSessionResponse")(session=self.sessions[self.created_by_request[key]])
        sid = str(uuid.uuid4())
        session = K("Session")(
            id=sid,
            creator=user,
            agent=req.agent,
            state=SESSION_STATE["SESSION_STATE_CREATING"],
            operation=1,
            created_at=_now(),
            updated_at=_now(),
            name=req.name,
            context_id=sid,
        )
        self.sessions[sid] = session
        self.owners[sid] = user
        self.created_by_request[key] = sid
        self._creating[sid] = self.reads_before_ready
        if self.fail_next_create is not None:
            self.failures[sid], self.fail_next_create = self.fail_next_create, None
        return K("CreateSessionResponse")(session=session)

    def _advance(self, session: Any) -> None:
        if session.id not in self._creating:
            return
        if self._creating[session.id] > 0:
            self._creating[session.id] -= 1
            return
        del self._creating[session.id]
        session.state = SESSION_STATE["SESSION_STATE_READY"]
        session.operation = 0
        if session.id in self.failures:
            reason, message = self.failures.pop(session.id)
            session.state = SESSION_STATE["SESSION_STATE_FAILED"]
            session.failure.CopyFrom(K("Failure")(reason=reason, message=message))

    async def GetSession(self, req: Any, user: str, share: Share | None) -> Message:
        session = self._visible(req.session_id, user, share)
        self._advance(session)
        return K("GetSessionResponse")(session=session)

    async def ListSessions(self, req: Any, user: str, share: Share | None) -> Message:
        rows = [
            s
            for s in self.sessions.values()
            if s.state != DELETED
            and (self.owners[s.id] == user if share is None else s.id == share.session_id)
            and (not req.agent.name or (s.agent.namespace, s.agent.name) == (req.agent.namespace, req.agent.name))
        ]
        rows.sort(key=lambda s: (s.created_at.seconds, s.created_at.nanos, s.id), reverse=True)
        shown, token = self._page(rows, req.page)
        return K("ListSessionsResponse")(sessions=shown, page=K("PageResponse")(next_page_token=token))

    async def UpdateSessionName(self, req: Any, user: str, share: Share | None) -> Message:
        session = self._owned(req.session_id, user)
        session.name = req.name
        session.updated_at.FromDatetime(_now())
        return K("UpdateSessionNameResponse")(session=session)

    async def SuspendSession(self, req: Any, user: str, share: Share | None) -> Message:
        session = self._owned(req.session_id, user)
        session.state = SESSION_STATE["SESSION_STATE_SUSPENDED"]
        return K("SuspendSessionResponse")(session=session)

    async def ResumeSession(self, req: Any, user: str, share: Share | None) -> Message:
        session = self._owned(req.session_id, user)
        if session.state == SESSION_STATE["SESSION_STATE_SUSPENDED"]:
            session.state = SESSION_STATE["SESSION_STATE_READY"]
        return K("ResumeSessionResponse")(session=session)

    async def DeleteSession(self, req: Any, user: str, share: Share | None) -> Message:
        session = self._owned(req.session_id, user)
        session.state = DELETED
        return K("DeleteSessionResponse")(session=session)

    async def CreateSessionShare(self, req: Any, user: str, share: Share | None) -> Message:
        self._owned(req.session_id, user)
        if req.permission not in (READ_ONLY, READ_WRITE):
            raise Refuse("INVALID_ARGUMENT", "permission: value must be a defined enum value other than 0")
        token = uuid.uuid4().hex
        made = Share(str(uuid.uuid4()), req.session_id, req.permission, _now())
        self.shares[token] = made
        return K("CreateSessionShareResponse")(share=self._share_message(made), token=token)

    def _share_message(self, share: Share) -> Any:
        return K("SessionShare")(
            id=share.id, session_id=share.session_id, permission=share.permission, created_at=share.created_at
        )

    async def ListSessionShares(self, req: Any, user: str, share: Share | None) -> Message:
        self._owned(req.session_id, user)
        rows = [
            self._share_message(s) for s in self.shares.values() if s.session_id == req.session_id and not s.revoked
        ]
        shown, token = self._page(rows, req.page)
        return K("ListSessionSharesResponse")(shares=shown, page=K("PageResponse")(next_page_token=token))

    async def RevokeSessionShare(self, req: Any, user: str, share: Share | None) -> Message:
        found = next((s for s in self.shares.values() if s.id == req.share_id and not s.revoked), None)
        if found is None:
            raise Refuse("NOT_FOUND", "Share not found")
        self._owned(found.session_id, user)
        found.revoked = True
        return K("RevokeSessionShareResponse")()

    # -- CheckpointService: service/checkpoint/service.go@105cc5d7 --------------------------------
    async def CreateCheckpoint(self, req: Any, user: str, share: Share | None) -> Message:
        if not req.request_id or len(req.request_id) > 128:
            raise Refuse("INVALID_ARGUMENT", "request_id must be 1-128 characters without surrounding whitespace")
        if not req.expected_head_task_id:
            raise Refuse("INVALID_ARGUMENT", "expected_head_task_id is required")
        session = self._owned(req.session_id, user)
        key = (user, req.request_id)
        if key in self.checkpoint_requests:
            sid, task, cid = self.checkpoint_requests[key]
            if (sid, task) != (session.id, req.expected_head_task_id):
                raise Refuse("ALREADY_EXISTS", "request_id was already used for a different checkpoint")
            return K("CreateCheckpointResponse")(checkpoint=self.checkpoints[cid])
        if self.pending_snapshots > 0:
            self.pending_snapshots -= 1
            raise Refuse("FAILED_PRECONDITION", "snapshot pending", "KAGENT_CHECKPOINT_SNAPSHOT_PENDING")
        tasks = await self._tasks(session.context_id, user)
        head = tasks[-1] if tasks else {}
        if head.get("id") != req.expected_head_task_id:
            raise Refuse(
                "FAILED_PRECONDITION",
                "conversation advanced beyond the expected task",
                "KAGENT_CHECKPOINT_CONVERSATION_ADVANCED",
            )
        state = (head.get("status") or {}).get("state")
        if state not in TERMINAL:  # ErrFailedPrecondition: no ErrorInfo
            raise Refuse(
                "FAILED_PRECONDITION",
                f"task {head.get('id')} is not terminal ({state}): paused input is not checkpointable",
            )
        cid = str(uuid.uuid4())
        checkpoint = K("Checkpoint")(
            id=cid,
            session_id=session.id,
            head_task_id=head["id"],
            history_sequence=len(tasks),
            state=CHECKPOINT_STATE["CHECKPOINT_STATE_READY"],
            created_at=_now(),
            name=f"After turn {len(tasks)}",
        )
        self.checkpoints[cid] = checkpoint
        self.checkpoint_requests[key] = (session.id, head["id"], cid)
        return K("CreateCheckpointResponse")(checkpoint=checkpoint)

    def _checkpoint(self, checkpoint_id: str, user: str) -> Any:
        cp = self.checkpoints.get(checkpoint_id)
        if cp is None:
            raise Refuse("NOT_FOUND", "Checkpoint not found")
        self._owned(cp.session_id, user)
        return cp

    async def GetCheckpoint(self, req: Any, user: str, share: Share | None) -> Message:
        return K("GetCheckpointResponse")(checkpoint=self._checkpoint(req.checkpoint_id, user))

    async def ListCheckpoints(self, req: Any, user: str, share: Share | None) -> Message:
        self._owned(req.session_id, user)
        rows = [c for c in self.checkpoints.values() if c.session_id == req.session_id]
        shown, token = self._page(rows, req.page)
        return K("ListCheckpointsResponse")(checkpoints=shown, page=K("PageResponse")(next_page_token=token))

    async def UpdateCheckpointName(self, req: Any, user: str, share: Share | None) -> Message:
        cp = self._checkpoint(req.checkpoint_id, user)
        cp.name = req.name or f"After turn {cp.history_sequence}"  # empty restores the generated name
        return K("UpdateCheckpointNameResponse")(checkpoint=cp)

    async def DeleteCheckpoint(self, req: Any, user: str, share: Share | None) -> Message:
        cp = self._checkpoint(req.checkpoint_id, user)
        if cp.id in self.forked_from.values():  # persistence-checkpoints-and-forks.md
            raise Refuse("FAILED_PRECONDITION", "a checkpoint referenced by a fork cannot be deleted")
        del self.checkpoints[cp.id]
        return K("DeleteCheckpointResponse")()

    async def ForkSession(self, req: Any, user: str, share: Share | None) -> Message:
        if not req.request_id:
            raise Refuse("INVALID_ARGUMENT", "request_id must be 1-128 characters without surrounding whitespace")
        cp = self._checkpoint(req.checkpoint_id, user)
        key = (user, req.request_id)
        if key in self.fork_requests:
            source_cp, fork_id = self.fork_requests[key]
            if source_cp != cp.id:
                raise Refuse("ALREADY_EXISTS", "request_id was already used for a different Session")
            return K("ForkSessionResponse")(session=self.sessions[fork_id])
        if self.fail_next_fork is not None:
            failure, self.fail_next_fork = self.fail_next_fork, None
            raise Refuse("UNAVAILABLE", failure)
        source = self._owned(cp.session_id, user)
        tasks = await self._tasks(source.context_id, user)
        agent = self._agent_of(source.id)
        if cp.history_sequence >= len(tasks):
            raise Refuse(
                "FAILED_PRECONDITION",
                "the checkpoint is the session's head: nothing to fork away (not modeled by this double)",
            )
        after = tasks[cp.history_sequence]
        meta = after.get("metadata") or {}
        invocation = meta.get("adk_invocation_id") or meta.get("kagent_invocation_id")
        async with httpx.AsyncClient(timeout=60, verify=default_context()) as http:
            r = await http.post(
                f"{agent.api}/sessions/{source.context_id}/fork",
                json={"rewind_before_invocation_id": invocation},
                headers={"X-User-Id": user},
            )
        if r.status_code >= 400:
            raise Refuse("UNAVAILABLE", f"Failed to create fork Session: HTTP {r.status_code}")
        fork_id = r.json()["data"]["id"]
        fork = K("Session")(
            id=fork_id,
            creator=user,
            agent=source.agent,
            state=SESSION_STATE["SESSION_STATE_READY"],
            created_at=_now(),
            updated_at=_now(),
            name=cp.name,
            context_id=fork_id,
        )
        self.sessions[fork_id] = fork
        self.owners[fork_id] = user
        self.fork_requests[key] = (cp.id, fork_id)
        self.forked_from[fork_id] = cp.id
        return K("ForkSessionResponse")(session=fork)

    # -- dispatch --------------------------------------------------------------------------------

    async def dispatch(self, path: str, body: bytes, headers: dict[str, str]) -> bytes:
        """One unary call: the answer's bytes, or Refuse. The request is decoded with kagent's type."""
        entry = METHODS.get(path.strip("/"))
        if entry is None:
            raise Refuse("UNIMPLEMENTED", f"unknown service or method {path.strip('/')}")
        service, name = entry
        request_type, _ = KAGENT.method(service, name)
        self.calls.append(name)
        user, share = self._caller(headers)
        request = request_type.FromString(body)
        self.received.append((name, dict(headers), request))
        if share is not None and share.permission != READ_WRITE and not name.startswith(("Get", "List")):
            raise Refuse("PERMISSION_DENIED", "this share link is read-only")
        answer = await getattr(self, name)(request, user, share)
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
            body = grpcweb.trailers(CODE[exc.code], exc.message, exc.details())
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
        self.a2a_headers.append(headers)
        try:
            user, share = self._caller(headers)
        except Refuse as exc:
            return PlainTextResponse(f"{exc.message}\n", status_code=403 if exc.code == "PERMISSION_DENIED" else 401)
        if request.method == "GET":
            async with httpx.AsyncClient(timeout=60, verify=default_context()) as http:
                card = (await http.get(agent.url.rstrip("/") + "/.well-known/agent-card.json")).json()
            here = str(request.url).split(".well-known/")[0].rstrip("/")
            for iface in card.get("supportedInterfaces") or []:
                iface["url"] = here
            card["url"] = here
            caps = card.setdefault("capabilities", {})
            caps["extensions"] = [
                e for e in caps.get("extensions") or [] if not str(e.get("uri", "")).startswith("urn:rewindtui:")
            ]
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
            session = self.sessions.get(context)
            if session is None or session.state == DELETED:
                return JSONResponse(
                    {
                        "jsonrpc": "2.0",
                        "id": rpc.get("id"),
                        "error": {"code": -32001, "message": f"session {context} not found"},
                    }
                )
            if self.owners.get(context) != user:
                if share is None or share.session_id != context:
                    return PlainTextResponse("permission denied\n", status_code=403)
                # sessions.proto@1e2422ff: READ_ONLY allows A2A get, list and subscribe
                if share.permission == READ_ONLY and method not in ("GetTask", "ListTasks", "SubscribeToTask"):
                    return PlainTextResponse("permission denied: this share link is read-only\n", status_code=403)
                user = self.owners[context]
            if session.state == SESSION_STATE["SESSION_STATE_SUSPENDED"] and method.startswith("Send"):
                return JSONResponse(
                    {
                        "jsonrpc": "2.0",
                        "id": rpc.get("id"),
                        "error": {"code": -32603, "message": "session is suspended"},
                    }
                )
        forward = {k: v for k, v in request.headers.items() if k.lower() in ("content-type", "accept", "a2a-version")}
        forward["X-User-Id"] = user
        http = httpx.AsyncClient(timeout=httpx.Timeout(60.0, read=None), verify=default_context())
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
                details = exc.details()
                if details:
                    context.set_trailing_metadata((("grpc-status-details-bin", details),))
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
