"""A test double of kagent's controller HTTP API, following kagent's own Go code.

Two flavors, each following one kagent commit (every route names the file and function it
mirrors; shapes, status codes and error texts are theirs):

- ``flavor="v0.10.x"`` (the default): kagent's release branch ``release/v0.10.x`` at its tip
  03e950f6e90764dfc24e12af71df5b3685c31b5c -- the files as last changed there:
  ``go/core/internal/httpserver/server.go`` (8fc5f3b4c), ``handlers/sessions.go`` (41279fd56),
  ``go/core/internal/utils/a2a_version.go`` (d39fa0b16), ``go/core/internal/a2a/a2a_handler_mux.go``
  (03e950f6e), ``middleware_error.go`` and ``handlers/tasks.go`` (41279fd56),
  ``go/api/httpapi/types.go`` (9a470b907), ``httpserver/auth/authn.go`` (169ce1f74);
- ``flavor="ae5a948"``: kagent's ``main`` at ae5a948ea668bb366a0e06503c5fd0a8be2c6912 (the last commit
  before sessions moved to gRPC), which older versions of this client followed.

What the two share:

- envelope ``api.NewResponse`` (go/api/httpapi/types.go): ``{"error": false, "data": ..., "message":
  ...}`` with ``data`` ``omitempty`` -- an empty list is left out;
- errors ``errorResponseWriter.RespondWithError`` (httpserver/middleware_error.go):
  ``{"error": "<message>: <cause>"}``, the cause left out of 5xx bodies;
- the user ``UnsecureAuthenticator.Authenticate`` (httpserver/auth/authn.go): ``user_id`` query,
  else ``X-User-Id``, else ``admin@kagent.dev``;
- the A2A proxy ``handlerMux`` (core/internal/a2a/a2a_handler_mux.go): unknown agent -> 404 plain
  text ``Agent sandboxes/NS/NAME not found``; at ae5a948 only the A2A 1.0 wire is taken (400
  ``unsupported negotiated A2A wire version`` otherwise) and only ``/api/a2a-sandboxes/`` exists.
  On the release branch: ``/api/a2a/`` too (route key ``NS/NAME``), and both wires
  (``utils.NegotiateA2AWireVersion``: no ``A2A-Version`` header, or ``0.3``, means the legacy wire);

What differs from ae5a948 on the release branch (03e950f6e):

- ``GET /api/sessions/{id}/tasks`` negotiates the wire (``HandleListTasksForSession``): A2A 0.3
  task shapes (``trpcv0.ToLegacyTask``) with no ``A2A-Version`` header or ``0.3``, A2A 1.0 with
  ``A2A-Version: 1.0``, and 400 ``Unsupported A2A version: unsupported A2A version "X"`` for any
  other value -- checked after the session is found; ae5a948 always answers 1.0 shapes;
- unknown routes: gorilla/mux's ``404 page not found``.

The agent behind the proxy is a real A2A agent (the embedded server's, or any), reached over HTTP.
What kagent's Python runtime would write back into the controller (``POST /api/sessions`` for a
context it has not seen, ``POST /api/tasks`` for each task) is done here by reading the agent's
own store over its REST API: sessions seen in proxied A2A traffic are recorded, and a session's
tasks are the agent's tasks of that context, in the wire the request negotiated (ae5a948 serves
a2a-go v2's A2A 1.0 JSON).
"""

from __future__ import annotations

import json
import time
import uuid
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Any

import httpx
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, PlainTextResponse, Response, StreamingResponse
from starlette.routing import Route

DEFAULT_USER = "admin@kagent.dev"
_V10 = "1.0"


def _now() -> str:
    """Go's time.Time JSON (RFC 3339, nanoseconds)."""
    t = time.time()
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(t)) + f".{int((t % 1) * 1e9):09d}Z"


def python_identifier(ref: str) -> str:
    """utils.ConvertToPythonIdentifier (go/core/internal/utils/common.go)."""
    return ref.replace("-", "_").replace("/", "__NS__")


def respond(data: Any, message: str, status: int = 200) -> Response:
    """handlers.RespondWithJSON(api.NewResponse(data, message, false)); ``data`` is omitempty."""
    body: dict[str, Any] = {"error": False}
    if data not in (None, [], {}, "") or isinstance(data, dict):
        body["data"] = data
    body["message"] = message
    return JSONResponse(body, status_code=status)


