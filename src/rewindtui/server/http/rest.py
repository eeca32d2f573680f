"""REST routes in the style of kagent's controller, under ``/api``.

=========================================  =====================================================
``GET    /api/sessions``                    the user's sessions (most recently updated first)
``GET    /api/sessions/agent/{ns}/{name}``  the user's sessions of that agent (kagent's route; this
                                            server has one agent: ``local/demo``; others are 404)
``POST   /api/sessions``                    create; body ``{"name"?, "id"?, "agent_ref"?, "user_id"?}``
                                            -> 201 (kagent's body: ``agent_ref`` must be this agent)
``GET    /api/sessions/{id}``               one session
``PUT    /api/sessions/{id}``               rename it; body ``{"name"}`` -> the session
``DELETE /api/sessions/{id}``               delete it (tasks, messages and the ADK session)
``GET    /api/sessions/{id}/tasks``         its tasks, oldest first; ``?include_rewound=true``
                                            adds rewound ones (``metadata.rewindtui_rewound``);
                                            ``?limit=N`` only the newest N (1..1000), with
                                            ``next_page_token`` in the envelope for
                                            ``?limit=N&before=<token>`` (the N before them)
``GET    /api/tasks/{id}``                  one task
``POST   /api/sessions/{id}/rewind``        body ``{"rewind_before_invocation_id", "history_length"?}``
                                            -> the rewind Task (its history is the effective
                                            history; with ``history_length``, its newest N
                                            messages, the whole count in its metadata)
``POST   /api/sessions/{id}/redo``          body ``{"rewind_task_id"?, "history_length"?}`` -> undo
                                            that rewind (without: the last one); answers like rewind
``POST   /api/sessions/{id}/fork``          same body as rewind -> 201 with the new session
=========================================  =====================================================

Success: ``{"error": false, "data": ..., "message": "..."}``. Failure:
``{"error": "<text>"}`` with 400 (bad input), 404 (missing, or another user's),
409 (a turn is running on the session / id taken), 503 (shutting down).
Tasks are A2A 0.3 JSON. The user comes from ``X-User-Id`` or ``?user_id=``
(default ``local``).
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from rewindtui.a2a import contract
from rewindtui.server.http.users import InvalidUser, resolve_user
from rewindtui.server.service.requests import check_id
from rewindtui.server.service.state_view import StateView
from rewindtui.server.shared.errors import BadRequest, NotFound, ServiceError
from rewindtui.server.shared.paths import AGENT_REF, API_PATH
from rewindtui.server.shared.wire import dumps
from rewindtui.server.storage.store import InvalidPageToken

if TYPE_CHECKING:  # the server's front builds these routes over the store alone, before ADK loads
    from rewindtui.server.service.agent_service import AgentService

API = API_PATH
#: the largest page of ``GET /api/sessions/{id}/tasks?limit=``
MAX_TASKS_PAGE = 1000


def ok(data: Any, message: str, status: int = 200) -> JSONResponse:
    return JSONResponse({"error": False, "data": data, "message": message}, status_code=status)


def ok_raw(
    data_json: str | list[bytes], message: str, status: int = 200, extra: dict[str, str] | None = None
) -> Response:
    """Success envelope around already-serialized JSON (task lists can be large: given as UTF-8
    pieces, they are joined once, with no copy of the whole as text); ``extra``: more top-level
    string fields."""
    pieces = [data_json.encode()] if isinstance(data_json, str) else data_json
    tail = "".join(f",{dumps(k)}:{dumps(v)}" for k, v in (extra or {}).items())
    body = b"".join([b'{"error":false,"data":', *pieces, f',"message":{dumps(message)}{tail}}}'.encode()])
    return Response(body, status_code=status, media_type="application/json")


def error(message: str, status: int) -> JSONResponse:
    return JSONResponse({"error": message}, status_code=status)


def _with_history(task: dict[str, Any], bodies: list[str]) -> list[bytes]:
    """A rewind's Task as UTF-8 JSON pieces, its history spliced in from raw message bodies."""
    return [dumps(task)[:-1].encode(), b',"history":[', b",".join([b.encode() for b in bodies]), b"]}"]


