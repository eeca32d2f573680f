"""Assembly of the embedded server's ASGI app (Starlette).

Routes:

* ``POST /api/a2a/local/demo/`` -- A2A JSON-RPC, both dialects (a2a-sdk's
  ``JsonRpcDispatcher`` with v0.3 compat over :class:`AgentRequestHandler`;
  a rewind-only control message takes :mod:`fast_rewind` first).
* ``GET {agent}/.well-known/agent-card.json`` (and ``agent.json``), also at the
  root ``/.well-known/...``.
* ``/api/...`` -- REST (``rest.py``).

Data directory layout: ``rewindtui.db`` (sessions, tasks, messages),
``adk_sessions.db`` (ADK's ``DatabaseSessionService``), ``artifacts/`` (ADK's
``FileArtifactService``).
"""

from __future__ import annotations

import contextlib
import logging
import os
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path

from a2a.server.routes.jsonrpc_dispatcher import JsonRpcDispatcher
from google.adk.artifacts.file_artifact_service import FileArtifactService
from google.adk.runners import Runner
from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from rewindtui.server.adk_sessions import CachedDatabaseSessionService, sqlite_url
from rewindtui.server.agent import build_agent
from rewindtui.server.card import agent_card_json, build_agent_card
from rewindtui.server.demo_model import DEMO_MODEL_NAME
from rewindtui.server.executor import AgentService
from rewindtui.server.fast_rewind import FastRewind
from rewindtui.server.handler import AgentRequestHandler, UserContextBuilder
from rewindtui.server.paths import AGENT_NAME, AGENT_PATH, AGENT_REF, API_PATH, APP_NAME
from rewindtui.server.rest import build_rest_routes
from rewindtui.server.store import Store

log = logging.getLogger(__name__)

STORE_FILE = "rewindtui.db"
ADK_FILE = "adk_sessions.db"
ARTIFACTS_DIR = "artifacts"


CACHE_ENV = "REWINDTUI_SESSION_CACHE"
FAST_REWIND_ENV = "REWINDTUI_FAST_REWIND"  # "0": rewind Tasks go through a2a-sdk's rendering too


def _cache_size() -> int:
    """How many ADK sessions to keep in memory (env ``REWINDTUI_SESSION_CACHE``; 0 turns the cache off)."""
    try:
        return max(0, int(os.environ.get(CACHE_ENV, "16")))
    except ValueError:
        return 16


@dataclass
class ServerParts:
    """The pieces of a running app, for tests and benchmarks (``app.state.parts``)."""

    store: Store
    session_service: CachedDatabaseSessionService
    runner: Runner
    service: AgentService


def create_app(
    data_dir: Path, base_url: str, *, model: str | None = None, demo_delay: float = 0.0
) -> Starlette:
    """The ASGI app serving the agent at ``{base_url}/api/a2a/local/demo/``."""
    data_dir = Path(data_dir)
    data_dir.mkdir(parents=True, exist_ok=True)
    base_url = base_url.rstrip("/")
    agent_url = base_url + AGENT_PATH
    api_url = base_url + API_PATH

    store = Store(data_dir / STORE_FILE)
    session_service = CachedDatabaseSessionService(
        sqlite_url(str(data_dir / ADK_FILE)), max_sessions=_cache_size()
    )
    runner = Runner(
        app_name=APP_NAME,
        agent=build_agent(model, demo_delay),
        session_service=session_service,
        artifact_service=FileArtifactService(data_dir / ARTIFACTS_DIR),
    )
    service = AgentService(
        store=store, session_service=session_service, runner=runner, app_name=APP_NAME, agent_ref=AGENT_REF
    )
    parts = ServerParts(store=store, session_service=session_service, runner=runner, service=service)

    card = agent_card_json(
        build_agent_card(agent_url=agent_url, api_url=api_url, name=AGENT_NAME, model=model or DEMO_MODEL_NAME)
    )
    dispatcher = JsonRpcDispatcher(
        request_handler=AgentRequestHandler(service),
        context_builder=UserContextBuilder(),
        enable_v0_3_compat=True,
    )

    fast_rewind = FastRewind(service) if os.environ.get(FAST_REWIND_ENV, "1") != "0" else None

    async def agent_card(request: Request) -> Response:
        return JSONResponse(card)

    async def a2a_endpoint(request: Request) -> Response:
        if fast_rewind is not None:
            response = await fast_rewind.maybe_handle(request)
            if response is not None:
                return response
        return await dispatcher.handle_requests(request)

    routes = [
        Route(AGENT_PATH, a2a_endpoint, methods=["POST"]),
        Route(AGENT_PATH.rstrip("/"), a2a_endpoint, methods=["POST"]),
    ]
    for prefix in (AGENT_PATH.rstrip("/"), ""):
        for name in ("agent-card.json", "agent.json"):
            routes.append(Route(f"{prefix}/.well-known/{name}", agent_card, methods=["GET"]))
    routes.extend(build_rest_routes(service))

    @contextlib.asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        await store.open()
        try:
            await session_service.prepare_tables()
            interrupted = await service.fail_interrupted()
            if interrupted:
                log.warning("marked %d unfinished task(s) from an earlier run as failed", interrupted)
            yield
        finally:
            await service.shutdown()
            with contextlib.suppress(Exception):
                await runner.close()
            await session_service.close()
            await store.close()

    async def http_error(request: Request, exc: Exception) -> Response:
        assert isinstance(exc, HTTPException)
        return JSONResponse({"error": exc.detail or "error"}, status_code=exc.status_code)

    app = Starlette(routes=routes, lifespan=lifespan, exception_handlers={HTTPException: http_error})
    app.state.parts = parts
    app.state.agent_card = card
    return app
