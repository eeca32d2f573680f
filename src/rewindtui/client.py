"""The network side: an A2A agent (streaming JSON-RPC over SSE) and a kagent-style REST API.

A plain object over ``httpx.AsyncClient``. Streams yield classified :class:`StreamEvent`s (a
JSON-RPC error on a stream is an ``EventKind.ERROR`` event, shown where it happened); every other
failure is a :class:`ClientError` subclass whose ``str()`` is one line a person can act on.
Rewind and fork are only ever sent to a server that says it supports them (agent card extension
or explicit configuration); otherwise :class:`Unsupported` is raised and nothing is sent.
"""

from __future__ import annotations

import json
import re
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import Any

import httpx
from httpx_sse import SSEError, aconnect_sse
from pydantic_core import from_json

from rewindtui.a2a import contract, outgoing
from rewindtui.a2a.classify import StreamEvent, classify_frame
from rewindtui.a2a.dialect import Dialect

#: The agent-card extension by which a server says it implements rewind and fork.
REWIND_EXTENSION = contract.EXTENSION_URI
REWIND_MODES = ("a2a", "rest", "off", "auto")
_EXCERPT = 200


# -- errors ------------------------------------------------------------------------------------
class ClientError(Exception):
    """A failure talking to the server; ``str()`` is a one-line human message."""


class ConnectFailed(ClientError):
    pass


class HTTPStatusFailed(ClientError):
    def __init__(self, message: str, status: int) -> None:
        super().__init__(message)
        self.status = status


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


@dataclass
class Capabilities:
    name: str
    dialect: Dialect
    rewind_modes: tuple[str, ...]  # what the server supports: "a2a", "rest"
    fork: bool
    api: str | None
    description: str = ""
    card: dict[str, Any] = field(default_factory=dict)
    #: the control message's metadata key, as the card's extension names it
    metadata_key: str = contract.REWIND_METADATA_KEY

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
        return f"{self.name} does not support rewind (its agent card does not advertise it)"


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
    for ext in caps.get("extensions") or ():
        if isinstance(ext, dict) and ext.get("uri") == REWIND_EXTENSION:
            params = ext.get("params")
            extension = params if isinstance(params, dict) and params else {contract.PARAM_REWIND: [contract.MODE_A2A]}
    advertised = extension.get(contract.PARAM_REWIND) or []
    if isinstance(advertised, str):
        advertised = [advertised]
    api_param = extension.get(contract.PARAM_API)
    api = config.api or (api_param if isinstance(api_param, str) else None)
    modes = tuple(m for m in contract.MODES if m in advertised)
    if config.rewind == "off":
        modes = ()
    elif config.rewind in ("a2a", "rest"):
        modes = (config.rewind,)
    if "rest" in modes and not api:
        modes = tuple(m for m in modes if m != "rest")
    fork = bool(extension.get(contract.PARAM_FORK)) and bool(api) and config.rewind != "off"
    key = extension.get(contract.PARAM_METADATA_KEY)
    return Capabilities(
        name=str(card.get("name") or "agent"),
        dialect=config.dialect or dialect_from_card(card),
        rewind_modes=modes,
        fork=fork,
        api=api,
        description=str(card.get("description") or ""),
        card=card,
        metadata_key=key if isinstance(key, str) and key else contract.REWIND_METADATA_KEY,
    )


@dataclass
class Session:
    id: str
    name: str = ""
    user_id: str | None = None
    created_at: str | None = None
    updated_at: str | None = None
    raw: dict[str, Any] = field(default_factory=dict)

    @classmethod
    def from_json(cls, d: Any) -> Session:
        if not isinstance(d, dict) or not isinstance(d.get("id"), str):
            raise MalformedFrame(f"not a session: {excerpt(json.dumps(d, default=str))!r}")
        return cls(
            id=d["id"],
            name=str(d.get("name") or ""),
            user_id=d.get("user_id"),
            created_at=d.get("created_at"),
            updated_at=d.get("updated_at"),
            raw=d,
        )


