"""The network side: an A2A agent (JSON-RPC or HTTP+JSON, streams over SSE) and a kagent-style
REST API.

A plain object over ``httpx.AsyncClient``. The agent card says which binding to use
(:func:`rewindtui.a2a.card.choose_interface`; :mod:`rewindtui.client.transports` speaks each). Streams
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

This module holds the client's A2A side (card, streams, unary calls); :mod:`~rewindtui.client.rest_api`
its REST calls (sessions, a session's tasks page by page, rewind/redo/fork over REST),
:mod:`~rewindtui.client.capabilities` what the card offers, :mod:`~rewindtui.client.tasks` task pages.
Every name listed in ``__all__`` is importable from here.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Sequence
from typing import Any

import httpx

from rewindtui.a2a import contract, kagent, outgoing
from rewindtui.a2a.card import wanted_schemes
from rewindtui.a2a.classify import StreamEvent
from rewindtui.a2a.dialect import Dialect
from rewindtui.a2a.stored_partials import drop_from_task
from rewindtui.client import wire_log
from rewindtui.client.attachments import Attachment
from rewindtui.client.auth import CredentialScope
from rewindtui.client.bounded_json import bound_task
from rewindtui.client.capabilities import (
    REWIND_EXTENSION,
    REWIND_MODES,
    Capabilities,
    ServerConfig,
    capabilities_from_card,
    card_says_starting,
)
from rewindtui.client.default_http import default_http
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
from rewindtui.client.rest_api import RestApi, Session
from rewindtui.client.tasks import PageProgress, PagingStalled, TaskPage, excerpt_of, task_of
from rewindtui.client.transports.base import Transport
from rewindtui.client.transports.factory import make_transport
from rewindtui.client.transports.http import bounded_request

__all__ = [
    "REWIND_EXTENSION",
    "REWIND_MODES",
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


# -- the client --------------------------------------------------------------------------------
class A2AClient(RestApi):
    """One agent: its card, streams and unary A2A calls here; the REST API's calls in :class:`RestApi`
    (:mod:`rewindtui.client.rest_api`); what the card offers in :mod:`rewindtui.client.capabilities`."""

    def __init__(self, config: ServerConfig, http: httpx.AsyncClient | None = None) -> None:
        self.config = config
        headers = dict(config.headers)
        if config.user_id:
            headers.setdefault(kagent.USER_HEADER, config.user_id)
        headers.update(config.credentials)
        #: what the user configured goes to the configured origins only (redirects included)
        self.scope = CredentialScope.for_urls(config.home(), headers)
        self._http = http or default_http(config.timeout)  # its TLS context made for the first https request
        self.scope.install(self._http)
        wire_log.attach(self._http)  # the wire log (--wire-log, the app's console): recorded while one is active
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
            caps = await self._capabilities_once_started(card)
            self._transport = make_transport(
                caps.binding, self._http, caps.endpoint, caps.dialect, self.config.timeout, scope=self.scope
            )
            self.capabilities = caps
        return self.capabilities

    async def _capabilities_once_started(self, card: dict[str, Any]) -> Capabilities:
        """The capabilities of ``card``; when no interface fits and the card says the agent is still
        starting (a gRPC port is listed once it is up), the card is read again until it fits or the
        agent is up, within the connect timeout."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + self.config.timeout
        delay = 0.05
        while True:
            try:
                return capabilities_from_card(card, self.config, self.url)
            except Unsupported:
                if not card_says_starting(card) or loop.time() + delay > deadline:
                    raise
            await asyncio.sleep(delay)  # the front says when the agent is up only in its card
            delay = min(delay * 2, 0.5)
            card = await self.fetch_card()

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
        return drop_from_task(task_of(await self.rpc("get_task", params), "GetTask"))

    async def list_tasks(self, context_id: str, *, page_size: int = 100, page_token: str | None = None) -> TaskPage:
        """One page of ``ListTasks`` (A2A 1.0) for a context, in the server's order."""
        params: dict[str, Any] = {"contextId": context_id, "pageSize": page_size, "includeArtifacts": True}
        if page_token:
            params["pageToken"] = page_token
        result = await self.rpc("list_tasks", params)
        if not isinstance(result, dict) or not isinstance(result.get("tasks", []), list):
            raise MalformedFrame(f"ListTasks: not a task list: {excerpt_of(result)!r}")
        tasks = [drop_from_task(task_of(t, "ListTasks")) for t in result.get("tasks") or ()]
        token = result.get("nextPageToken") or result.get("next_page_token")
        return TaskPage(tasks, token if isinstance(token, str) and token else None)

    async def cancel_task(self, task_id: str) -> dict[str, Any]:
        """``CancelTask`` / ``tasks/cancel``: the task after the server took the request."""
        return task_of(await self.rpc("cancel_task", {"id": task_id}), "CancelTask")


def _more_telling(a: HTTPStatusFailed, b: HTTPStatusFailed) -> HTTPStatusFailed:
    """Of two 404s, the one whose server said more than a router's generic "not found"."""
    generic = ("404 page not found", "not found", "")
    return b if a.detail.strip().lower() in generic and b.detail.strip().lower() not in generic else a
