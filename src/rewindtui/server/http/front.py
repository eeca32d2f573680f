"""The server's front: it answers while the agent runtime is still loading.

Importing google-adk and building the agent app takes seconds (most of a launch). ``rewindtui
serve`` (what the app spawns) therefore serves this front at once: the agent card, and the
read-only REST a client opens a session with (``GET /api/sessions``, a session, its tasks, a
task), answered from the store alone, and the server's control routes (``GET /api/server``, an
app attaching or detaching: :mod:`rewindtui.server.http.control`), so a second app attaches at
once. Every other request (a turn, a rewind, A2A JSON-RPC, ...)
waits until the full app (:func:`rewindtui.server.http.app.create_app`) is built and started in the
background, then goes to it; from then on everything does.

A server an app spawned (``load_when_idle``) starts that load only once its clients are done
opening: the app's start and connect (its imports, the card, the session) and the agent runtime's
imports (about a second of CPU) would otherwise share the machine's cores, and the app is what
the user waits for. The load starts at the first of: a request that needs the full app (a turn
never waits for an idle moment); ``load_when_idle`` seconds with no early request after one that
read the store (the card alone does not count: a client reads its session after it); ``load_by``
seconds after the start.

A store that recovery has work on (journaled changes, unfinished turns from a crash), or whose
turns differ from the agent's database (:mod:`rewindtui.server.storage.crosscheck`), is not read
early: the front then waits for the full app for everything but the control routes, so nothing
is shown before recovery made it true.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Match, Route
from starlette.types import Receive, Scope, Send

from rewindtui.a2a import contract
from rewindtui.server.http.options import ServerOptions
from rewindtui.server.shared.paths import ADK_FILE, AGENT_PATH, APP_NAME, SERVER_PATH, STORE_FILE
from rewindtui.server.storage.crosscheck import crosscheck
from rewindtui.server.storage.store import Store
from rewindtui.server.storage.store_reader import StoreReader

log = logging.getLogger(__name__)

CARD_NAMES = ("agent-card.json", "agent.json")


def _on_daemon_thread(fn: Callable[[], Any]) -> asyncio.Future[Any]:
    """``fn()`` on a daemon thread (unlike ``asyncio.to_thread``'s pool, which the interpreter
    joins at exit: a server asked to stop while it still imports must not wait for the import)."""
    loop = asyncio.get_running_loop()
    future: asyncio.Future[Any] = loop.create_future()

    def settle(result: Any, error: BaseException | None) -> None:
        if future.done():
            return
        if error is not None:
            future.set_exception(error)
        else:
            future.set_result(result)

    def run() -> None:
        try:
            result, error = fn(), None
        except BaseException as exc:
            result, error = None, exc
        with contextlib.suppress(RuntimeError):  # the loop is closed: nobody waits any more
            loop.call_soon_threadsafe(settle, result, error)

    threading.Thread(target=run, name="rewindtui-agent-loader", daemon=True).start()
    return future


def _starting(card: dict[str, Any]) -> dict[str, Any]:
    """The card as the front answers it: its rewind extension says the agent is still starting
    (``contract.PARAM_STARTING``), so a client can say why its first turn waits."""
    extensions = []
    for extension in card.get("capabilities", {}).get("extensions", []):
        if isinstance(extension, dict) and extension.get("uri") == contract.EXTENSION_URI:
            extension = {**extension, "params": {**extension.get("params", {}), contract.PARAM_STARTING: True}}
        extensions.append(extension)
    return {**card, "capabilities": {**card.get("capabilities", {}), "extensions": extensions}}


async def _buffered(receive: Receive) -> Receive:
    """The request's body read now, and a ``receive`` that hands it over. After the body it
    never reports a disconnect: the request is served to its end, like a turn whose client left."""
    chunks: list[bytes] = []
    while True:
        message = await receive()
        if message["type"] != "http.request":
            break
        chunks.append(message.get("body", b""))
        if not message.get("more_body", False):
            break
    pending = [{"type": "http.request", "body": b"".join(chunks), "more_body": False}]

    async def replay() -> Any:
        if pending:
            return pending.pop()
        await asyncio.Event().wait()  # nothing more comes

    return replay


class Front:
    """The ASGI app ``serve`` runs: the front until the full app is up, then the full app.

    ``build()`` makes the full app (heavy imports: it runs on a worker thread); ``card()`` makes
    the agent card's JSON (lighter: it comes first)."""

    def __init__(
        self,
        data_dir: Path,
        *,
        build: Callable[[], Any],
        card: Callable[[], dict[str, Any]],
        options: ServerOptions,
        bind_host: str,
        on_loaded: Callable[[Any], None] | None = None,
        on_failed: Callable[[], None] | None = None,
        control: list[Route] | None = None,
        load_when_idle: float | None = None,
        load_by: float = 2.0,
    ) -> None:
        self.data_dir = Path(data_dir)
        self._build = build
        self._card = card
        self.options = options
        self.bind_host = bind_host
        self._on_loaded = on_loaded
        self._on_failed = on_failed
        self._control = list(control or ())  # answered early even when the store is not
        self.app: Any = None  # the full app, once started
        self.error: BaseException | None = None
        self._ready = asyncio.Event()
        self._card_ready = asyncio.Event()
        self._card_json: dict[str, Any] | None = None
        self._store: Store | None = None
        self._early: Any = None  # the front's own Starlette app (None: nothing is answered early)
        self._loader: asyncio.Task[None] | None = None
        self._stack = contextlib.AsyncExitStack()
        self._inflight = 0  # early requests still reading the front's store
        self._held = 0  # requests that waited for the full app and are not done yet
        self._load_when_idle = load_when_idle
        self._load_by = load_by
        self._go = asyncio.Event()  # the full app is wanted now (a request waits for it)
        self._last_read: float | None = None  # when the last early read of the store ended
        self._card_paths: frozenset[str] = frozenset()

    @property
    def loaded(self) -> bool:
        return self._ready.is_set()

    async def wait_loaded(self) -> None:
        await self._ready.wait()

    # -- ASGI ----------------------------------------------------------------------------------
    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "lifespan":
            await self._lifespan(receive, send)
            return
        if not self._ready.is_set() and self._early is not None and self._answers_early(scope):
            self._inflight += 1
            try:
                await self._early(scope, receive, send)
            finally:
                self._inflight -= 1
                if scope["path"] not in self._card_paths and not scope["path"].startswith(SERVER_PATH):
                    self._last_read = asyncio.get_running_loop().time()
            return
        if self._ready.is_set():
            await self._to_app(scope, receive, send)
            return
        # read the request now: a client that goes away while the agent loads (the app was closed
        # right after sending) must not take its message with it; once the full app has it, the
        # turn runs (and is stopped, stored canceled, if the server stops) as any other
        self._held += 1
        self._go.set()
        try:
            replay = await _buffered(receive) if scope["type"] == "http" else receive
            await self._ready.wait()
            await self._to_app(scope, replay, send)
        finally:
            self._held -= 1

    async def _to_app(self, scope: Scope, receive: Receive, send: Send) -> None:
        if self.app is None:
            response = JSONResponse({"error": f"the agent could not start: {self.error}"}, status_code=503)
            await response(scope, receive, send)
            return
        await self.app(scope, receive, send)

    async def before_shutdown(self, grace: float = 3.0) -> None:
        """Before the server stops: a message that waited for the agent is not dropped -- the load
        finishes, the message is taken (stored), and then, as always, the running turns are
        cancelled (stored canceled). With nothing waiting, a load in progress is abandoned."""
        if self._held and not self._ready.is_set():
            await self._ready.wait()
        if self.app is None:
            return
        service = self.app.state.parts.service
        deadline = asyncio.get_running_loop().time() + grace
        while self._held and not service.busy_sessions() and asyncio.get_running_loop().time() < deadline:
            await asyncio.sleep(0.02)  # the waiting request is on its way to its turn
        await service.shutdown()

    def _answers_early(self, scope: Scope) -> bool:
        if scope["type"] != "http":
            return False
        for route in self._early.router.routes:
            match, _ = route.matches(scope)
            if match is Match.FULL:
                return True
        return False

    async def _lifespan(self, receive: Receive, send: Send) -> None:
        while True:
            message = await receive()
            if message["type"] == "lifespan.startup":
                try:
                    await self._startup()
                except BaseException as exc:
                    await send({"type": "lifespan.startup.failed", "message": str(exc)})
                    return
                await send({"type": "lifespan.startup.complete"})
            elif message["type"] == "lifespan.shutdown":
                await self._shutdown()
                await send({"type": "lifespan.shutdown.complete"})
                return

    # -- start and stop --------------------------------------------------------------------------
    async def _startup(self) -> None:
        self._early = await self._early_app()
        self._loader = asyncio.get_running_loop().create_task(self._load())

    async def _early_app(self) -> Any:
        """The front's own app: the server's control routes (who it is, who uses it) and, unless
        recovery has work on the store, the card and the store's read-only REST. None: nothing."""
        routes: list[Any] = list(self._control)
        card_paths = [f"{prefix}/.well-known/{name}" for prefix in (AGENT_PATH.rstrip("/"), "") for name in CARD_NAMES]
        store = await self._readable_store()
        if store is not None:
            self._store = store
            from rewindtui.server.http.rest import build_rest_routes

            routes += [Route(path, self._card_endpoint, methods=["GET"]) for path in card_paths]
            self._card_paths = frozenset(card_paths)
            reader: Any = StoreReader(store)
            routes += [r for r in build_rest_routes(reader) if set(r.methods or ()) <= {"GET", "HEAD"}]
        if not routes:
            return None
        from rewindtui.server.http.guard import Guard

        app = Starlette(routes=routes)
        app.add_middleware(
            Guard,
            bind_host=self.bind_host,
            token=self.options.token,
            allowed_hosts=self.options.allowed_hosts,
            a2a_paths=(AGENT_PATH, AGENT_PATH.rstrip("/")),
            public_paths=card_paths,
        )
        return app

    async def _readable_store(self) -> Store | None:
        """The store, open, or None when it cannot be read before recovery ran (or the server has
        users: who may read what is the full app's to say, team_users.py)."""
        if self.options.users:
            return None
        store = Store(
            self.data_dir / STORE_FILE,
            busy_timeout_ms=self.options.busy_timeout_ms,
            database_url=self.options.database_url,
        )
        await store.open()
        try:
            if (
                await store.intents()
                or await store.unfinished_tasks()
                or await crosscheck(store, self.data_dir / ADK_FILE, APP_NAME)  # the two disagree: said first
            ):
                await store.close()
                return None
        except Exception:
            await store.close()
            return None
        return store

    async def _card_endpoint(self, request: Request) -> Response:
        await asyncio.wait(
            [asyncio.ensure_future(self._card_ready.wait()), asyncio.ensure_future(self._ready.wait())],
            return_when=asyncio.FIRST_COMPLETED,
        )
        if self._card_json is None:
            return JSONResponse({"error": f"the agent could not start: {self.error}"}, status_code=503)
        return JSONResponse(_starting(self._card_json), headers={"Cache-Control": "no-cache"})

    async def _load(self) -> None:
        try:
            if self._store is not None:  # the card is answered early
                self._card_json = await _on_daemon_thread(self._card)
                self._card_ready.set()
            await self._wanted()
            app = await _on_daemon_thread(self._build)
            await self._stack.enter_async_context(app.router.lifespan_context(app))
            self.app = app
            if self._on_loaded is not None:
                self._on_loaded(app)
        except asyncio.CancelledError:  # stopped while loading: not a failure
            raise
        except BaseException as exc:
            self.error = exc
            log.exception("the agent runtime could not start")
            if self._on_failed is not None:
                self._on_failed()
        finally:
            self._card_ready.set()
            self._ready.set()
            while self._inflight:
                await asyncio.sleep(0.01)
            if self._store is not None:
                store, self._store = self._store, None
                with contextlib.suppress(Exception):
                    await store.close()

    async def _wanted(self) -> None:
        """Return when the full app's load should start (see the module's docstring): at once
        unless ``load_when_idle`` is set and clients are answered early."""
        if self._load_when_idle is None or self._store is None:
            return
        loop = asyncio.get_running_loop()
        deadline = loop.time() + self._load_by
        while not self._go.is_set():
            now = loop.time()
            if now >= deadline:
                return
            if not self._inflight and self._last_read is not None and now - self._last_read >= self._load_when_idle:
                return
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(min(0.05, self._load_when_idle)):
                    await self._go.wait()

    async def _shutdown(self) -> None:
        if self._loader is not None and not self._loader.done():
            # still importing: stop waiting for it (its thread is a daemon and dies with the
            # process; nothing of the full app was opened yet, or what was is closed below)
            self._loader.cancel()
            with contextlib.suppress(BaseException):
                await self._loader
        with contextlib.suppress(Exception):
            await self._stack.aclose()
        if self._store is not None:
            with contextlib.suppress(Exception):
                await self._store.close()
