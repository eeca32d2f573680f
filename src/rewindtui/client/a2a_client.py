"""The network side: an A2A agent (JSON-RPC or HTTP+JSON, streams over SSE) and a kagent-style
REST API.

A plain object over ``httpx.AsyncClient``. The agent card says which binding to use
(:func:`rewindtui.a2a.card.choose_interface`; :mod:`rewindtui.client.transport` speaks each). Streams
yield classified :class:`StreamEvent`s (an error the server answers a stream with is an
``EventKind.ERROR`` event, shown where it happened); every other failure is a
:class:`ClientError` subclass whose ``str()`` is one line a person can act on (secrets redacted).

Credentials, configured headers and the user id go only to the origins the user configured
(:class:`rewindtui.client.auth.CredentialScope`); a 401/403 says which of the card's security schemes
the server wants.

The client does what it is asked: whether rewind, fork or stop may be asked for at all is decided
in one place, :meth:`rewindtui.chat.Chat.permissions`, from the :class:`Capabilities` read here.

Transport failures say whether the request can have reached the server: :class:`ConnectFailed`
(it did not: nothing was sent) or :class:`ConnectionLost` (it was sent; the connection broke
before the whole answer came back, so the server may have acted on it).
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx

from rewindtui.a2a import contract, kagent, outgoing
from rewindtui.a2a.card import JSONRPC, Choice, NoUsableInterface, choose_interface, wanted_schemes
from rewindtui.a2a.classify import StreamEvent, classify
from rewindtui.a2a.dialect import Dialect
from rewindtui.a2a.stored_partials import drop_from_task, drop_stored_partials
from rewindtui.client.attachments import Attachment
from rewindtui.client.auth import AuthOption, CredentialScope, origin_of
from rewindtui.client.bounded_json import bound_task
from rewindtui.client.errors import (
    ClientError,
    ConnectFailed,
    ConnectionLost,
    HTTPStatusFailed,
    MalformedFrame,
    RpcError,
    Unsupported,
    excerpt,
    parse_frame,
    parse_json,
    status_error,
)
from rewindtui.client.limits import MAX_PAGES
from rewindtui.client.transport import Transport, bounded_request, make_transport, segment

__all__ = [
    "A2AClient",
    "Capabilities",
    "ClientError",
    "ConnectFailed",
    "ConnectionLost",
    "HTTPStatusFailed",
    "MalformedFrame",
    "PageProgress",
    "PagingStalled",
    "RpcError",
    "ServerConfig",
    "Session",
    "TaskPage",
    "Unsupported",
    "capabilities_from_card",
    "excerpt",
    "parse_frame",
    "parse_json",
]

#: The agent-card extension by which a server says it implements rewind and fork.
REWIND_EXTENSION = contract.EXTENSION_URI
REWIND_MODES = ("a2a", "rest", "off", "auto")


# -- configuration and capabilities ------------------------------------------------------------
@dataclass
class ServerConfig:
    url: str  # the A2A agent endpoint
    api: str | None = None  # kagent-style REST base, e.g. http://host:8083/api
    dialect: Dialect | None = None  # None: from the agent card
    rewind: str = "auto"  # auto | a2a | rest | off
    user_id: str | None = None
    headers: dict[str, str] = field(default_factory=dict)
    timeout: float = 30.0
    #: kagent's ``namespace/name`` of the agent: sessions are created with it and listed per agent
    agent_ref: str | None = None
    #: other A2A endpoints to try, in order, when the agent card is not found at ``url``
    fallback_urls: tuple[str, ...] = ()
    #: the local sessions store (SQLite) remembering this user's sessions on this server ...
    local_store: Path | None = None
    #: ... under this server name (default: ``url``; the embedded server's port changes each run)
    local_store_key: str | None = None
    #: the binding to use (``JSONRPC`` / ``HTTP+JSON``); None: the card's preferred one we speak
    binding: str | None = None
    #: the named auth option (for messages; its headers are in ``credentials``)
    auth: AuthOption | None = None
    #: credential headers (resolved), sent like ``headers``: to the configured origins only
    credentials: dict[str, str] = field(default_factory=dict)
    #: more origins that are home (besides ``url``, ``api`` and ``fallback_urls``)
    home_urls: tuple[str, ...] = ()
    #: set when the card named a REST API on an origin the user did not configure (not used)
    refused_api: str = ""

    def home(self) -> list[str]:
        """The URLs whose origins the user configured: credentials and headers go there only."""
        return [u for u in (self.url, self.api, *self.fallback_urls, *self.home_urls) if u]


@dataclass
class Capabilities:
    name: str
    dialect: Dialect
    rewind_modes: tuple[str, ...]  # what will be used: "a2a", "rest" (none: no rewind)
    fork: bool
    api: str | None
    description: str = ""
    card: dict[str, Any] = field(default_factory=dict)
    #: the control message's metadata key, as the card's extension names it
    metadata_key: str = contract.REWIND_METADATA_KEY
    #: the card advertises our rewind extension (so the server promises the contract's flags)
    advertised: bool = False
    #: the user turned rewind off for this server in the settings
    rewind_off: bool = False
    #: the card says the agent streams (``capabilities.streaming``)
    streaming: bool = True
    #: a kagent agent (``--kagent`` / ``--agent``): its missing features have a known fix
    kagent_agent: str | None = None
    #: ``POST {api}/sessions/{id}/redo`` exists (undo a rewind), as the card's extension says
    redo: bool = False
    #: the binding (``JSONRPC`` / ``HTTP+JSON``) and endpoint URL in use, from the card
    binding: str = JSONRPC
    endpoint: str = ""
    choice: Choice | None = None
    #: the session's newest task id is a cheap revision (``GET {api}/sessions/{id}/tasks?limit=1``)
    newest_task: bool = False
    #: the card was answered while the agent was still starting (the first turn waits for it)
    starting: bool = False

    @property
    def can_rewind(self) -> bool:
        return bool(self.rewind_modes)

    @property
    def rewind_mode(self) -> str | None:
        """The mode rewind will use: the A2A control message when offered (one round trip,
        and the stream carries the effective history), else REST."""
        for mode in ("a2a", "rest"):
            if mode in self.rewind_modes:
                return mode
        return None

    def why_no_rewind(self) -> str:
        if self.rewind_off:
            return "rewind is off for this server in your settings"
        if self.advertised:
            return f"{self.name} offers rewind only over REST, and no REST API is configured (give --api)"
        if self.kagent_agent:
            return (
                f"this kagent agent ({self.kagent_agent}) does not support rewind: "
                "enable the rewind add-on on it (see the README, \"Rewind on your kagent agents\")"
            )
        return f"{self.name} does not support rewind (its agent card does not advertise it)"

    def why_no_fork(self) -> str:
        if self.rewind_off:
            return "rewind and fork are off for this server in your settings"
        if not self.advertised:
            return self.why_no_rewind().replace("support rewind", "support fork")
        return f"{self.name} does not offer fork (it needs the server's REST API: POST /sessions/{{id}}/fork)"

    def why_no_redo(self) -> str:
        if self.rewind_off:
            return "rewind and redo are off for this server in your settings"
        if not self.advertised:
            return self.why_no_rewind().replace("support rewind", "support redo")
        return (
            f"{self.name} does not offer redo: its agent card does not advertise it "
            "(it needs the server's REST API: POST /sessions/{id}/redo)"
        )


def _home_api(value: Any, config: ServerConfig, card_url: str) -> str | None:
    """The REST base an agent card's rewind extension names, when it is on an origin the user
    configured (a relative one is joined to the card's URL). Another origin is never used: the
    user id (``?user_id=``) and the configured headers would go to a host the user did not name."""
    if not isinstance(value, str) or not value.strip():
        return None
    try:
        url = str(httpx.URL(card_url).join(value.strip()))
        home = {origin_of(u) for u in config.home()}
        if origin_of(url) in home:
            return url
    except (httpx.InvalidURL, ValueError, TypeError):
        pass
    config.refused_api = value
    return None


def capabilities_from_card(card: dict[str, Any], config: ServerConfig, card_url: str | None = None) -> Capabilities:
    """What the card says, as this client will use it. Unsupported when it offers no binding
    this client speaks (e.g. gRPC only)."""
    card_url = card_url or config.url
    try:
        choice = choose_interface(card, card_url, binding=config.binding, dialect=config.dialect)
    except NoUsableInterface as exc:
        raise Unsupported(str(exc)) from None
    caps = card.get("capabilities")
    if not isinstance(caps, dict):
        caps = {}
    extension: dict[str, Any] = {}
    advertised = False
    for ext in caps.get("extensions") or ():
        if isinstance(ext, dict) and ext.get("uri") == REWIND_EXTENSION:
            advertised = True
            params = ext.get("params")
            extension = params if isinstance(params, dict) and params else {contract.PARAM_REWIND: [contract.MODE_A2A]}
    offered = extension.get(contract.PARAM_REWIND) or []
    if isinstance(offered, str):
        offered = [offered]
    api_param = extension.get(contract.PARAM_API)
    api = config.api or _home_api(api_param, config, card_url)
    modes = tuple(m for m in contract.MODES if m in offered)
    if config.rewind == "off":
        modes = ()
    elif config.rewind in ("a2a", "rest"):
        modes = (config.rewind,)
    if "rest" in modes and not api:
        modes = tuple(m for m in modes if m != "rest")
    fork = bool(extension.get(contract.PARAM_FORK)) and bool(api) and config.rewind != "off"
    # redo over REST, or (no REST API: the kagent-rewind add-on) the A2A control message
    redo = bool(extension.get(contract.PARAM_REDO)) and (bool(api) or "a2a" in modes) and config.rewind != "off"
    key = extension.get(contract.PARAM_METADATA_KEY)
    streaming = caps.get("streaming")
    return Capabilities(
        name=str(card.get("name") or "agent"),
        dialect=choice.dialect,
        rewind_modes=modes,
        fork=fork,
        api=api,
        description=str(card.get("description") or ""),
        card=card,
        metadata_key=key if isinstance(key, str) and key else contract.REWIND_METADATA_KEY,
        advertised=advertised,
        rewind_off=config.rewind == "off",
        streaming=streaming is not False,
        kagent_agent=config.agent_ref,
        redo=redo,
        binding=choice.binding,
        endpoint=choice.url,
        choice=choice,
        newest_task=bool(extension.get(contract.PARAM_NEWEST_TASK)) and bool(api),
        starting=extension.get(contract.PARAM_STARTING) is True,
    )


@dataclass
class Session:
    id: str
    name: str = ""
    user_id: str | None = None
    created_at: str | None = None
    updated_at: str | None = None
    raw: dict[str, Any] = field(default_factory=dict)
    #: remembered locally, but the server no longer knows it
    gone: bool = False

    @classmethod
    def from_json(cls, d: Any) -> Session:
        """A session from either answer shape: flat, or kagent's ``{"session": {...}, "events": [...]}``."""
        if isinstance(d, dict) and isinstance(d.get(kagent.SESSION_KEY), dict) and "id" not in d:
            d = d[kagent.SESSION_KEY]
        if not isinstance(d, dict) or not isinstance(d.get("id"), str):
            raise MalformedFrame(f"not a session: {_excerpt_of(d)!r}")
        name = d.get("name")
        return cls(
            id=d["id"],
            name=name if isinstance(name, str) else "",
            user_id=d.get("user_id"),
            created_at=d.get("created_at"),
            updated_at=d.get("updated_at"),
            raw=d,
        )


@dataclass
class TaskPage:
    tasks: list[dict[str, Any]]
    next_page_token: str | None


class PagingStalled(MalformedFrame):
    """The server's pages do not advance (a token seen before, a page that adds nothing, or more
    than ``limits.MAX_PAGES`` pages): loading stops there instead of asking forever."""

    category = "paging"


class PageProgress:
    """Pages read for one session, so a server whose page token never advances is caught: a token
    seen before, a page with no task not already read (while it still names a next page), or more
    than MAX_PAGES pages -> PagingStalled."""

    def __init__(self, what: str) -> None:
        self.what = what
        self.tokens: set[str] = set()
        self.task_ids: set[str] = set()
        self.pages = 0

    def check(self, asked: str | None, page: TaskPage) -> TaskPage:
        self.pages += 1
        if asked:
            self.tokens.add(asked)
        ids = {t["id"] for t in page.tasks if isinstance(t.get("id"), str)}
        new = ids - self.task_ids
        self.task_ids |= ids
        token = page.next_page_token
        stop = ""
        if token and token in self.tokens:
            stop = f"the server answered page token {excerpt(token, 40)!r} again"
        elif token and asked and not new:
            stop = "a page added no task not already read and still named a next page"
        elif token and self.pages >= MAX_PAGES:
            stop = f"more than {MAX_PAGES:,} pages"
        if stop:
            raise PagingStalled(
                f"{self.what}: {stop}: its pages do not advance, so loading stopped after "
                f"{len(self.task_ids):,} tasks"
            )
        return page


# -- the client --------------------------------------------------------------------------------
class A2AClient:
    def __init__(self, config: ServerConfig, http: httpx.AsyncClient | None = None) -> None:
        self.config = config
        headers = dict(config.headers)
        if config.user_id:
            headers.setdefault(kagent.USER_HEADER, config.user_id)
        headers.update(config.credentials)
        #: what the user configured goes to the configured origins only (redirects included)
        self.scope = CredentialScope.for_urls(config.home(), headers)
        self._http = http or httpx.AsyncClient(timeout=config.timeout, follow_redirects=True)
        self.scope.install(self._http)
        self.capabilities: Capabilities | None = None
        self._transport: Transport | None = None
        #: REST paging per session (a newest-page read starts it again)
        self._paging: dict[str, PageProgress] = {}
        #: a push notification config (``{"url", "token"}``, :mod:`rewindtui.client.push`) sent with every
        #: message: the server POSTs the task there when its turn ends (None: no push)
        self.push_config: dict[str, Any] | None = None

    async def aclose(self) -> None:
        if self._transport is not None:
            await self._transport.aclose()
        await self._http.aclose()

    async def __aenter__(self) -> A2AClient:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    @property
    def http(self) -> httpx.AsyncClient:
        """The HTTP connection (credentials scoped), e.g. to fetch a file part by URL."""
        return self._http

    @property
    def url(self) -> str:
        return self.config.url if self.config.url.endswith("/") else self.config.url + "/"

    @property
    def dialect(self) -> Dialect:
        if self.capabilities is not None:
            return self.capabilities.dialect
        return self.config.dialect or Dialect.V03

    # -- plumbing ------------------------------------------------------------------------------
    async def _request(self, method: str, url: str, **kw: Any) -> httpx.Response:
        response = await bounded_request(self._http, method, url, **kw)
        if response.status_code >= 400:
            raise self._explain(status_error(response))
        return response

    def _explain(self, exc: ClientError) -> ClientError:
        """A 401/403 with what the server wants (the card's security schemes) and what was sent."""
        if not isinstance(exc, HTTPStatusFailed) or exc.status not in (401, 403):
            return exc
        exc.hint = self.auth_hint(exc.url)
        return exc

    def auth_hint(self, url: str = "") -> str:
        """What to do about a refusal: the card's wanted schemes, what we sent, and where to."""
        pieces = []
        caps = self.capabilities
        schemes = wanted_schemes(caps.card) if caps is not None else []
        if schemes:
            pieces.append("the agent card asks for " + "; or ".join(s.describe() for s in schemes))
        elif caps is not None:
            pieces.append("the agent card declares no security scheme")
        if url and not self.scope.allows(url):
            pieces.append(f"no credentials were sent to {url}: they go only to the origins you configured")
        elif self.config.auth is not None:
            pieces.append(f"sent: {self.config.auth.describe()}")
        elif not self.config.credentials:
            pieces.append("no credentials are configured (--bearer-env, --api-key-env, --basic-user ...)")
        return "; ".join(pieces)

    def _params(self) -> dict[str, str]:
        return {kagent.USER_QUERY: self.config.user_id} if self.config.user_id else {}

    async def _api(self, method: str, path: str, **kw: Any) -> Any:
        """A kagent-style REST call; returns the envelope's ``data`` (None when it has none:
        kagent's envelope omits an empty ``data``)."""
        body = await self._api_body(method, path, **kw)
        if isinstance(body, dict) and ("error" in body or "data" in body):
            return body.get("data")  # the envelope; kagent leaves an empty data out
        return body  # a flat answer

    async def _api_body(self, method: str, path: str, **kw: Any) -> Any:
        """A kagent-style REST call's whole answer (the envelope, or a flat answer); a refusal in
        the envelope raises HTTPStatusFailed."""
        if not self.config.api:
            await self.connect()  # the REST base may come from the agent card
        api = self._api_base()
        response = await self._request(method, api + path, params={**self._params(), **kw.pop("params", {})}, **kw)
        if not response.content.strip():
            return None  # e.g. 204 No Content
        try:
            body = parse_json(response.content)
        except ValueError:
            raise MalformedFrame(f"{method} {path}: not JSON: {excerpt(response.text)!r}") from None
        if isinstance(body, dict) and body.get("error") not in (None, False):
            detail = body.get("message") if body.get("error") is True else body.get("error")
            raise HTTPStatusFailed(f"{method} {path}: {detail}", response.status_code, str(detail))
        return body

    def _api_base(self) -> str:
        api = self.config.api or (self.capabilities.api if self.capabilities else None)
        if not api:
            raise Unsupported("this server has no REST API configured (give --api)")
        return api.rstrip("/")

    # -- agent card ----------------------------------------------------------------------------
    async def fetch_card(self, base: str | None = None) -> dict[str, Any]:
        base = base or self.url
        last: ClientError | None = None
        for name in ("agent-card.json", "agent.json"):
            url = base + ".well-known/" + name
            try:
                response = await self._request("GET", url)
            except HTTPStatusFailed as exc:
                last = exc
                if exc.status == 404:
                    continue
                raise
            try:
                card = parse_json(response.content)
            except ValueError:
                raise MalformedFrame(f"agent card at {url} is not JSON: {excerpt(response.text)!r}") from None
            if not isinstance(card, dict):
                raise MalformedFrame(f"agent card at {url} is not an object")
            return card
        assert last is not None
        raise last

    async def connect(self) -> Capabilities:
        """Read the agent card (once) and decide binding, dialect and rewind support. When the card
        is not found at the URL, the configured fallback endpoints are tried, and the first that
        answers becomes the URL."""
        if self.capabilities is None:
            try:
                card = await self.fetch_card()
            except HTTPStatusFailed as exc:
                if exc.status != 404 or not self.config.fallback_urls:
                    raise
                card = await self._card_from_fallbacks(exc)
            caps = capabilities_from_card(card, self.config, self.url)
            self._transport = make_transport(
                caps.binding, self._http, caps.endpoint, caps.dialect, self.config.timeout, scope=self.scope
            )
            self.capabilities = caps
        return self.capabilities

    async def _transport_ready(self) -> Transport:
        await self.connect()
        assert self._transport is not None
        return self._transport

    async def _card_from_fallbacks(self, first: HTTPStatusFailed) -> dict[str, Any]:
        missing = first
        for url in self.config.fallback_urls:
            base = url if url.endswith("/") else url + "/"
            try:
                card = await self.fetch_card(base)
            except HTTPStatusFailed as exc:
                if exc.status == 404:
                    missing = _more_telling(missing, exc)
                    continue
                raise
            self.config.url = base
            return card
        raise missing

    # -- streaming -----------------------------------------------------------------------------
    def build_message(
        self,
        text: str | None,
        *,
        session_id: str | None,
        task_id: str | None = None,
        metadata: dict[str, Any] | None = None,
        data: list[Any] | None = None,
        attachments: Sequence[Attachment] = (),
    ) -> dict[str, Any]:
        """A user message in the server's dialect; ``attachments`` become file and data parts
        (after the text). Unsupported when one cannot be said in this dialect."""
        message = outgoing.user_message(
            text, dialect=self.dialect, context_id=session_id, task_id=task_id, metadata=metadata, data=data
        )
        for attachment in attachments:
            try:
                message["parts"].append(attachment.to_part(self.dialect))
            except ValueError as exc:
                raise Unsupported(str(exc)) from None
        return message

    def rewind_message(self, session_id: str, before: str, text: str | None = None) -> dict[str, Any]:
        """The seeds' control message: ``metadata[<key>] = before``, the key as the agent card's
        extension names it (default ``kagent_rewind_before_invocation_id``); non-empty text makes
        it rewind-and-send."""
        key = self.capabilities.metadata_key if self.capabilities else contract.REWIND_METADATA_KEY
        return self.build_message(text or "", session_id=session_id, metadata={key: before})

    async def stream(
        self, message: dict[str, Any], *, read_timeout: float | None = None, history_length: int | None = None
    ) -> AsyncIterator[StreamEvent]:
        """Send one message with streaming and yield each classified event until the stream ends.

        No read timeout by default (a turn may think for a long time between events).
        ``history_length``: ask for at most that many of the newest messages in an answering
        Task's history (A2A's ``configuration.historyLength``; a rewind's answer)."""
        transport = await self._transport_ready()
        try:
            async with transport.stream(message, read_timeout, history_length, self.push_config) as events:
                async for event in events:
                    bound_task(event.body)
                    yield event
        except HTTPStatusFailed as exc:
            raise self._explain(exc) from None

    async def subscribe(self, task_id: str) -> AsyncIterator[StreamEvent]:
        """Resume a live task's stream (``SubscribeToTask`` / ``tasks/resubscribe``). A server that
        does not offer it answers with an error event (``not_offered`` codes)."""
        transport = await self._transport_ready()
        try:
            async with transport.subscribe(task_id) as events:
                async for event in events:
                    bound_task(event.body)
                    yield event
        except HTTPStatusFailed as exc:
            raise self._explain(exc) from None

    # -- unary calls ---------------------------------------------------------------------------
    async def rpc(self, operation: str, params: dict[str, Any]) -> Any:
        """Call ``operation`` (``get_task``, ``list_tasks``, ``cancel_task``) over the binding in
        use and return its result. RpcError on an error answer; Unsupported when the dialect has
        no such method (0.3 has no ``ListTasks``)."""
        transport = await self._transport_ready()
        try:
            return await transport.call(operation, params)
        except HTTPStatusFailed as exc:
            raise self._explain(exc) from None

    async def get_task(self, task_id: str, history_length: int | None = None) -> dict[str, Any]:
        """``GetTask`` / ``tasks/get``: the task as the server holds it."""
        params: dict[str, Any] = {"id": task_id}
        if history_length is not None:
            params["historyLength"] = history_length
        return drop_from_task(_task_of(await self.rpc("get_task", params), "GetTask"))

    async def list_tasks(self, context_id: str, *, page_size: int = 100, page_token: str | None = None) -> TaskPage:
        """One page of ``ListTasks`` (A2A 1.0) for a context, in the server's order."""
        params: dict[str, Any] = {"contextId": context_id, "pageSize": page_size, "includeArtifacts": True}
        if page_token:
            params["pageToken"] = page_token
        result = await self.rpc("list_tasks", params)
        if not isinstance(result, dict) or not isinstance(result.get("tasks", []), list):
            raise MalformedFrame(f"ListTasks: not a task list: {_excerpt_of(result)!r}")
        tasks = [drop_from_task(_task_of(t, "ListTasks")) for t in result.get("tasks") or ()]
        token = result.get("nextPageToken") or result.get("next_page_token")
        return TaskPage(tasks, token if isinstance(token, str) and token else None)

    async def cancel_task(self, task_id: str) -> dict[str, Any]:
        """``CancelTask`` / ``tasks/cancel``: the task after the server took the request."""
        return _task_of(await self.rpc("cancel_task", {"id": task_id}), "CancelTask")

    # -- rewind and fork over REST -------------------------------------------------------------
    async def rewind_rest(self, session_id: str, before: str, history_length: int | None = None) -> Any:
        """Rewind over REST: the rewind Task (its history: the effective history, or with
        ``history_length`` its newest messages where the server bounds it)."""
        body: dict[str, Any] = {contract.REST_BEFORE_FIELD: before}
        if history_length is not None:
            body[contract.REST_HISTORY_LENGTH_FIELD] = history_length
        return await self._api("POST", contract.REST_REWIND.format(id=_seg(session_id)), json=body)

    async def redo(
        self, session_id: str, rewind_task_id: str | None = None, history_length: int | None = None
    ) -> dict[str, Any]:
        """Undo a rewind (None: the session's last one): the Task holding the effective history
        (with ``history_length``: its newest messages, where the server bounds it)."""
        body: dict[str, Any] = {contract.REST_REDO_FIELD: rewind_task_id} if rewind_task_id else {}
        if history_length is not None:
            body[contract.REST_HISTORY_LENGTH_FIELD] = history_length
        data = await self._api("POST", contract.REST_REDO.format(id=_seg(session_id)), json=body)
        return _task_of(data, "redo")

    async def fork(self, session_id: str, before: str) -> Session:
        data = await self._api(
            "POST", contract.REST_FORK.format(id=_seg(session_id)), json={contract.REST_BEFORE_FIELD: before}
        )
        return Session.from_json(data)

    # -- sessions and tasks (kagent-style REST) ------------------------------------------------
    @property
    def has_api(self) -> bool:
        return bool(self.config.api or (self.capabilities and self.capabilities.api))

    async def list_sessions(self) -> list[Session]:
        """The user's sessions; on a kagent controller, those of the configured agent."""
        path = kagent.SESSIONS
        if self.config.agent_ref:
            namespace, _, name = self.config.agent_ref.partition("/")
            path = kagent.AGENT_SESSIONS.format(namespace=_seg(namespace), name=_seg(name))
        data = await self._api("GET", path)
        if data is not None and not isinstance(data, list):
            raise MalformedFrame(f"GET {path}: expected a list of sessions")
        return [Session.from_json(s) for s in data or ()]

    async def create_session(self, name: str | None = None, session_id: str | None = None) -> Session:
        body: dict[str, Any] = {}
        if self.config.agent_ref:
            body[kagent.AGENT_REF_FIELD] = self.config.agent_ref
        if name:
            body[kagent.NAME_FIELD] = name
        if session_id:
            body[kagent.ID_FIELD] = session_id
        return Session.from_json(await self._api("POST", kagent.SESSIONS, json=body))

    async def get_session(self, session_id: str) -> Session:
        return Session.from_json(await self._api("GET", kagent.SESSION.format(id=_seg(session_id))))

    async def rename_session(self, session_id: str, name: str) -> Session:
        return Session.from_json(
            await self._api("PUT", kagent.SESSION.format(id=_seg(session_id)), json={kagent.NAME_FIELD: name})
        )

    async def delete_session(self, session_id: str) -> None:
        await self._api("DELETE", kagent.SESSION.format(id=_seg(session_id)))

    async def session_tasks(self, session_id: str, include_rewound: bool = False) -> list[dict[str, Any]]:
        params = {contract.REST_INCLUDE_REWOUND: "true"} if include_rewound else {}
        path = kagent.SESSION_TASKS.format(id=_seg(session_id))
        data = await self._api("GET", path, params=params, headers=kagent.TASKS_WIRE)
        return _task_list(data, session_id)

    async def session_tasks_page(
        self, session_id: str, limit: int, before: str | None = None, *, include_rewound: bool = False
    ) -> TaskPage:
        """One page of a session's tasks over REST: at most ``limit`` of the newest tasks older
        than the page whose answer gave ``before`` (None: the newest), oldest first, and the token
        of the page before it (None on the oldest page). A server that does not page (kagent's
        controller: no token in its envelope) answers every task, with None."""
        params = {contract.REST_TASKS_LIMIT: str(limit)}
        if before:
            params[contract.REST_TASKS_BEFORE] = before
        if include_rewound:
            params[contract.REST_INCLUDE_REWOUND] = "true"
        key = f"{session_id}|rewound" if include_rewound else session_id
        progress = self._paging.get(key) if before else None
        if progress is None:
            progress = self._paging[key] = PageProgress(f"older turns of session {session_id}")
        path = kagent.SESSION_TASKS.format(id=_seg(session_id))
        body = await self._api_body("GET", path, params=params, headers=kagent.TASKS_WIRE)
        enveloped = isinstance(body, dict) and ("error" in body or "data" in body)
        tasks = _task_list(body.get("data") if enveloped else body, session_id)
        token = body.get(contract.REST_NEXT_PAGE_FIELD) if enveloped else None
        return progress.check(before, TaskPage(tasks, token if isinstance(token, str) and token else None))


    async def newest_task_id(self, session_id: str) -> str | None:
        """The id of the session's newest task, in one small request (REST ``limit=1``); None when
        the server does not say that this is a revision (its card's ``newest_task`` param)."""
        caps = await self.connect()
        if caps.newest_task:
            params = {contract.REST_TASKS_LIMIT: "1"}
            body = await self._api_body("GET", kagent.SESSION_TASKS.format(id=_seg(session_id)), params=params)
            enveloped = isinstance(body, dict) and ("error" in body or "data" in body)
            tasks = _task_list(body.get("data") if enveloped else body, session_id)
        else:
            return None  # a server that does not say so may not page, or order, as this needs
        newest = tasks[-1].get("id") if tasks else None
        return newest if isinstance(newest, str) else None


def _task_list(data: Any, session_id: str) -> list[dict[str, Any]]:
    if data is None:
        return []  # kagent omits an empty list
    if not isinstance(data, list):
        raise MalformedFrame(f"tasks of {session_id}: expected a list")
    for task in data:
        bound_task(task)
    return drop_stored_partials(data)


def _excerpt_of(value: Any) -> str:
    """A short excerpt of any parsed value (never a RecursionError: its depth is bounded)."""
    try:
        return excerpt(json.dumps(value, default=str)[:1000])
    except (ValueError, RecursionError):
        return f"({type(value).__name__})"


def _more_telling(a: HTTPStatusFailed, b: HTTPStatusFailed) -> HTTPStatusFailed:
    """Of two 404s, the one whose server said more than a router's generic "not found"."""
    generic = ("404 page not found", "not found", "")
    return b if a.detail.strip().lower() in generic and b.detail.strip().lower() not in generic else a


def _seg(value: str) -> str:
    """A path segment, escaped (see :func:`rewindtui.client.transport.segment`)."""
    return segment(value)


def _task_of(result: Any, what: str) -> dict[str, Any]:
    """A task from a JSON-RPC result: bare, 0.3 ``kind: task``, or a 1.0 ``{"task": ...}`` wrapper."""
    event = classify(result)
    if not event.is_task or not isinstance(event.body, dict):
        if isinstance(result, dict) and isinstance(result.get("id"), str) and "status" in result:
            return bound_task(result)
        raise MalformedFrame(f"{what}: not a task: {_excerpt_of(result)!r}")
    return bound_task(event.body)