# -- the client --------------------------------------------------------------------------------
class A2AClient:
    def __init__(self, config: ServerConfig, http: httpx.AsyncClient | None = None) -> None:
        self.config = config
        headers = dict(config.headers)
        if config.user_id:
            headers.setdefault("X-User-Id", config.user_id)
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

    # -- plumbing ------------------------------------------------------------------------------
    def _describe_transport(self, exc: Exception, url: str) -> ClientError:
        if isinstance(exc, httpx.TimeoutException):
            return ConnectFailed(f"timed out talking to {url}")
        if isinstance(exc, httpx.ConnectError):
            return ConnectFailed(f"cannot connect to {url}: {excerpt(str(exc)) or 'connection refused'}")
        return ConnectFailed(f"connection to {url} failed: {excerpt(str(exc)) or type(exc).__name__}")

    async def _request(self, method: str, url: str, **kw: Any) -> httpx.Response:
        try:
            response = await self._http.request(method, url, **kw)
        except httpx.TransportError as exc:
            raise self._describe_transport(exc, url) from None
        if response.status_code >= 400:
            raise _status_error(response)
        return response

    def _params(self) -> dict[str, str]:
        return {"user_id": self.config.user_id} if self.config.user_id else {}

    async def _api(self, method: str, path: str, **kw: Any) -> Any:
        """A kagent-style REST call; returns the envelope's ``data``."""
        api = self._api_base()
        response = await self._request(method, api + path, params={**self._params(), **kw.pop("params", {})}, **kw)
        try:
            body = parse_json(response.content)
        except ValueError:
            raise MalformedFrame(f"{method} {path}: not JSON: {excerpt(response.text)!r}") from None
        if isinstance(body, dict) and body.get("error") not in (None, False):
            raise HTTPStatusFailed(f"{method} {path}: {body.get('error')}", response.status_code)
        return body.get("data") if isinstance(body, dict) and "data" in body else body

    def _api_base(self) -> str:
        api = self.config.api or (self.capabilities.api if self.capabilities else None)
        if not api:
            raise Unsupported("this server has no REST API configured (give --api)")
        return api.rstrip("/")

    # -- agent card ----------------------------------------------------------------------------
    async def fetch_card(self) -> dict[str, Any]:
        last: ClientError | None = None
        for name in ("agent-card.json", "agent.json"):
            url = self.url + ".well-known/" + name
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
        """Read the agent card (once) and decide dialect and rewind support."""
        if self.capabilities is None:
            self.capabilities = capabilities_from_card(await self.fetch_card(), self.config)
        return self.capabilities

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
        dialect = self.capabilities.dialect if self.capabilities else (self.config.dialect or Dialect.V03)
        return outgoing.user_message(
            text, dialect=dialect, context_id=session_id, task_id=task_id, metadata=metadata, data=data
        )

    async def stream(self, message: dict[str, Any]) -> AsyncIterator[StreamEvent]:
        """Send one message with streaming and yield each classified event until the stream ends."""
        caps = await self.connect()
        body = outgoing.stream_request(message, caps.dialect)
        headers = outgoing.headers_for(caps.dialect)
        async with self._sse(body, headers) as events:
            async for event in events:
                yield event

    @asynccontextmanager
    async def _sse(self, body: dict[str, Any], headers: dict[str, str]) -> AsyncIterator[AsyncIterator[StreamEvent]]:
        url = self.url
        try:
            # a turn may think for a long time between events: no read timeout on the stream
            timeout = httpx.Timeout(self.config.timeout, read=None)
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

    # -- rewind and fork -----------------------------------------------------------------------
    async def _require(self, what: str) -> Capabilities:
        caps = await self.connect()
        if what == "fork" and not caps.fork:
            raise Unsupported(f"{caps.name} does not support fork")
        if what == "rewind" and not caps.can_rewind:
            raise Unsupported(caps.why_no_rewind())
        return caps

    def rewind_message(self, session_id: str, before: str, text: str | None = None) -> dict[str, Any]:
        """The seeds' control message: ``metadata[<key>] = before``, the key as the agent card's
        extension names it (default ``kagent_rewind_before_invocation_id``); non-empty text makes
        it rewind-and-send."""
        key = self.capabilities.metadata_key if self.capabilities else contract.REWIND_METADATA_KEY
        return self.build_message(text or "", session_id=session_id, metadata={key: before})

    async def rewind_stream(self, message: dict[str, Any]) -> AsyncIterator[StreamEvent]:
        """Stream a rewind control message (built by :meth:`rewind_message`)."""
        caps = await self._require("rewind")
        if "a2a" not in caps.rewind_modes:
            raise Unsupported(f"{caps.name} does not take rewind over A2A")
        async for event in self.stream(message):
            yield event

    async def rewind_rest(self, session_id: str, before: str) -> Any:
        caps = await self._require("rewind")
        if "rest" not in caps.rewind_modes:
            raise Unsupported(f"{caps.name} does not take rewind over REST")
        return await self._api(
            "POST", contract.REST_REWIND.format(id=session_id), json={contract.REST_BEFORE_FIELD: before}
        )

    async def fork(self, session_id: str, before: str) -> Session:
        await self._require("fork")
        data = await self._api(
            "POST", contract.REST_FORK.format(id=session_id), json={contract.REST_BEFORE_FIELD: before}
        )
        return Session.from_json(data)

    # -- sessions and tasks (kagent-style REST) ------------------------------------------------
    @property
    def has_api(self) -> bool:
        return bool(self.config.api or (self.capabilities and self.capabilities.api))

    async def list_sessions(self) -> list[Session]:
        data = await self._api("GET", "/sessions")
        return [Session.from_json(s) for s in data or ()]

    async def create_session(self, name: str | None = None, session_id: str | None = None) -> Session:
        body: dict[str, Any] = {}
        if name:
            body["name"] = name
        if session_id:
            body["id"] = session_id
        return Session.from_json(await self._api("POST", "/sessions", json=body))

    async def get_session(self, session_id: str) -> Session:
        return Session.from_json(await self._api("GET", f"/sessions/{session_id}"))

    async def delete_session(self, session_id: str) -> None:
        await self._api("DELETE", f"/sessions/{session_id}")

    async def session_tasks(self, session_id: str, include_rewound: bool = False) -> list[dict[str, Any]]:
        params = {contract.REST_INCLUDE_REWOUND: "true"} if include_rewound else {}
        data = await self._api("GET", f"/sessions/{session_id}/tasks", params=params)
        if not isinstance(data, list):
            raise MalformedFrame(f"tasks of {session_id}: expected a list")
        return data


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
    return HTTPStatusFailed(msg + (f": {detail}" if detail else ""), response.status_code)


async def _events(source: Any) -> AsyncIterator[StreamEvent]:
    async for sse in source.aiter_sse():
        if not sse.data:
            continue  # keep-alive / comment-only events
        yield parse_frame(sse.data)


async def _single(event: StreamEvent) -> AsyncIterator[StreamEvent]:
    yield event
