"""From settings to a connected client: the named server, or the embedded one started for us.

``await connect(settings)`` returns a :class:`Connection` whose ``client`` has read the agent
card (so ``client.capabilities`` is set). With no server named in the settings, the embedded
server is started as a subprocess on the settings' data dir and stopped again when the
connection closes. Use it as an async context manager::

    async with connection(settings) as conn:
        chat = Chat(conn.client)

Any failure to get there is a :class:`~rewindtui.client.a2a_client.ConnectFailed` whose message says what
failed and how to fix it (a :class:`ConnectProblem`, which also names the part that did not
answer: the kagent controller, the agent on it, the URL, or the embedded server); nothing is left
running. The app's connector (:class:`AppConnector`) can be pointed at a corrected
:class:`Target` without restarting.

The embedded server wants a bearer token (it was started with a random one, or another app on
the same data dir started it): it is the connection's credential, which the client sends to that
server's origin only (:class:`rewindtui.client.auth.CredentialScope`), like any configured credential.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import httpx

from rewindtui.base.textsafe import sanitize_line
from rewindtui.client.a2a_client import (
    A2AClient,
    Capabilities,
    ClientError,
    ConnectFailed,
    ConnectionLost,
    HTTPStatusFailed,
    Unsupported,
)
from rewindtui.config.settings import Settings

#: What did not answer (:attr:`ConnectProblem.part`).
CONTROLLER, AGENT, URL, REFUSED, EMBEDDED = "controller", "agent", "url", "refused", "embedded"
#: A kagent controller that answers, but with no API rewindtui knows (config/kagent1_profile.py).
KAGENT_API = "kagent_api"


class ConnectProblem(ConnectFailed):
    """A failure to connect that names its part: the kagent ``controller`` did not answer, the
    ``agent`` is not on it, nothing (or no A2A agent) answered at the ``url``, the agent
    ``refused`` us (credentials), or the ``embedded`` server did not start. ``address`` is the
    URL (or agent) concerned."""

    def __init__(self, message: str, part: str, address: str, *, hint: str = "") -> None:
        super().__init__(message, hint=hint)
        self.part = part
        self.address = address


@dataclass(frozen=True)
class Target:
    """Which agent to connect to: an A2A agent ``url``, or an ``agent`` (``NAMESPACE/NAME``) on a
    ``kagent`` controller, or (neither) the embedded server."""

    url: str = ""
    kagent: str = ""
    agent: str = ""

    @property
    def kind(self) -> str:
        return "kagent" if self.kagent or self.agent else ("url" if self.url else "embedded")


def target_of(settings: Settings) -> Target:
    if settings.kagent and settings.agent:
        return Target(kagent=settings.kagent, agent=settings.agent)
    return Target(url=settings.url or "")


#: ``spawn(data_dir, model=...)`` -> a handle with ``agent_url``, ``api_url``, ``base_url``, ``stop()``
#: and optionally ``token`` (the bearer token the server wants).
Spawner = Callable[..., Any]


class Connection:
    """A connected client, and the embedded server behind it when we started one."""

    def __init__(self, client: A2AClient, settings: Settings, server: Any = None) -> None:
        self.client = client
        self.settings = settings  # pointed at the server actually used
        self.server = server  # the spawned embedded server, or None
        #: which kagent the controller turned out to be (a kagent1_profile.Detection; None: no kagent)
        self.kagent: Any = None
        self._closed = False

    @property
    def embedded(self) -> bool:
        return self.server is not None

    @property
    def closed(self) -> bool:
        return self._closed

    @property
    def capabilities(self) -> Capabilities:
        assert self.client.capabilities is not None
        return self.client.capabilities

    @property
    def url(self) -> str:
        return self.client.config.url

    def describe(self) -> str:
        """Where we are connected, for a status line: ``embedded server http://…`` or the URL."""
        if self.server is not None:
            return f"embedded server {getattr(self.server, 'base_url', self.url)}"
        return self.settings.describe_server()

    async def aclose(self) -> None:
        if self._closed:
            return
        self._closed = True
        try:
            if self.settings.push:
                from rewindtui.client.push import detach

                await detach(self.client)
            await self.client.aclose()
        finally:
            await _stop(self.server)

    async def __aenter__(self) -> Connection:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()