def _history_length(body: dict[str, Any]) -> int | None:
    """The body's bound on a rewind's (redo's) answer: at most this many of the newest messages."""
    value = body.get(contract.REST_HISTORY_LENGTH_FIELD)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise BadRequest(f"{contract.REST_HISTORY_LENGTH_FIELD} must be a whole number, 0 or more")
    return value


def _flag(request: Request, name: str) -> bool:
    return request.query_params.get(name, "").lower() in ("1", "true", "yes", "on")


async def _json_body(request: Request) -> dict[str, Any]:
    raw = await request.body()
    if not raw.strip():
        return {}
    try:
        body = json.loads(raw)
    except ValueError:
        raise BadRequest("the request body is not valid JSON") from None
    if not isinstance(body, dict):
        raise BadRequest("the request body must be a JSON object")
    return body


def build_rest_routes(service: AgentService) -> list[Route]:
    def endpoint(fn: Any) -> Any:
        async def wrapped(request: Request) -> Response:
            try:
                user_id = resolve_user(request)
                return await fn(request, user_id)
            except InvalidUser as exc:
                return error(str(exc), 400)
            except ServiceError as exc:
                return error(exc.message, exc.status)

        return wrapped

    async def list_sessions(request: Request, user_id: str) -> Response:
        rows = await service.list_sessions(user_id)
        return ok([r.to_json() for r in rows], "Successfully listed sessions")

    def check_agent(agent_ref: object) -> None:
        if agent_ref != AGENT_REF:
            raise NotFound(f"agent {agent_ref} not found (this server has one agent: {AGENT_REF})")

    async def list_agent_sessions(request: Request, user_id: str) -> Response:
        # kagent: SessionsHandler.HandleGetSessionsForAgent (GET /api/sessions/agent/{namespace}/{name})
        check_agent(f"{request.path_params['namespace']}/{request.path_params['name']}")
        return await list_sessions(request, user_id)

    async def create_session(request: Request, user_id: str) -> Response:
        body = await _json_body(request)
        # kagent's SessionsHandler.HandleCreateSession body: agent_ref names the agent; its user_id
        # is a label like X-User-Id (the header or query decides whose session it is)
        if body.get("agent_ref") is not None:
            check_agent(body["agent_ref"])
        name = body.get("name")
        session_id = body.get("id")
        if name is not None and not isinstance(name, str):
            raise BadRequest("name must be a string")
        if session_id is not None:
            check_id(session_id, "session id")
        row = await service.create_session(user_id, name=name, session_id=session_id)
        return ok(row.to_json(), "Successfully created session", 201)

    async def get_session(request: Request, user_id: str) -> Response:
        row = await service.session_detail(user_id, request.path_params["session_id"])
        return ok(row.to_json(), "Successfully retrieved session")

    async def rename_session(request: Request, user_id: str) -> Response:
        # kagent's SessionsHandler.HandleUpdateSession: the body's name, the session back
        name = (await _json_body(request)).get("name")
        if not isinstance(name, str) or not name.strip():
            raise BadRequest("name must be a non-empty string")
        row = await service.rename_session(user_id, request.path_params["session_id"], " ".join(name.split()))
        return ok(row.to_json(), "Successfully updated session")

    async def delete_session(request: Request, user_id: str) -> Response:
        await service.delete_session(user_id, request.path_params["session_id"])
        return ok(None, "Session deleted")

    async def session_tasks(request: Request, user_id: str) -> Response:
        raw_limit = request.query_params.get(contract.REST_TASKS_LIMIT)
        limit = None
        if raw_limit is not None:
            if not raw_limit.isdigit() or not 1 <= int(raw_limit) <= MAX_TASKS_PAGE:
                raise BadRequest(f"{contract.REST_TASKS_LIMIT} must be a whole number from 1 to {MAX_TASKS_PAGE}")
            limit = int(raw_limit)
        raw_length = request.query_params.get(contract.REST_HISTORY_LENGTH_FIELD)
        if raw_length is not None and not raw_length.isdigit():
            raise BadRequest(f"{contract.REST_HISTORY_LENGTH_FIELD} must be a whole number, 0 or more")
        before = request.query_params.get(contract.REST_TASKS_BEFORE, "")
        if before and limit is None:
            raise BadRequest(f"{contract.REST_TASKS_BEFORE} needs {contract.REST_TASKS_LIMIT}")
        try:
            data, next_token = await service.session_tasks_json(
                user_id,
                request.path_params["session_id"],
                include_rewound=_flag(request, contract.REST_INCLUDE_REWOUND),
                limit=limit,
                before=before,
                history_length=int(raw_length) if raw_length is not None else None,
            )
        except InvalidPageToken:
            raise BadRequest(
                f"invalid {contract.REST_TASKS_BEFORE}: use the {contract.REST_NEXT_PAGE_FIELD} of the previous page"
            ) from None
        if limit is None:
            return ok_raw(data, "Successfully retrieved tasks")
        return ok_raw(data, "Successfully retrieved tasks", extra={contract.REST_NEXT_PAGE_FIELD: next_token})

    async def get_task(request: Request, user_id: str) -> Response:
        return ok_raw(await service.task_json(user_id, request.path_params["task_id"]), "Successfully retrieved task")

    async def rewind(request: Request, user_id: str) -> Response:
        body = await _json_body(request)
        task, bodies = await service.rewind(
            user_id,
            request.path_params["session_id"],
            body.get(contract.REST_BEFORE_FIELD),
            history_length=_history_length(body),
        )
        return ok_raw(_with_history(task, bodies), "Session rewound")

    async def redo(request: Request, user_id: str) -> Response:
        body = await _json_body(request)
        task, bodies = await service.redo(
            user_id,
            request.path_params["session_id"],
            body.get(contract.REST_REDO_FIELD),
            history_length=_history_length(body),
        )
        return ok_raw(_with_history(task, bodies), "Rewind undone")

    async def fork(request: Request, user_id: str) -> Response:
        body = await _json_body(request)
        row = await service.fork(user_id, request.path_params["session_id"], body.get(contract.REST_BEFORE_FIELD))
        return ok(row.to_json(), "Session forked", 201)

    # the agent's session state needs the runner: not on the start-up front's store reader
    context = getattr(service, "context", None)
    state_view = StateView(context) if context is not None else None

    async def session_state(request: Request, user_id: str) -> Response:
        assert state_view is not None
        session = await service.sessions.owned(user_id, request.path_params["session_id"])
        return ok(await state_view.state(session), "Successfully retrieved state")

    state_route = Route(API + contract.REST_STATE.format(id="{session_id}"), endpoint(session_state), methods=["GET"])
    return [
        *([state_route] if state_view is not None else []),
        Route("/api/sessions", endpoint(list_sessions), methods=["GET"]),
        Route("/api/sessions", endpoint(create_session), methods=["POST"]),
        Route("/api/sessions/agent/{namespace}/{name}", endpoint(list_agent_sessions), methods=["GET"]),
        Route("/api/sessions/{session_id}", endpoint(get_session), methods=["GET"]),
        Route("/api/sessions/{session_id}", endpoint(delete_session), methods=["DELETE"]),
        Route("/api/sessions/{session_id}", endpoint(rename_session), methods=["PUT", "PATCH"]),
        Route("/api/sessions/{session_id}/tasks", endpoint(session_tasks), methods=["GET"]),
        Route(API + contract.REST_REWIND.format(id="{session_id}"), endpoint(rewind), methods=["POST"]),
        Route(API + contract.REST_FORK.format(id="{session_id}"), endpoint(fork), methods=["POST"]),
        Route(API + contract.REST_REDO.format(id="{session_id}"), endpoint(redo), methods=["POST"]),
        Route("/api/tasks/{task_id}", endpoint(get_task), methods=["GET"]),
    ]
