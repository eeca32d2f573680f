"""The network side: an A2A agent (JSON-RPC, streams over SSE) and a kagent-style REST API.

A plain object over ``httpx.AsyncClient``. Streams yield classified :class:`StreamEvent`s (a
JSON-RPC error on a stream is an ``EventKind.ERROR`` event, shown where it happened); every other
failure is a :class:`ClientError` subclass whose ``str()`` is one line a person can act on.

The client does what it is asked: whether rewind, fork or stop may be asked for at all is decided
in one place, :meth:`rewindtui.chat.Chat.permissions`, from the :class:`Capabilities` read here.

Transport failures say whether the request can have reached the server: :class:`ConnectFailed`
(it did not: nothing was sent) or :class:`ConnectionLost` (it was sent; the connection broke
before the whole answer came back, so the server may have acted on it).
"""

from __future__ import annotations

import json
import re
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import quote

import httpx
from httpx_sse import SSEError, aconnect_sse
from pydantic_core import from_json

from rewindtui.a2a import contract, kagent, outgoing
from rewindtui.a2a.classify import StreamEvent, classify, classify_frame
from rewindtui.a2a.dialect import RPC_NOT_OFFERED, Dialect, method

#: The agent-card extension by which a server says it implements rewind and fork.
REWIND_EXTENSION = contract.EXTENSION_URI
REWIND_MODES = ("a2a", "rest", "off", "auto")
_EXCERPT = 200
#: Transport failures after which the request may have reached the server.
_LOST = (httpx.ReadError, httpx.WriteError, httpx.RemoteProtocolError, httpx.ReadTimeout, httpx.WriteTimeout, httpx.CloseError)


# -- errors ------------------------------------------------------------------------------------
class ClientError(Exception):
    """A failure talking to the server; ``str()`` is a one-line human message."""


class ConnectFailed(ClientError):
    """The request did not reach the server (connection refused, DNS, connect timeout...)."""


class ConnectionLost(ConnectFailed):
    """The request was sent but the connection broke (or timed out) before the whole answer came
    back: the server may have acted on it."""


class HTTPStatusFailed(ClientError):
    def __init__(self, message: str, status: int, detail: str = "") -> None:
        super().__init__(message)
        self.status = status
        self.detail = detail  # the server's own error text, if it gave one


class RpcError(ClientError):
    """A JSON-RPC error answer to a request."""

    def __init__(self, message: str, code: int | None, rpc_message: str = "") -> None:
        super().__init__(message)
        self.code = code
        self.rpc_message = rpc_message

    @property
    def not_offered(self) -> bool:
        """The server does not offer this method / operation."""
        return self.code in RPC_NOT_OFFERED


class MalformedFrame(ClientError):
    pass


class Unsupported(ClientError):
    pass


def excerpt(text: str, limit: int = _EXCERPT) -> str:
    """A short single-line excerpt of a body: HTML tags dropped, whitespace runs squeezed."""
    if text.lstrip().startswith("<"):
        text = re.sub(r"<(script|style)\b.*?</\1>|<[^>]*>", " ", text, flags=re.S | re.I)
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def parse_json(data: bytes | str) -> Any:
    """Parse a JSON body. pydantic-core's parser: a large session's tasks load in about 0.7x the
    time of ``json.loads``. ValueError on bad JSON."""
    return from_json(data)


def parse_frame(data: str) -> StreamEvent:
    """One SSE ``data:`` payload -> a classified event. MalformedFrame if it is not JSON."""
    try:
        frame = json.loads(data)
    except ValueError:
        raise MalformedFrame(f"malformed stream frame: {excerpt(data)!r}") from None
    return classify_frame(frame)


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


def dialect_from_card(card: dict[str, Any]) -> Dialect:
    """A2A 1.0 when a JSON-RPC interface says 1.x; else the card's ``protocolVersion``; else 0.3."""
    best: Dialect | None = None
    interfaces = card.get("supportedInterfaces") or card.get("supported_interfaces") or []
    for iface in interfaces if isinstance(interfaces, list) else ():
        if not isinstance(iface, dict):
            continue
        binding = str(iface.get("protocolBinding") or iface.get("transport") or "JSONRPC").upper()
        if binding != "JSONRPC":
            continue
        found = Dialect.parse(iface.get("protocolVersion") or iface.get("protocol_version"))
        if found is Dialect.V10:
            return Dialect.V10
        best = best or found
    return best or Dialect.parse(card.get("protocolVersion") or card.get("protocol_version")) or Dialect.V03