def _model_tuned(settings: Settings) -> bool:
    return any(v is not None for v in (settings.model_base_url, settings.model_timeout, settings.stall_timeout))


def model_options(settings: Settings) -> Any:
    """The embedded server's model options from the settings (the server's defaults for the rest)."""
    from rewindtui.server.agent.model_options import ModelOptions  # light: stdlib only

    defaults = ModelOptions()
    return ModelOptions(
        base_url=settings.model_base_url,
        timeout=settings.model_timeout or defaults.timeout,
        stall_timeout=settings.stall_timeout or defaults.stall_timeout,
    )


def spawn_kwargs(settings: Settings) -> dict[str, Any]:
    """What the embedded server is spawned with besides its data dir (its model and model options)."""
    extra: dict[str, Any] = {"model_options": model_options(settings)} if _model_tuned(settings) else {}
    if settings.keep_server:
        extra["keep"] = settings.keep_server  # it outlives the app that long (serve --keep-seconds)
    return {"model": settings.model, **extra}


def _default_spawner() -> Spawner:
    from rewindtui.server.process.spawn import spawn_server  # light: starts a subprocess

    return spawn_server


async def _stop(server: Any) -> None:
    if server is not None:
        await asyncio.to_thread(server.stop)


def embedded_credentials(settings: Settings, server: Any) -> Settings:
    """Settings pointed at a started embedded server, with its token as the only credential."""
    settings = settings.with_server(server.agent_url, server.api_url)
    token = getattr(server, "token", None)
    credentials = {"Authorization": f"Bearer {token}"} if token else {}
    return replace(settings, auth=None, credentials=credentials)


def _hint(settings: Settings, embedded: bool) -> str:
    if embedded:
        return "the embedded server started but does not answer; try `rewindtui serve` to see its output"
    if settings.kagent and settings.agent:
        return f"is the kagent controller running and agent {settings.agent} deployed? check --kagent / --agent"
    return "is the server running? check --url (or leave it out to use the embedded server)"


def describe_connect_error(exc: ClientError, settings: Settings, url: str, embedded: bool = False) -> ConnectFailed:
    """A connect-time failure as one actionable line (a :class:`ConnectProblem` naming its part;
    ``hint``: what to do about it)."""
    reason = sanitize_line(exc.message)
    if settings.kagent and settings.agent and not embedded:
        if isinstance(exc, HTTPStatusFailed) and exc.status == 404:
            return ConnectProblem(
                f"agent {settings.agent} is not on the kagent controller at {settings.kagent} "
                f"(it answered: {sanitize_line(exc.detail) or reason})",
                AGENT,
                settings.agent,
                hint=f"check --agent NAMESPACE/NAME (the controller lists its agents at {settings.kagent}/api/agents)",
            )
        if isinstance(exc, ConnectFailed) and not isinstance(exc, ConnectionLost):
            return ConnectProblem(
                f"cannot reach the kagent controller at {settings.kagent} ({_transport_reason(exc, reason)})",
                CONTROLLER,
                settings.kagent,
                hint="is it running (e.g. kubectl port-forward svc/kagent-controller 8083)? check --kagent",
            )
    part = EMBEDDED if embedded else URL
    if isinstance(exc, HTTPStatusFailed):
        if exc.status in (401, 403):
            given = f"sent: {settings.auth.describe()}" if settings.auth else "no credentials are configured"
            return ConnectProblem(
                f"the agent at {url} refused us ({reason})",
                REFUSED,
                url,
                hint=f"{given}; give them with --bearer-env VAR, --api-key-env VAR [--api-key-header NAME] "
                "or --basic-user NAME --basic-password-env VAR (or [auth] in config.toml)",
            )
        if exc.status == 404:
            return ConnectProblem(f"no A2A agent card at {url} ({reason})", part, url, hint=_hint(settings, embedded))
        return ConnectProblem(
            f"the agent at {url} answered with an error ({reason})", part, url, hint=_hint(settings, embedded)
        )
    if isinstance(exc, Unsupported):
        return ConnectProblem(
            f"cannot talk to the agent at {url}: {reason}",
            part,
            url,
            hint="see `rewindtui card` for what its card offers",
        )
    if exc.category == "auth":  # e.g. credentials that would have to go to an origin not configured
        return ConnectProblem(f"cannot talk to the agent at {url}: {reason}", REFUSED, url, hint=exc.hint)
    if isinstance(exc, ConnectFailed):
        return ConnectProblem(
            f"cannot reach the agent at {url} ({_transport_reason(exc, reason)})",
            part,
            url,
            hint=_hint(settings, embedded),
        )
    return ConnectProblem(f"{url} does not look like an A2A agent: {reason}", part, url)


