"""Assembly of the embedded server's ASGI app (Starlette).

Routes:

* ``POST /api/a2a/local/demo/`` -- A2A JSON-RPC, both dialects (a2a-sdk's
  ``JsonRpcDispatcher`` with v0.3 compat over :class:`AgentRequestHandler`; a rewind-only
  control message takes :mod:`fast_rewind` first, a 1.0 streaming turn :mod:`fast_stream`). A
  request naming a 1.0 method without the ``A2A-Version`` header is served as 1.0 (the two
  dialects' method names do not overlap; a2a-sdk would refuse it as 0.3).
* ``{agent}/message:stream``, ``{agent}/message:send``, ``{agent}/tasks/{id}``, ``{agent}/tasks``,
  ``{agent}/tasks/{id}:cancel``, ``{agent}/tasks/{id}:subscribe`` -- the A2A 1.0 HTTP+JSON binding
  (a2a-sdk's ``create_rest_routes`` over the same :class:`AgentRequestHandler`; its catch-all
  ``/{tenant}`` mount is left out, it would swallow every other route).
* ``GET {agent}/.well-known/agent-card.json`` (and ``agent.json``), also at the root
  ``/.well-known/...`` -- a2a-sdk's own card route (ETag, ``If-None-Match`` -> 304,
  ``Cache-Control: no-cache``).
* ``/api/...`` -- REST (``rest.py``); ``/api/server`` -- the server itself (``control.py``).
* gRPC (A2A 1.0) on a second port of the same host (``grpc_listener.py``, when grpcio is
  installed), over the same request handler; listed in the card once it listens.
* Push notifications (``push_configs.py``): the handler keeps a send's push config and the
  ``*TaskPushNotificationConfig`` methods' configs, and POSTs a task when its turn ends.

Every request passes :class:`~rewindtui.server.http.guard.Guard` first (Host, Origin,
content type, bearer token).

Data directory layout: ``rewindtui.db`` (sessions, tasks, messages, intents),
``adk_sessions.db`` (ADK's ``DatabaseSessionService``), ``artifacts/`` (ADK's
``FileArtifactService``), ``server.lock`` / ``server.json`` (``instance.py``).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import os
import sqlite3
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from a2a.server.request_handlers.response_helpers import build_error_response
from a2a.server.routes.agent_card_routes import create_agent_card_routes
from a2a.server.routes.jsonrpc_dispatcher import JsonRpcDispatcher
from a2a.server.routes.rest_routes import create_rest_routes
from a2a.utils.constants import VERSION_HEADER
from google.adk.artifacts.file_artifact_service import FileArtifactService
from google.adk.runners import Runner
from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Mount, Route

from rewindtui.server.agent.agent import build_agent
from rewindtui.server.agent.demo_model import DEMO_MODEL_NAME
from rewindtui.server.http.body_limit import BodyLimit, max_request_bytes
from rewindtui.server.http.card import agent_card_json, build_agent_card, grpc_interface
from rewindtui.server.http.control import Clients, control_routes
from rewindtui.server.http.fast_rewind import FastRewind
from rewindtui.server.http.fast_stream import FastStream
from rewindtui.server.http.grpc_listener import GrpcListener, url_host_of
from rewindtui.server.http.guard import Guard
from rewindtui.server.http.handler import VERSION_STATE_KEY, UserContextBuilder, precheck
from rewindtui.server.http.options import ServerOptions
from rewindtui.server.http.push_configs import PushingRequestHandler, PushNotifications
from rewindtui.server.http.push_screen import PushScreen, parse_allow
from rewindtui.server.http.rest import build_rest_routes
from rewindtui.server.http.team_turns import TeamTurns
from rewindtui.server.http.team_users import TeamDoor, UserTokens
from rewindtui.server.service.agent_service import AgentService
from rewindtui.server.service.context import ServerContext
from rewindtui.server.service.faults import Checkpoints
from rewindtui.server.service.jobs import Jobs
from rewindtui.server.shared.paths import (
    ADK_FILE,
    AGENT_NAME,
    AGENT_PATH,
    AGENT_REF,
    API_PATH,
    APP_NAME,
    PUSH_FILE,
    STORE_FILE,
)
from rewindtui.server.shared.wire import REWIND_KEY
from rewindtui.server.storage.adk_sessions import CachedDatabaseSessionService, sqlite_url
from rewindtui.server.storage.integrity import DataDirProblem, check_data_dir, describe_open_failure
from rewindtui.server.storage.session_leases import SessionLeases
from rewindtui.server.storage.store import Store
from rewindtui.server.storage.store_pg import startup_lock
from rewindtui.server.storage.team_store import TeamStore
from rewindtui.server.storage.turn_events import TurnEventLog

log = logging.getLogger(__name__)

ARTIFACTS_DIR = "artifacts"
CARD_NAMES = ("agent-card.json", "agent.json")
CARD_CACHE_CONTROL = "no-cache"  # revalidate with the ETag: the card changes when the server restarts
_V1_METHODS = frozenset(JsonRpcDispatcher.METHOD_TO_MODEL)


@dataclass
class ServerParts:
    """The pieces of a running app, for tests and benchmarks (``app.state.parts``)."""

    store: Store
    session_service: CachedDatabaseSessionService
    runner: Runner
    service: AgentService
    clients: Clients
    team: TeamStore
    options: ServerOptions


def _major(raw: str) -> int | None:
    """Major A2A version of a header value (empty means 0.3, as in a2a-sdk); None if unreadable."""
    raw = raw.strip()
    if not raw:
        return 0
    head = raw.split(".", 1)[0]
    return int(head) if head.isdigit() else None


def create_app(
    data_dir: Path,
    base_url: str,
    *,
    model: str | None = None,
    demo_delay: float = 0.0,
    options: ServerOptions | None = None,
    bind_host: str = "127.0.0.1",
    clients: Clients | None = None,
    instance: str = "",
) -> Starlette:
    """The ASGI app serving the agent at ``{base_url}/api/a2a/local/demo/``."""
    options = options or ServerOptions()
    clients = clients or Clients()
    data_dir = Path(data_dir)
    data_dir.mkdir(parents=True, exist_ok=True, mode=0o700)  # private from the start (integrity.py)
    base_url = base_url.rstrip("/")
    agent_url = base_url + AGENT_PATH
    api_url = base_url + API_PATH

    # a team server (--database-url): the store, ADK's sessions and the artifacts in one database
    database_url = options.database_url
    store = Store(data_dir / STORE_FILE, busy_timeout_ms=options.busy_timeout_ms, database_url=database_url)
    session_service = CachedDatabaseSessionService(
        database_url or sqlite_url(str(data_dir / ADK_FILE)), max_sessions=options.session_cache
    )
    artifact_service: Any
    if database_url is not None:
        from rewindtui.server.storage.db_artifacts import DatabaseArtifactService

        artifact_service = DatabaseArtifactService(database_url)
    else:
        artifact_service = FileArtifactService(data_dir / ARTIFACTS_DIR)
    team = TeamStore(database_url or sqlite_url(str(data_dir / STORE_FILE)))
    # replicas on one database: one writer per session across all of them (session_leases.py)
    leases = SessionLeases(database_url) if database_url is not None else None
    runner = Runner(
        app_name=APP_NAME,
        agent=build_agent(model, demo_delay, options.model),
        session_service=session_service,
        artifact_service=artifact_service,
    )
    service = AgentService(
        ServerContext(
            store=store,
            session_service=session_service,
            runner=runner,
            app_name=APP_NAME,
            agent_ref=AGENT_REF,
            checkpoints=Checkpoints(options.pause_at),
            stall_timeout=options.model.stall_timeout,
            jobs=Jobs(leases),
        )
    )
    parts = ServerParts(
        store=store,
        session_service=session_service,
        runner=runner,
        service=service,
        clients=clients,
        team=team,
        options=options,
    )

    card = build_agent_card(
        agent_url=agent_url,
        api_url=api_url,
        name=AGENT_NAME,
        model=model or DEMO_MODEL_NAME,
        needs_token=options.token is not None,
        users=options.users,
    )
    # configs kept across restarts (a team server: in its database, seen by every replica); URLs
    # screened (push_screen)
    push = PushNotifications(
        service, data_dir / PUSH_FILE, PushScreen(parse_allow(options.push_allow or ())), database_url=database_url
    )
    handler = PushingRequestHandler(service, push)
    # a team server: each turn's events in a2a-sdk's task_events table, for followers on other replicas
    turn_events = TurnEventLog(team.engine) if database_url is not None else None
    team_turns = TeamTurns(service, team, turn_events) if database_url is not None else None
    handler.team_turns = team_turns
    dispatcher = JsonRpcDispatcher(
        request_handler=handler,
        context_builder=UserContextBuilder(),
        enable_v0_3_compat=True,
    )
    fast_rewind = FastRewind(service) if options.fast_rewind else None
    fast_stream = FastStream(handler) if options.fast_stream else None
    grpc_listener = GrpcListener(
        handler, bind_host, options.token, url_host_of(base_url), users=TeamDoor(team, store) if options.users else None
    )

    async def a2a_endpoint(request: Request) -> Response:
        raw = await request.body()  # Starlette keeps it for the dispatcher
        try:
            body: Any = json.loads(raw)
        except ValueError:
            body = None
        major = _major(request.headers.get(VERSION_HEADER) or request.query_params.get(VERSION_HEADER) or "")
        if (
            major == 0
            and isinstance(body, dict)
            and body.get("method") in _V1_METHODS
            and not request.headers.get(VERSION_HEADER)
        ):
            setattr(request.state, VERSION_STATE_KEY, "1.0")
            major = 1
        refused = precheck(body)
        if refused is not None:
            return JSONResponse(build_error_response(body.get("id"), refused))
        if fast_rewind is not None and REWIND_KEY.encode() in raw:
            response = await fast_rewind.maybe_handle(request, body, major)
            if response is not None:
                return response
        elif fast_stream is not None and major == 1:
            response = await fast_stream.maybe_handle(request, body)
            if response is not None:
                return response
        return await dispatcher.handle_requests(request)

    def describe() -> dict[str, Any]:
        return {
            "instance": instance,
            "pid": os.getpid(),
            "agent_url": agent_url,
            "api_url": api_url,
            "data_dir": str(data_dir),
        }

    card_paths = [f"{prefix}/.well-known/{name}" for prefix in (AGENT_PATH.rstrip("/"), "") for name in CARD_NAMES]
    routes: list[Any] = [
        Route(AGENT_PATH, a2a_endpoint, methods=["POST"]),
        Route(AGENT_PATH.rstrip("/"), a2a_endpoint, methods=["POST"]),
    ]
    for path in card_paths:
        routes += create_agent_card_routes(card, card_url=path, cache_control=CARD_CACHE_CONTROL)
    routes += control_routes(describe=describe, clients=clients)
    routes += build_rest_routes(service)
    rest_binding = create_rest_routes(handler, context_builder=UserContextBuilder(), path_prefix=AGENT_PATH.rstrip("/"))
    routes += [r for r in rest_binding if not isinstance(r, Mount)]

    @contextlib.asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        for note in await asyncio.to_thread(check_data_dir, data_dir):  # modes, damage, consistency
            log.warning("%s", note)
        async with startup_lock(database_url):  # replicas starting at once create the tables one by one
            try:
                await store.open()
            except sqlite3.Error as exc:  # e.g. the disk filled up since the check: say so, name the file
                if database_url is not None:
                    raise
                raise DataDirProblem(describe_open_failure(store.path, exc)) from exc
            try:
                await team.open()
                if turn_events is not None:
                    await turn_events.initialize()  # a2a-sdk's create_all of its task_events table
                await session_service.prepare_tables()
            except BaseException:
                await store.close()
                raise
        try:
            report = await service.startup()
            if report:
                log.warning(
                    "recovered from an earlier run: %d journaled change(s) completed, %d dropped, "
                    "%d unfinished turn(s) marked failed (%d message(s) restored)",
                    report.intents_completed,
                    report.intents_dropped,
                    report.turns_failed,
                    report.messages_restored,
                )
            await push.start()  # notifications still owed from an earlier run
            grpc_url = await grpc_listener.start()  # with users: their tokens, as over HTTP (grpc_users.py)
            if grpc_url is not None:  # the card lists the gRPC interface once it listens
                card.supported_interfaces.append(grpc_interface(grpc_url))
                app.state.agent_card = agent_card_json(card)
            clients.start()
            if team_turns is not None:
                team_turns.start()  # cancels other replicas ask of this one's turns
            yield
        finally:
            if team_turns is not None:
                await team_turns.stop()
            await grpc_listener.stop()
            await push.close()
            await clients.stop()
            await service.shutdown()
            if team_turns is not None:
                await team_turns.close()  # the last events of turns the shutdown ended
            if leases is not None:
                await leases.close()
            with contextlib.suppress(Exception):
                await runner.close()
            await session_service.close()
            if database_url is not None:
                await artifact_service.close()
            await team.close()
            await store.close()

    async def http_error(request: Request, exc: Exception) -> Response:
        assert isinstance(exc, HTTPException)
        return JSONResponse({"error": exc.detail or "error"}, status_code=exc.status_code)

    app = Starlette(routes=routes, lifespan=lifespan, exception_handlers={HTTPException: http_error})
    app.state.parts = parts
    app.state.push = push
    app.state.agent_card = agent_card_json(card)
    # inside the Guard (added first: Starlette runs the last added outermost): no body is read
    # for a client the Guard turns away
    app.add_middleware(BodyLimit, max_bytes=max_request_bytes(os.environ), jsonrpc_paths=(AGENT_PATH,))
    if options.users:  # inside the guard: the user comes from the request's own token
        app.add_middleware(UserTokens, team=team, store=store, public_paths=frozenset(card_paths))
    app.add_middleware(
        Guard,
        bind_host=bind_host,
        token=options.token,
        allowed_hosts=options.allowed_hosts,
        a2a_paths=(AGENT_PATH, AGENT_PATH.rstrip("/")),
        public_paths=card_paths,
    )
    return app