def capabilities_from_card(card: dict[str, Any], config: ServerConfig) -> Capabilities:
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
    api = config.api or (api_param if isinstance(api_param, str) else None)
    modes = tuple(m for m in contract.MODES if m in offered)
    if config.rewind == "off":
        modes = ()
    elif config.rewind in ("a2a", "rest"):
        modes = (config.rewind,)
    if "rest" in modes and not api:
        modes = tuple(m for m in modes if m != "rest")
    fork = bool(extension.get(contract.PARAM_FORK)) and bool(api) and config.rewind != "off"
    redo = bool(extension.get(contract.PARAM_REDO)) and bool(api) and config.rewind != "off"
    key = extension.get(contract.PARAM_METADATA_KEY)
    streaming = caps.get("streaming")
    return Capabilities(
        name=str(card.get("name") or "agent"),
        dialect=config.dialect or dialect_from_card(card),
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
            raise MalformedFrame(f"not a session: {excerpt(json.dumps(d, default=str))!r}")
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


# -- the client --------------------------------------------------------------------------------
class A2AClient:
    def __init__(self, config: ServerConfig, http: httpx.AsyncClient | None = None) -> None:
        self.config = config
        headers = dict(config.headers)
        if config.user_id:
            headers.setdefault(kagent.USER_HEADER, config.user_id)
        self._http = http or httpx.AsyncClient(headers=headers, timeout=config.timeout, follow_redirects=True)
        if http is not None:
            self._http.headers.update(headers)
        self.capabilities: Capabilities | None = None

    async def aclose(self) -> None:
        await self._http.aclose()

    async def __aenter__(self) -> A2AClient:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    @property
    def url(self) -> str:
        return self.config.url if self.config.url.endswith("/") else self.config.url + "/"

    @property
    def dialect(self) -> Dialect:
        if self.capabilities is not None:
            return self.capabilities.dialect
        return self.config.dialect or Dialect.V03

    # -- plumbing ------------------------------------------------------------------------------
    def _describe_transport(self, exc: Exception, url: str) -> ClientError:
        reason = excerpt(str(exc)) or type(exc).__name__
        if isinstance(exc, _LOST):
            what = "timed out waiting for" if isinstance(exc, httpx.TimeoutException) else "lost the connection to"
            return ConnectionLost(f"{what} {url} after sending the request ({reason})")
        if isinstance(exc, httpx.TimeoutException):
            return ConnectFailed(f"timed out connecting to {url}")
        if isinstance(exc, httpx.ConnectError):
            return ConnectFailed(f"cannot connect to {url}: {excerpt(str(exc)) or 'connection refused'}")
        return ConnectFailed(f"connection to {url} failed: {reason}")

    async def _request(self, method: str, url: str, **kw: Any) -> httpx.Response:
        try:
            response = await self._http.request(method, url, **kw)
        except httpx.TransportError as exc:
            raise self._describe_transport(exc, url) from None
        if response.status_code >= 400:
            raise _status_error(response)
        return response

    def _params(self) -> dict[str, str]:
        return {kagent.USER_QUERY: self.config.user_id} if self.config.user_id else {}

    async def _api(self, method: str, path: str, **kw: Any) -> Any:
        """A kagent-style REST call; returns the envelope's ``data`` (None when it has none:
        kagent's envelope omits an empty ``data``)."""
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
        if isinstance(body, dict) and ("error" in body or "data" in body):
            return body.get("data")  # the envelope; kagent leaves an empty data out
        return body  # a flat answer

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
                card = response.json()
            except ValueError:
                raise MalformedFrame(f"agent card at {url} is not JSON: {excerpt(response.text)!r}") from None
            if not isinstance(card, dict):
                raise MalformedFrame(f"agent card at {url} is not an object")
            return card
        assert last is not None
        raise last

    async def connect(self) -> Capabilities:
        """Read the agent card (once) and decide dialect and rewind support. When the card is not
        found at the URL, the configured fallback endpoints are tried, and the first that answers
        becomes the URL."""
        if self.capabilities is None:
            try:
                card = await self.fetch_card()
            except HTTPStatusFailed as exc:
                if exc.status != 404 or not self.config.fallback_urls:
                    raise
                card = await self._card_from_fallbacks(exc)
            self.capabilities = capabilities_from_card(card, self.config)
        return self.capabilities

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
    ) -> dict[str, Any]:
        return outgoing.user_message(
            text, dialect=self.dialect, context_id=session_id, task_id=task_id, metadata=metadata, data=data
        )

    def rewind_message(self, session_id: str, before: str, text: str | None = None) -> dict[str, Any]:
        """The seeds' control message: ``metadata[<key>] = before``, the key as the agent card's
        extension names it (default ``kagent_rewind_before_invocation_id``); non-empty text makes
        it rewind-and-send."""
        key = self.capabilities.metadata_key if self.capabilities else contract.REWIND_METADATA_KEY
        return self.build_message(text or "", session_id=session_id, metadata={key: before})

    async def stream(self, message: dict[str, Any], *, read_timeout: float | None = None) -> AsyncIterator[StreamEvent]:
        """Send one message with streaming and yield each classified event until the stream ends.

        No read timeout by default (a turn may think for a long time between events)."""
        caps = await self.connect()
        body = outgoing.stream_request(message, caps.dialect)
        async with self._sse(body, outgoing.headers_for(caps.dialect), read_timeout) as events:
            async for event in events:
                yield event

    async def subscribe(self, task_id: str) -> AsyncIterator[StreamEvent]:
        """Resume a live task's stream (``SubscribeToTask`` / ``tasks/resubscribe``). A server that
        does not offer it answers with a JSON-RPC error event (``not_offered`` codes)."""
        caps = await self.connect()
        name = method("subscribe", caps.dialect)
        assert name is not None
        body = outgoing.jsonrpc(name, {"id": task_id})
        async with self._sse(body, outgoing.headers_for(caps.dialect), None) as events:
            async for event in events:
                yield event

    @asynccontextmanager
    async def _sse(
        self, body: dict[str, Any], headers: dict[str, str], read_timeout: float | None
    ) -> AsyncIterator[AsyncIterator[StreamEvent]]:
        url = self.url
        try:
            timeout = httpx.Timeout(self.config.timeout, read=read_timeout)
            async with aconnect_sse(self._http, "POST", url, json=body, headers=headers, timeout=timeout) as source:
                response = source.response
                if response.status_code >= 400:
                    await response.aread()
                    raise _status_error(response)
                content_type = response.headers.get("content-type", "")
                if "text/event-stream" not in content_type:
                    # e.g. a JSON-RPC error answered as plain JSON
                    await response.aread()
                    yield _single(parse_frame(response.text))
                    return
                yield _events(source)
        except httpx.TransportError as exc:
            raise self._describe_transport(exc, url) from None
        except SSEError as exc:
            raise MalformedFrame(f"bad event stream from {url}: {exc}") from None

    # -- unary JSON-RPC ------------------------------------------------------------------------
    async def rpc(self, operation: str, params: dict[str, Any]) -> Any:
        """Call ``operation`` (``get_task``, ``list_tasks``, ``cancel_task``) in the server's
        dialect and return the JSON-RPC ``result``. RpcError on an error answer; Unsupported when
        the dialect has no such method (0.3 has no ``ListTasks``)."""
        caps = await self.connect()
        name = method(operation, caps.dialect)
        if name is None:
            raise Unsupported(f"A2A {caps.dialect.value} has no {operation.replace('_', ' ')} method")
        response = await self._request(
            "POST", self.url, json=outgoing.jsonrpc(name, params), headers=outgoing.headers_for(caps.dialect, stream=False)
        )
        try:
            frame = parse_json(response.content)
        except ValueError:
            raise MalformedFrame(f"{name}: not JSON: {excerpt(response.text)!r}") from None
        event = classify_frame(frame)
        if event.kind.value == "error":
            error = event.body if isinstance(event.body, dict) else {}
            code = error.get("code") if isinstance(error.get("code"), int) else None
            text = str(error.get("message") or "no message")
            raise RpcError(f"{name}: JSON-RPC error {code}: {text}", code, text)
        if not isinstance(frame, dict) or "result" not in frame:
            raise MalformedFrame(f"{name}: no result in {excerpt(response.text)!r}")
        return frame["result"]

    async def get_task(self, task_id: str, history_length: int | None = None) -> dict[str, Any]:
        """``GetTask`` / ``tasks/get``: the task as the server holds it."""
        params: dict[str, Any] = {"id": task_id}
        if history_length is not None:
            params["historyLength"] = history_length
        return _task_of(await self.rpc("get_task", params), "GetTask")

    async def list_tasks(self, context_id: str, *, page_size: int = 100, page_token: str | None = None) -> TaskPage:
        """One page of ``ListTasks`` (A2A 1.0) for a context, in the server's order."""
        params: dict[str, Any] = {"contextId": context_id, "pageSize": page_size, "includeArtifacts": True}
        if page_token:
            params["pageToken"] = page_token
        result = await self.rpc("list_tasks", params)
        if not isinstance(result, dict) or not isinstance(result.get("tasks", []), list):
            raise MalformedFrame(f"ListTasks: not a task list: {excerpt(json.dumps(result, default=str))!r}")
        tasks = [_task_of(t, "ListTasks") for t in result.get("tasks") or ()]
        token = result.get("nextPageToken") or result.get("next_page_token")
        return TaskPage(tasks, token if isinstance(token, str) and token else None)

    async def cancel_task(self, task_id: str) -> dict[str, Any]:
        """``CancelTask`` / ``tasks/cancel``: the task after the server took the request."""
        return _task_of(await self.rpc("cancel_task", {"id": task_id}), "CancelTask")

    # -- rewind and fork over REST -------------------------------------------------------------
    async def rewind_rest(self, session_id: str, before: str) -> Any:
        return await self._api(
            "POST", contract.REST_REWIND.format(id=_seg(session_id)), json={contract.REST_BEFORE_FIELD: before}
        )

    async def redo(self, session_id: str, rewind_task_id: str | None = None) -> dict[str, Any]:
        """Undo a rewind (None: the session's last one): the Task holding the effective history."""
        body = {contract.REST_REDO_FIELD: rewind_task_id} if rewind_task_id else {}
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
        data = await self._api("GET", kagent.SESSION_TASKS.format(id=_seg(session_id)), params=params)
        if data is None:
            return []  # kagent omits an empty list
        if not isinstance(data, list):
            raise MalformedFrame(f"tasks of {session_id}: expected a list")
        return data