def _transport_reason(exc: ClientError, reason: str) -> str:
    """The transport's own reason for a failure the client summarised."""
    cause = exc.__context__
    if isinstance(cause, httpx.TimeoutException):
        return "timed out"
    if isinstance(cause, httpx.TransportError):
        return sanitize_line(str(cause)) or type(cause).__name__
    return reason


async def start_embedded(settings: Settings, spawn: Spawner | None = None) -> Any:
    """Start the embedded server on the settings' data dir; ConnectFailed if it cannot start."""
    data_dir: Path = settings.resolved_data_dir()
    lock = threading.Lock()
    state: dict[str, Any] = {}

    def start() -> Any:
        server = (spawn or _default_spawner())(data_dir, **spawn_kwargs(settings))
        with lock:
            if state.get("abandoned"):  # we were cancelled while it started: nobody will stop it
                server.stop()
                return None
            state["server"] = server
        return server

    try:
        return await asyncio.to_thread(start)
    except (KeyboardInterrupt, asyncio.CancelledError):
        # the start carries on in its thread; whatever it starts must not outlive us
        with lock:
            state["abandoned"] = True
            server = state.get("server")
        if server is not None:
            server.stop()
        raise
    except Exception as exc:  # whatever went wrong starting it, say so in one line
        reason = sanitize_line(str(exc)) or type(exc).__name__
        raise ConnectProblem(
            f"could not start the embedded server on {data_dir}: {reason}; "
            "run `rewindtui serve --data-dir DIR` to see why, or connect to a server with --url",
            EMBEDDED,
            str(data_dir),
        ) from exc


async def connect(
    settings: Settings, *, spawn: Spawner | None = None, http: Any = None, device_prompt: Any = None
) -> Connection:
    """Connect as the settings say (starting the embedded server if none is named) and read the
    agent card. ``spawn`` and ``http`` are for tests. ``device_prompt`` (``(url, code, complete)``):
    an OAuth2 device-code login without a cached token signs in now, showing it the URL and code
    (the app's modal); without it, the connection says to run ``rewindtui auth login``."""
    server = None
    store_key = None
    if settings.embedded:
        server = await start_embedded(settings, spawn)
        store_key = f"embedded:{settings.resolved_data_dir()}"
        settings = embedded_credentials(settings, server)
    client: A2AClient | None = None
    flows = getattr(settings, "flows", None) if server is None else None  # OAuth2 / mTLS (rewindtui.client.auth_flows)
    try:
        if flows is not None and http is None:
            http = flows.http_client(settings.timeout)
        kagent1 = detection = None
        if settings.kagent and settings.agent:  # which kagent, said in words (rewindtui.config.kagent1_profile)
            from rewindtui.config.kagent1_profile import kagent_profile

            kagent1, detection = await kagent_profile(settings, store_key, http)
        client = kagent1 or A2AClient(settings.server_config(store_key=store_key), http=http)
        scope = getattr(client, "scope", None)
        if scope is not None and (server is not None or (flows is not None and flows.grpc_same_host)):
            # credentials to a gRPC port beside the configured origin: the user allowed it, or the
            # server is the one we started (its card, on loopback, names its own gRPC port)
            scope.grpc_same_host = True
        try:
            if flows is not None:
                from rewindtui.client.auth import AuthError
                from rewindtui.client.auth_flows import connect as flows_connect

                try:
                    await flows_connect(client, flows, settings.timeout, prompt=device_prompt)
                except AuthError as exc:
                    raise ConnectProblem(
                        f"cannot sign in to the agent at {client.url}: {exc}", REFUSED, client.url
                    ) from None
            else:
                await client.connect()
        except ConnectProblem:
            raise
        except ClientError as exc:
            raise describe_connect_error(exc, settings, client.url, embedded=server is not None) from exc
        if settings.push:  # every turn also asks for a push notification (rewindtui.client.push)
            from rewindtui.client.push import attach

            await attach(client)
        conn = Connection(client, settings, server)
        conn.kagent = detection
        return conn
    except BaseException:
        if client is not None:
            await client.aclose()
        await _stop(server)
        raise


