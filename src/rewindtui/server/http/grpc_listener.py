"""The embedded server's gRPC binding (A2A 1.0): a2a-sdk's ``GrpcHandler`` over the same
:class:`~rewindtui.server.http.handler.AgentRequestHandler` as the HTTP bindings, on a second port of
the host the server binds (loopback by default), started in the app's lifespan on its event loop.

* The same requests reach the same handler: a rewind control message sent over gRPC runs ADK's
  ``rewind_async`` as it does over JSON-RPC's slow path and HTTP+JSON.
* The same door: when the server has a token, every call needs the metadata
  ``authorization: Bearer <token>`` (constant-time comparison) or ends ``UNAUTHENTICATED``; the
  user id comes from ``x-user-id`` as over HTTP (``users.user_from``). A server with users
  (``--users``) takes each user's own token instead, and the token says who the user is, shares
  and all (:mod:`.grpc_users`).
* The card lists the interface (``protocolBinding: GRPC``, URL ``host:port``) once it listens.

grpcio is the ``grpc`` extra: without it the server serves the HTTP bindings only (logged).
"""

from __future__ import annotations

import hmac
import logging
from collections.abc import Callable
from typing import Any
from urllib.parse import urlsplit

from a2a.server.context import ServerCallContext
from a2a.server.request_handlers.request_handler import RequestHandler

from rewindtui.server.http.grpc_users import BEARER_STATE_KEY, UNAUTHENTICATED_TEXT, UserScopedHandler, bearer_of
from rewindtui.server.http.handler import USER_ERROR_KEY, USER_STATE_KEY
from rewindtui.server.http.team_users import TeamDoor
from rewindtui.server.http.users import USER_HEADER, InvalidUser, user_from

log = logging.getLogger(__name__)

GRPC_BINDING = "GRPC"
#: seconds running calls get to finish when the server stops
STOP_GRACE = 1.0
#: the largest message either way (grpcio's default takes 4 MB in; a turn may carry 10 MB of files)
MAX_MESSAGE_BYTES = 64 * 1024 * 1024


def _metadata_value(metadata: Any, key: str) -> str | None:
    for name, value in metadata or ():
        if name.lower() == key:
            return value.decode("utf-8", "replace") if isinstance(value, bytes) else str(value)
    return None


def token_ok(metadata: Any, token: str | None) -> bool:
    """Whether call metadata carries ``authorization: Bearer <token>`` (always, with no token)."""
    if token is None:
        return True
    scheme, _, value = (_metadata_value(metadata, "authorization") or "").partition(" ")
    return scheme.lower() == "bearer" and hmac.compare_digest(value.strip().encode(), token.encode())


class GrpcListener:
    """Serve ``handler`` over gRPC at ``host`` (port chosen by the system) while running."""

    def __init__(
        self,
        handler: RequestHandler,
        host: str,
        token: str | None,
        url_host: str | None = None,
        *,
        users: TeamDoor | None = None,
    ) -> None:
        #: a server with users: each call as its token's user (grpc_users.py)
        self.users = users
        self.handler: RequestHandler = handler if users is None else UserScopedHandler(handler, users)
        self.host = host
        self.token = token
        self.url_host = url_host or host
        self.port: int | None = None
        self._server: Any = None

    @property
    def url(self) -> str | None:
        """The card's URL of the interface (``host:port``); None when not listening."""
        if self.port is None:
            return None
        host = f"[{self.url_host}]" if ":" in self.url_host else self.url_host
        return f"{host}:{self.port}"

    async def start(self) -> str | None:
        """Listen; the interface URL, or None when grpcio is not installed."""
        try:
            import grpc
            import grpc.aio
            from a2a.server.request_handlers.grpc_handler import GrpcHandler
            from a2a.types import a2a_pb2_grpc
        except ImportError as exc:
            log.info("gRPC binding not served (%s): pip install 'rewindtui[grpc]'", exc)
            return None
        server = grpc.aio.server(
            interceptors=[_token_interceptor(grpc, self.token, self.users)],
            options=[
                ("grpc.max_receive_message_length", MAX_MESSAGE_BYTES),
                ("grpc.max_send_message_length", MAX_MESSAGE_BYTES),
            ],
        )
        a2a_pb2_grpc.add_A2AServiceServicer_to_server(
            GrpcHandler(self.handler, _context_builder(users=self.users is not None)), server
        )
        host = f"[{self.host}]" if ":" in self.host else self.host
        self.port = server.add_insecure_port(f"{host}:0")
        await server.start()
        self._server = server
        return self.url

    async def stop(self) -> None:
        server, self._server = self._server, None
        if server is not None:
            await server.stop(STOP_GRACE)


def url_host_of(base_url: str) -> str:
    return urlsplit(base_url).hostname or "127.0.0.1"


def _context_builder(*, users: bool = False) -> Any:
    from a2a.server.request_handlers.grpc_handler import DefaultGrpcServerCallContextBuilder

    class UserGrpcContextBuilder(DefaultGrpcServerCallContextBuilder):
        """a2a-sdk's context, plus the caller's user id (``x-user-id``), as the HTTP side adds."""

        def build(self, context: Any) -> ServerCallContext:
            built = super().build(context)
            if users:  # the token says who (grpc_users.UserScopedHandler); x-user-id is ignored
                auth = _metadata_value(context.invocation_metadata(), "authorization")
                built.state[BEARER_STATE_KEY] = bearer_of(auth)
                return built
            try:
                built.state[USER_STATE_KEY] = user_from(
                    _metadata_value(context.invocation_metadata(), USER_HEADER.lower())
                )
            except InvalidUser as exc:
                built.state[USER_ERROR_KEY] = str(exc)
            return built

    return UserGrpcContextBuilder()


def _token_interceptor(grpc: Any, token: str | None, users: TeamDoor | None = None) -> Any:
    """A server interceptor that ends every call without the token (with ``users``: without a
    user's token) ``UNAUTHENTICATED``."""
    message = (
        UNAUTHENTICATED_TEXT
        if users is not None
        else "this server needs the metadata authorization: Bearer <token> (the token it was started with)"
    )

    async def allowed(metadata: Any) -> bool:
        if users is None:
            return token_ok(metadata, token)
        bearer = bearer_of(_metadata_value(metadata, "authorization"))
        return bool(bearer) and await users.user(bearer) is not None

    async def deny_unary(request: Any, context: Any) -> Any:
        await context.abort(grpc.StatusCode.UNAUTHENTICATED, message)

    async def deny_stream(request: Any, context: Any) -> Any:
        await context.abort(grpc.StatusCode.UNAUTHENTICATED, message)
        yield  # pragma: no cover - abort raises

    class TokenInterceptor(grpc.aio.ServerInterceptor):
        async def intercept_service(self, continuation: Callable[[Any], Any], details: Any) -> Any:
            handler = await continuation(details)
            if handler is None or await allowed(details.invocation_metadata):
                return handler
            kw = {
                "request_deserializer": handler.request_deserializer,
                "response_serializer": handler.response_serializer,
            }
            if handler.unary_stream is not None:
                return grpc.unary_stream_rpc_method_handler(deny_stream, **kw)
            return grpc.unary_unary_rpc_method_handler(deny_unary, **kw)

    return TokenInterceptor()