def _more_telling(a: HTTPStatusFailed, b: HTTPStatusFailed) -> HTTPStatusFailed:
    """Of two 404s, the one whose server said more than a router's generic "not found"."""
    generic = ("404 page not found", "not found", "")
    return b if a.detail.strip().lower() in generic and b.detail.strip().lower() not in generic else a


def _seg(value: str) -> str:
    """A path segment, escaped."""
    return quote(value, safe="")


def _task_of(result: Any, what: str) -> dict[str, Any]:
    """A task from a JSON-RPC result: bare, 0.3 ``kind: task``, or a 1.0 ``{"task": ...}`` wrapper."""
    event = classify(result)
    if not event.is_task or not isinstance(event.body, dict):
        if isinstance(result, dict) and isinstance(result.get("id"), str) and "status" in result:
            return result
        raise MalformedFrame(f"{what}: not a task: {excerpt(json.dumps(result, default=str))!r}")
    return event.body


def _status_error(response: httpx.Response) -> HTTPStatusFailed:
    try:
        body = response.text
    except httpx.ResponseNotRead:
        body = ""
    detail = ""
    try:
        data = json.loads(body) if body else None
        if isinstance(data, dict):
            err = data.get("error")
            if isinstance(err, dict):
                detail = str(err.get("message") or err)
            elif isinstance(err, str):
                detail = err
            else:
                detail = str(data.get("message") or data.get("detail") or "")
    except ValueError:
        pass
    detail = excerpt(detail or body)
    reason = response.reason_phrase or ""
    msg = f"HTTP {response.status_code} {reason} from {response.request.method} {response.request.url}".replace("  ", " ")
    return HTTPStatusFailed(msg + (f": {detail}" if detail else ""), response.status_code, detail)


async def _events(source: Any) -> AsyncIterator[StreamEvent]:
    async for sse in source.aiter_sse():
        if not sse.data:
            continue  # keep-alive / comment-only events
        yield parse_frame(sse.data)


async def _single(event: StreamEvent) -> AsyncIterator[StreamEvent]:
    yield event