@asynccontextmanager
async def connection(
    settings: Settings, *, spawn: Spawner | None = None, http: Any = None
) -> AsyncIterator[Connection]:
    """``async with connection(settings) as conn:`` — connected, and closed (server stopped) after."""
    conn = await connect(settings, spawn=spawn, http=http)
    try:
        yield conn
    finally:
        await conn.aclose()


@asynccontextmanager
async def reader(settings: Settings) -> AsyncIterator[Connection]:
    """A client for the named server that has not read its card yet (``rewindtui card`` shows the
    card of an agent this client may not be able to talk to)."""
    flows = getattr(settings, "flows", None)  # mutual TLS applies to reading the card too
    http = flows.http_client(settings.timeout) if flows is not None else None
    kagent1 = detection = None
    if settings.kagent and settings.agent:  # which kagent, said (rewindtui.config.kagent1_profile)
        from rewindtui.config.kagent1_profile import kagent_profile

        kagent1, detection = await kagent_profile(settings, None, http)
    client = kagent1 or A2AClient(settings.server_config(), http=http)
    try:
        conn = Connection(client, settings)
        conn.kagent = detection
        yield conn
    finally:
        await client.aclose()


def connect_hint(settings: Settings) -> str:
    """How to fix a failed connection with these settings, for the app's connect-error screen."""
    config = f" (or in {settings.config_file})" if settings.config_file else ""
    if settings.embedded:
        data_dir = settings.resolved_data_dir()
        return (
            f"rewindtui starts its embedded server on {data_dir}. Run `rewindtui serve --data-dir {data_dir}` "
            "to see why it fails, or connect to a running server with --url URL or --kagent URL --agent NS/NAME."
        )
    if settings.kagent and settings.agent:
        return (
            f"Check that the kagent controller at {settings.kagent} is running and agent {settings.agent} is deployed "
            f"(--kagent / --agent{config}); leave them out to use the embedded server."
        )
    return (
        f"Check that an A2A agent is serving {settings.url} (--url / REWINDTUI_URL{config}); "
        "leave it out to use the embedded server."
    )


class AppConnector:
    """For the app: ``await connector()`` connects as :func:`connect` does (each call a fresh
    attempt, so the app can retry) and returns ``(client, close)``. :meth:`retarget` gives a
    connector for a corrected :class:`Target` (the rest of the settings kept), so the connect
    screen can fix a wrong URL or agent without a restart."""

    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        #: the app's device-code prompt (see :func:`connect`), None: no interactive sign-in
        self.device_prompt: Any = None

    @property
    def target(self) -> Target:
        return target_of(self.settings)

    @property
    def hint(self) -> str:
        return connect_hint(self.settings)

    def retarget(self, target: Target) -> AppConnector:
        """SettingsError (one line) if ``target`` is not a usable URL / NAMESPACE/NAME."""
        if target == self.target:
            return self
        if target.kind == "kagent":
            return AppConnector(self.settings.retargeted(kagent=target.kagent, agent=target.agent))
        return AppConnector(self.settings.retargeted(url=target.url))

    async def __call__(self) -> tuple[A2AClient, Callable[[], Any]]:
        conn = await connect(self.settings, device_prompt=self.device_prompt)
        self.connection = conn
        return conn.client, conn.aclose

    #: the last connection made (its embedded server, when one was started for it)
    connection: Connection | None = None

    def server_stopped(self) -> str:
        """Why the embedded server of the last connection stopped ("exit status 1", "killed by
        signal 9"); "" while it runs, after the connection was closed, or when none was started
        (a local check of the child process: no request)."""
        conn = self.connection
        server = conn.server if conn is not None and not conn.closed else None
        if server is None or server.running:
            return ""
        code = getattr(getattr(server, "process", None), "returncode", None)
        if isinstance(code, int) and code < 0:
            return f"killed by signal {-code}"
        return f"exit status {code}" if isinstance(code, int) else "its process is gone"


def app_connector(settings: Settings) -> tuple[AppConnector, str]:
    """The app's connector for these settings, and a hint for its connect-error screen."""
    connector = AppConnector(settings)
    return connector, connector.hint