def respond_error(status: int, message: str, cause: str | None = None) -> Response:
    """errorResponseWriter.RespondWithError (httpserver/middleware_error.go)."""
    text = message + (f": {cause}" if cause and status < 500 else "")
    return JSONResponse({"error": text}, status_code=status)


# -- A2A 0.3 JSON (the agent's store) -> A2A 1.0 JSON (a2a-go v2, what ae5a948 serves) ----------
_STATES = {
    "submitted": "TASK_STATE_SUBMITTED",
    "working": "TASK_STATE_WORKING",
    "input-required": "TASK_STATE_INPUT_REQUIRED",
    "completed": "TASK_STATE_COMPLETED",
    "canceled": "TASK_STATE_CANCELED",
    "failed": "TASK_STATE_FAILED",
    "rejected": "TASK_STATE_REJECTED",
    "auth-required": "TASK_STATE_AUTH_REQUIRED",
}


def part_v1(part: dict[str, Any]) -> dict[str, Any]:
    kind = part.get("kind")
    out: dict[str, Any] = {}
    if kind == "text":
        out["text"] = part.get("text", "")
    elif kind == "data":
        out["data"] = part.get("data")
    elif kind == "file":
        f = part.get("file") or {}
        if "uri" in f:
            out["url"] = f["uri"]
        if "bytes" in f:
            out["raw"] = f["bytes"]
        if f.get("mimeType"):
            out["mediaType"] = f["mimeType"]
        if f.get("name"):
            out["filename"] = f["name"]
    else:
        out = {k: v for k, v in part.items() if k != "kind"}
    if part.get("metadata"):
        out["metadata"] = part["metadata"]
    return out


def message_v1(message: dict[str, Any]) -> dict[str, Any]:
    out = {k: v for k, v in message.items() if k != "kind"}
    out["role"] = "ROLE_AGENT" if message.get("role") == "agent" else "ROLE_USER"
    out["parts"] = [part_v1(p) for p in message.get("parts") or []]
    return out


def task_v1(task: dict[str, Any]) -> dict[str, Any]:
    out = {k: v for k, v in task.items() if k != "kind"}
    status = dict(task.get("status") or {})
    status["state"] = _STATES.get(status.get("state", ""), status.get("state"))
    if isinstance(status.get("message"), dict):
        status["message"] = message_v1(status["message"])
    out["status"] = status
    if task.get("history"):
        out["history"] = [message_v1(m) for m in task["history"]]
    if task.get("artifacts"):
        out["artifacts"] = [dict(a, parts=[part_v1(p) for p in a.get("parts") or []]) for a in task["artifacts"]]
    return out


@dataclass
class Agent:
    """A row of kagent's agent table: ``namespace/name`` and where its A2A endpoint is."""

    ref: str
    url: str  # the agent's own A2A endpoint
    api: str  # the agent's store, read as kagent-adk would have written it to the controller
    rewind_addon: bool = True  # False: advertise no rewind (a stock kagent agent)

    @property
    def id(self) -> str:
        return python_identifier(self.ref)


@dataclass
class KagentController:
    agents: dict[str, Agent]
    flavor: str = "v0.10.x"  # or "ae5a948"
    sessions: dict[str, dict[str, Any]] = field(default_factory=dict)  # id -> database.Session JSON
    requests: list[tuple[str, str]] = field(default_factory=list)
    #: the ``A2A-Version`` header of each request (None: not sent), in the order of ``requests``
    versions: list[str | None] = field(default_factory=list)

    def __post_init__(self) -> None:
        self._http = httpx.AsyncClient(timeout=httpx.Timeout(60.0, read=None))

    # -- helpers ---------------------------------------------------------------------------------
    @staticmethod
    def user(request: Request) -> str:
        """UnsecureAuthenticator.Authenticate (httpserver/auth/authn.go)."""
        return request.query_params.get("user_id") or request.headers.get("X-User-Id") or DEFAULT_USER

    def _agent_by_id(self, agent_id: str | None) -> Agent | None:
        return next((a for a in self.agents.values() if a.id == agent_id), None)

    def _session(self, session_id: str, user: str) -> dict[str, Any] | None:
        row = self.sessions.get(session_id)
        return row if row is not None and row["user_id"] == user and "deleted_at" not in row else None

    def _store(self, row: dict[str, Any]) -> None:
        row["updated_at"] = _now()
        self.sessions[row["id"]] = row

    def _wire(self, request: Request) -> str | None:
        """utils.NegotiateA2AWireVersion (core/internal/utils/a2a_version.go at d39fa0b16)."""
        version = request.headers.get("A2A-Version", "")
        if version in ("", "0.3"):
            return "0.3"
        if version == _V10:
            return _V10
        return None

    async def _agent_tasks(self, agent: Agent, session_id: str, user: str) -> list[dict[str, Any]]:
        response = await self._http.get(f"{agent.api}/sessions/{session_id}/tasks", headers={"X-User-Id": user})
        if response.status_code == 404:
            return []
        response.raise_for_status()
        return response.json().get("data") or []

    # -- sessions: handlers/sessions.go ----------------------------------------------------------
    async def list_sessions(self, request: Request) -> Response:
        """SessionsHandler.HandleListSessions; ListSessions orders by updated_at DESC, created_at DESC."""
        user = self.user(request)
        rows = [r for r in self.sessions.values() if r["user_id"] == user and "deleted_at" not in r]
        rows.sort(key=lambda r: (r["updated_at"], r["created_at"]), reverse=True)
        return respond(rows, "Successfully listed sessions")

    async def create_session(self, request: Request) -> Response:
        """SessionsHandler.HandleCreateSession."""
        try:
            body = json.loads(await request.body())
            if not isinstance(body, dict):
                raise ValueError("json: cannot unmarshal into Go value of type api.SessionRequest")
        except ValueError as exc:
            return respond_error(400, "Invalid request body", str(exc))
        user = self.user(request)
        agent_ref = body.get("agent_ref")
        if agent_ref is None:
            return respond_error(400, "agent_ref is required")
        agent = self._agent_by_id(python_identifier(agent_ref))
        if agent is None:
            return respond_error(
                400, f"Agent ref is invalid, please check the agent ref {agent_ref}", "failed to get agent: not found"
            )
        session_id = body.get("id") or str(uuid.uuid4())
        now = _now()
        row: dict[str, Any] = {
            "id": session_id,
            "user_id": user,
            "created_at": now,
            "updated_at": now,
            "agent_id": agent.id,
        }
        if body.get("name") is not None:
            row["name"] = body["name"]
        if body.get("source") is not None:
            row["source"] = body["source"]
        self._store(row)
        return respond(row, "Successfully created session", 201)

    async def sessions_for_agent(self, request: Request) -> Response:
        """SessionsHandler.HandleGetSessionsForAgent (rows are SessionWithShareToken)."""
        ref = f"{request.path_params['namespace']}/{request.path_params['name']}"
        agent = self._agent_by_id(python_identifier(ref))
        if agent is None:
            return respond_error(404, "Agent not found", "failed to get agent: not found")
        user = self.user(request)
        rows = [
            r
            for r in self.sessions.values()
            if r["user_id"] == user and r.get("agent_id") == agent.id and "deleted_at" not in r
        ]
        rows.sort(key=lambda r: (r["updated_at"], r["created_at"]), reverse=True)
        return respond(rows, "Successfully listed sessions")

    async def get_session(self, request: Request) -> Response:
        """SessionsHandler.HandleGetSession: {"session": ..., "events": [...]}."""
        session_id = request.path_params["session_id"]
        user = self.user(request)
        row = self._session(session_id, user)
        if row is None:
            return respond_error(404, "Session not found", f"failed to get session {session_id}: not found")
        limit = request.query_params.get("limit")
        if limit is not None and not limit.lstrip("-").isdigit():
            return respond_error(400, f'failed to parse limit: strconv.Atoi: parsing "{limit}": invalid syntax')
        agent = self._agent_by_id(row.get("agent_id"))
        events = []
        for task in await self._agent_tasks(agent, session_id, user) if agent else []:
            for message in task.get("history") or []:
                events.append(
                    {
                        "id": message.get("messageId"),
                        "session_id": session_id,
                        "user_id": user,
                        "created_at": row["created_at"],
                        "updated_at": row["updated_at"],
                        "data": json.dumps(message),
                    }
                )
        return respond({"session": row, "events": events}, "Successfully retrieved session")

    async def list_tasks(self, request: Request) -> Response:
        """SessionsHandler.HandleListTasksForSession (ListTasksForSession orders by created_at ASC)."""
        session_id = request.path_params["session_id"]
        user = self.user(request)
        row = self._session(session_id, user)
        if row is None:
            return respond_error(
                404, "Session not found for given ID", f"failed to get session {session_id}: not found"
            )
        wire = self._wire(request)
        if self.flavor != "ae5a948" and wire is None:
            version = request.headers.get("A2A-Version", "")
            return respond_error(400, "Unsupported A2A version", f"unsupported A2A version {json.dumps(version)}")
        agent = self._agent_by_id(row.get("agent_id"))
        tasks = await self._agent_tasks(agent, session_id, user) if agent else []
        if self.flavor == "ae5a948" or wire == _V10:
            tasks = [task_v1(t) for t in tasks]
        return respond(tasks, "Successfully retrieved session tasks")

    async def update_session(self, request: Request) -> Response:
        """SessionsHandler.HandleUpdateSession (PUT and PATCH)."""
        session_id = request.path_params["session_id"]
        try:
            body = json.loads(await request.body())
        except ValueError as exc:
            return respond_error(400, "Invalid request body", str(exc))
        if body.get("name") is None and body.get("agent_ref") is None:
            return respond_error(400, "at least one of name or agent_ref is required")
        row = self._session(session_id, self.user(request))
        if row is None:
            return respond_error(404, "Session not found", f"failed to get session {session_id}: not found")
        if body.get("name") is not None:
            row["name"] = body["name"]
        self._store(row)
        return respond(row, "Successfully updated session")

    async def delete_session(self, request: Request) -> Response:
        """SessionsHandler.HandleDeleteSession: a soft delete; data is ``struct{}{}``."""
        row = self._session(request.path_params["session_id"], self.user(request))
        if row is not None:
            row["deleted_at"] = _now()
        return respond({}, "Session deleted successfully")

    # -- tasks: handlers/tasks.go ----------------------------------------------------------------
    async def get_task(self, request: Request) -> Response:
        """TasksHandler.HandleGetTask."""
        task_id = request.path_params["task_id"]
        user = self.user(request)
        for row in self.sessions.values():
            agent = self._agent_by_id(row.get("agent_id"))
            if row["user_id"] != user or agent is None:
                continue
            for task in await self._agent_tasks(agent, row["id"], user):
                if task.get("id") == task_id:
                    return respond(task_v1(task), "Successfully retrieved task")
        return respond_error(404, "Task not found", f"failed to get task {task_id}: not found")

    # -- the A2A proxy: core/internal/a2a/a2a_handler_mux.go -------------------------------------
    async def a2a(self, request: Request) -> Response:
        """handlerMux.ServeHTTP, then the agent's handler (card, or JSON-RPC passthrough)."""
        ref = f"{request.path_params['namespace']}/{request.path_params['name']}"
        agent = self.agents.get(ref)
        if agent is None:
            # routeKey: "sandboxes/NS/NAME" on the sandbox prefix, "NS/NAME" on /api/a2a (v0.10)
            key = f"sandboxes/{ref}" if request.url.path.startswith("/api/a2a-sandboxes/") else ref
            return PlainTextResponse(f"Agent {key} not found\n", status_code=404)
        rest = request.path_params.get("rest", "")
        user = self.user(request)
        if rest.endswith(".well-known/agent-card.json"):
            return JSONResponse(await self._card(agent, request))
        wire = self._wire(request)
        if wire is None:
            return PlainTextResponse(
                f"unsupported A2A version {request.headers.get('A2A-Version')!r}\n", status_code=400
            )
        if self.flavor == "ae5a948" and wire != _V10:
            return PlainTextResponse("unsupported negotiated A2A wire version\n", status_code=400)
        body = await request.body()
        self._record_context(agent, body, user)
        headers = {k: v for k, v in request.headers.items() if k.lower() in ("content-type", "accept", "a2a-version")}
        headers["X-User-Id"] = user  # UnsecureAuthenticator.UpstreamAuth forwards the user
        upstream = self._http.build_request("POST", agent.url, content=body, headers=headers)
        response = await self._http.send(upstream, stream=True)

        async def relay() -> AsyncIterator[bytes]:
            try:
                async for chunk in response.aiter_raw():
                    yield chunk
            finally:
                await response.aclose()

        kept = {k: v for k, v in response.headers.items() if k.lower() in ("content-type", "cache-control")}
        return StreamingResponse(relay(), status_code=response.status_code, headers=kept)

    def _record_context(self, agent: Agent, body: bytes, user: str) -> None:
        """What kagent-adk's session service does for a context it has not seen: create the
        session in the controller (source "user", the agent's ref)."""
        try:
            message = json.loads(body)["params"]["message"]
        except (ValueError, KeyError, TypeError):
            return
        context = message.get("contextId") if isinstance(message, dict) else None
        if not isinstance(context, str) or not context:
            return
        row = self.sessions.get(context)
        if row is None:
            now = _now()
            row = {"id": context, "user_id": user, "created_at": now, "updated_at": now, "agent_id": agent.id}
        self._store(row)

    async def _card(self, agent: Agent, request: Request) -> dict[str, Any]:
        """The agent's card as the controller serves it (its URL the controller's proxy path)."""
        response = await self._http.get(agent.url.rstrip("/") + "/.well-known/agent-card.json")
        card = response.json()
        here = str(request.url).split(".well-known/")[0]
        for iface in card.get("supportedInterfaces") or []:
            iface["url"] = here
        card["url"] = here
        capabilities = card.setdefault("capabilities", {})
        extensions = capabilities.get("extensions") or []
        if agent.rewind_addon:
            # the add-on advertises rewind over A2A (kagent has no REST rewind or fork routes)
            for ext in extensions:
                if isinstance(ext.get("params"), dict):
                    ext["params"] = {k: v for k, v in ext["params"].items() if k in ("rewind", "metadata_key")}
                    ext["params"]["rewind"] = ["a2a"]
        else:
            capabilities["extensions"] = [
                e for e in extensions if not str(e.get("uri", "")).startswith("urn:rewindtui:")
            ]
        return card

    # -- the app ---------------------------------------------------------------------------------
    def app(self) -> Starlette:
        async def not_found(request: Request, exc: Exception) -> Response:
            return PlainTextResponse("404 page not found\n", status_code=404)

        def logged(fn: Any) -> Any:
            async def handler(request: Request) -> Response:
                self.requests.append((request.method, request.url.path))
                self.versions.append(request.headers.get("A2A-Version"))
                return await fn(request)

            return handler

        a2a_prefixes = ["/api/a2a-sandboxes"] + (["/api/a2a"] if self.flavor != "ae5a948" else [])
        routes = [
            # server.go, setupRoutes(): "Sessions - using database handlers"
            Route("/api/sessions", logged(self.list_sessions), methods=["GET"]),
            Route("/api/sessions", logged(self.create_session), methods=["POST"]),
            Route("/api/sessions/agent/{namespace}/{name}", logged(self.sessions_for_agent), methods=["GET"]),
            Route("/api/sessions/{session_id}", logged(self.get_session), methods=["GET"]),
            Route("/api/sessions/{session_id}/tasks", logged(self.list_tasks), methods=["GET"]),
            Route("/api/sessions/{session_id}", logged(self.delete_session), methods=["DELETE"]),
            Route("/api/sessions/{session_id}", logged(self.update_session), methods=["PUT", "PATCH"]),
            # "Tasks"
            Route("/api/tasks/{task_id}", logged(self.get_task), methods=["GET"]),
        ]
        for prefix in a2a_prefixes:
            # "A2A": s.router.PathPrefix(APIPathA2ASandboxes + "/{namespace}/{name}")
            routes.append(Route(prefix + "/{namespace}/{name}/{rest:path}", logged(self.a2a), methods=["GET", "POST"]))
            routes.append(Route(prefix + "/{namespace}/{name}", logged(self.a2a), methods=["GET", "POST"]))
        return Starlette(routes=routes, exception_handlers={404: not_found})
