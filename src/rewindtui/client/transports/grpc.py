"""The third A2A binding: gRPC (A2A 1.0), over ``grpc.aio`` and a2a-sdk's generated types.

It gives the client what :class:`rewindtui.client.transports.base.Transport` gives for the two HTTP bindings:
:meth:`GrpcTransport.stream` (``SendStreamingMessage``), :meth:`GrpcTransport.subscribe`
(``SubscribeToTask``) and :meth:`GrpcTransport.call` (``GetTask``, ``ListTasks``, ``CancelTask``),
with the same dicts in and out: the A2A 1.0 JSON of each message is the protobuf JSON mapping
of the generated type, so a message built for JSON-RPC (the rewind control message and its
metadata included) is parsed into the request as it is, and each ``StreamResponse`` comes back
as the ``{"task" | "message" | "statusUpdate" | "artifactUpdate": ...}`` dict the JSON-RPC
binding yields.

Errors read as the HTTP bindings' do: an A2A error (the ``google.rpc.ErrorInfo`` reason a2a-sdk's
``GrpcHandler`` puts in the status details, else the status code) is a JSON-RPC code -- an
``EventKind.ERROR`` event in a stream, :class:`~rewindtui.client.errors.RpcError` from a unary call;
``UNAUTHENTICATED`` / ``PERMISSION_DENIED`` are :class:`~rewindtui.client.errors.HTTPStatusFailed` 401 /
403 (so the client adds what the card's security schemes want); ``UNAVAILABLE`` before any answer
is :class:`~rewindtui.client.errors.ConnectFailed`, a break after it :class:`~rewindtui.client.errors.ConnectionLost`.

The target comes from the card's interface URL: ``grpcs://`` / ``https://`` use TLS (the
system's roots), ``grpc://`` / ``http://`` do not; a bare ``host:port`` uses TLS unless the host is
loopback. Credentials (the configured headers and the user id) go as call metadata only when
:func:`credentials_allowed` says the endpoint is home: its origin is one the user configured
(the project's rule for every credential). A gRPC port beside a configured origin on the same host
is home only when the user allowed it (``--grpc-same-host`` / ``REWINDTUI_GRPC_SAME_HOST=1``, and
the embedded server the app started itself); otherwise a connection that has credentials or a
user id to send is refused (:class:`GrpcCredentialsWithheld`, naming both origins and the setting)
rather than sent on without them.

This is the one client module that imports a2a-sdk and protobuf (grpcio is the ``grpc`` extra);
:func:`rewindtui.client.transports.factory.make_transport` loads it only when a card's gRPC interface is used.
"""

from __future__ import annotations

import asyncio
import contextlib
import ipaddress
import json
from collections.abc import AsyncIterator, Callable, Mapping
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

import grpc
import grpc.aio
from a2a.types import a2a_pb2 as pb
from a2a.types import a2a_pb2_grpc
from google.protobuf import json_format
from google.protobuf.message import Message as ProtoMessage
from google.rpc import error_details_pb2, status_pb2

from rewindtui.a2a.card import GRPC
from rewindtui.a2a.classify import EventKind, StreamEvent, classify
from rewindtui.a2a.dialect import Dialect
from rewindtui.a2a.kagent import USER_HEADER
from rewindtui.client.auth import CredentialScope, is_sensitive_header, redact
from rewindtui.client.errors import (
    ClientError,
    ConnectFailed,
    ConnectionLost,
    HTTPStatusFailed,
    MalformedFrame,
    RpcError,
)
from rewindtui.client.transports.base import REST_REASON_CODES, Transport

#: the A2A version every call names (a2a-sdk's gRPC client sends the same)
VERSION_METADATA = ("a2a-version", "1.0")
_STATUS_DETAILS = "grpc-status-details-bin"
_A2A_DOMAIN = "a2a-protocol.org"
#: a status code without an A2A reason -> the JSON-RPC code of the same error
_CODE_FALLBACK = {
    grpc.StatusCode.NOT_FOUND: -32001,
    grpc.StatusCode.INVALID_ARGUMENT: -32602,
    grpc.StatusCode.UNIMPLEMENTED: -32601,
    grpc.StatusCode.FAILED_PRECONDITION: -32004,
    grpc.StatusCode.INTERNAL: -32603,
    grpc.StatusCode.UNKNOWN: -32603,
}
_AUTH_STATUS = {grpc.StatusCode.UNAUTHENTICATED: 401, grpc.StatusCode.PERMISSION_DENIED: 403}
_LOOPBACK = frozenset({"localhost", "127.0.0.1", "::1"})
#: the largest message either way (grpcio's default takes 4 MB in): a turn may carry 10 MB of
#: inline files (``attachments.MAX_INLINE_BYTES``), and a task's history holds them
MAX_MESSAGE_BYTES = 64 * 1024 * 1024
CHANNEL_OPTIONS = (
    ("grpc.max_receive_message_length", MAX_MESSAGE_BYTES),
    ("grpc.max_send_message_length", MAX_MESSAGE_BYTES),
)


@dataclass(frozen=True)
class Target:
    """Where a gRPC interface URL points: ``host:port`` for grpcio, and whether to use TLS."""

    address: str
    host: str
    port: int
    tls: bool

    @property
    def origin_url(self) -> str:
        """The endpoint as an http(s) URL, to compare with the origins the user configured."""
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"{'https' if self.tls else 'http'}://{host}:{self.port}"


def parse_target(url: str) -> Target:
    """A card's gRPC interface URL as a target. ClientError when it names no host and port."""
    text = url.strip()
    if "://" not in text:
        text = "//" + text
    parts = urlsplit(text)
    scheme = parts.scheme.lower()
    try:
        port = parts.port
    except ValueError:
        port = None
    host = parts.hostname or ""
    if scheme not in ("", "grpc", "grpcs", "http", "https") or not host:
        raise ClientError(
            f"cannot read the gRPC address {url!r}: give host:port, grpc://host:port or grpcs://host:port"
        )
    if port is None:
        port = {"https": 443, "grpcs": 443, "http": 80}.get(scheme)
        if port is None:
            raise ClientError(f"the gRPC address {url!r} names no port")
    tls = scheme in ("grpcs", "https") or (scheme == "" and not _is_loopback(host))
    address = f"[{host}]:{port}" if ":" in host else f"{host}:{port}"
    return Target(address, host, port, tls)


def _is_loopback(host: str) -> bool:
    if host.lower() in _LOOPBACK or host.lower().endswith(".localhost"):
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def credentials_allowed(scope: CredentialScope, target: Target) -> bool:
    """Whether the configured headers may go to this gRPC endpoint: its origin is one the user
    configured; or the user allowed gRPC on the same host (``scope.grpc_same_host``), it is on the
    host of a configured origin (a gRPC port beside the HTTP one) and no less protected (TLS when
    that origin is https)."""
    if scope.allows(target.origin_url):
        return True
    return scope.grpc_same_host and _beside(scope, target)


def _beside(scope: CredentialScope, target: Target) -> bool:
    return any(host == target.host and (target.tls or scheme == "http") for scheme, host, _ in scope.origins)


class GrpcCredentialsWithheld(ClientError):
    category = "auth"


def check_credentials(scope: CredentialScope, target: Target) -> None:
    """Refuse (GrpcCredentialsWithheld, one line) a gRPC endpoint that would have to be used
    without the credentials or the user id the user configured: they go only to configured origins."""
    if credentials_allowed(scope, target):
        return
    withheld = sorted(
        name for name in scope.headers if is_sensitive_header(name) or name.lower() == USER_HEADER.lower()
    )
    if not withheld:
        return  # nothing of the user's would be missing (headers without secrets are simply not sent)
    home = ", ".join(sorted(f"{s}://{h}" + (f":{p}" if p else "") for s, h, p in scope.origins)) or "none"
    what = f"your {' and '.join(withheld)}"
    if any(host == target.host for _, host, _ in scope.origins):
        less = "" if _beside(scope, target) else " (and it is not protected by TLS as that origin is)"
        raise GrpcCredentialsWithheld(
            f"the agent's card offers gRPC at {target.origin_url}, another origin of the host you configured "
            f"({home}){less}: "
            f"rewindtui sends {what} only to origins you configured",
            hint=(
                "to send them to that gRPC port too, set REWINDTUI_GRPC_SAME_HOST=1 (or --grpc-same-host); "
                "or use the HTTP binding the card offers (--binding JSONRPC)"
            )
            if not less
            else "use the HTTP binding the card offers (--binding JSONRPC)",
        )
    raise GrpcCredentialsWithheld(
        f"the agent's card offers gRPC at {target.origin_url}, not an origin you configured ({home}): "
        f"rewindtui does not send {what} there",
        hint="use the HTTP binding the card offers (--binding JSONRPC), or point --url at that agent's own card",
    )


def call_metadata(scope: CredentialScope, target: Target) -> tuple[tuple[str, str], ...]:
    """The metadata of every call: the A2A version, and the configured headers where allowed."""
    pairs = [VERSION_METADATA]
    if credentials_allowed(scope, target):
        pairs += [(name.lower(), value) for name, value in scope.headers.items()]
    return tuple(pairs)


# -- errors -------------------------------------------------------------------------------------
def _reason(error: grpc.aio.AioRpcError) -> str | None:
    """The ``google.rpc.ErrorInfo`` reason a2a-sdk's handler puts in the status details."""
    for key, value in error.trailing_metadata() or ():
        if key != _STATUS_DETAILS or not isinstance(value, bytes):
            continue
        status = status_pb2.Status()
        try:
            status.ParseFromString(value)
        except Exception:
            return None
        for detail in status.details:
            if detail.Is(error_details_pb2.ErrorInfo.DESCRIPTOR):
                info = error_details_pb2.ErrorInfo()
                detail.Unpack(info)
                if info.domain == _A2A_DOMAIN:
                    return str(info.reason)
    return None


def error_body(error: grpc.aio.AioRpcError) -> dict[str, Any]:
    """An A2A error answer as the JSON-RPC style ``{"code", "message"}`` the client reads."""
    reason = _reason(error)
    code = REST_REASON_CODES.get(reason or "", _CODE_FALLBACK.get(error.code(), -32603))
    return {"code": code, "message": error.details() or error.code().name, "status": error.code().name}


def _failure(error: grpc.aio.AioRpcError, target: Target, what: str, answered: bool) -> ClientError | None:
    """The client error for a status that is not an A2A error answer (None: it is one)."""
    code = error.code()
    detail = error.details() or code.name
    if code in _AUTH_STATUS:
        status = _AUTH_STATUS[code]
        return HTTPStatusFailed(
            f"gRPC {code.name} from {what} at {target.address}: {detail}", status, detail, url=target.origin_url
        )
    if code is grpc.StatusCode.UNAVAILABLE:
        if answered:
            return ConnectionLost(f"lost the connection to {target.address} after sending the request ({detail})")
        return ConnectFailed(f"cannot connect to gRPC {target.address}: {detail}")
    if code is grpc.StatusCode.DEADLINE_EXCEEDED:
        return ConnectionLost(f"timed out waiting for {target.address} after sending the request")
    if code is grpc.StatusCode.CANCELLED:
        return ConnectionLost(f"the call to {target.address} was cancelled ({detail})")
    if code is grpc.StatusCode.RESOURCE_EXHAUSTED:  # too large a message, or a quota
        if answered:
            return ConnectionLost(f"the answer from {target.address} broke off: {detail}")
        return HTTPStatusFailed(
            f"gRPC {code.name} from {what} at {target.address}: {detail}", 429, detail, url=target.origin_url
        )
    return None


def _to_proto(data: Mapping[str, Any], message: ProtoMessage, what: str) -> Any:
    try:
        return json_format.ParseDict(dict(data), message)
    except json_format.ParseError as exc:
        raise ClientError(f"{what}: cannot be said over gRPC: {exc}") from None


def _to_json(message: ProtoMessage) -> dict[str, Any]:
    data: dict[str, Any] = json_format.MessageToDict(message)  # a message renders as a JSON object
    return data


# -- the transport ------------------------------------------------------------------------------
_OPERATIONS: dict[str, tuple[str, Callable[[], ProtoMessage]]] = {
    "get_task": ("GetTask", pb.GetTaskRequest),
    "list_tasks": ("ListTasks", pb.ListTasksRequest),
    "cancel_task": ("CancelTask", pb.CancelTaskRequest),
    "set_push": ("CreateTaskPushNotificationConfig", pb.TaskPushNotificationConfig),
    "get_push": ("GetTaskPushNotificationConfig", pb.GetTaskPushNotificationConfigRequest),
    "list_push": ("ListTaskPushNotificationConfigs", pb.ListTaskPushNotificationConfigsRequest),
    "delete_push": ("DeleteTaskPushNotificationConfig", pb.DeleteTaskPushNotificationConfigRequest),
}


class GrpcTransport(Transport):
    """A2A 1.0 over gRPC at the card's interface URL. The channel is opened on first use (on the
    event loop that uses it) and closed by :meth:`aclose`."""

    binding = GRPC

    def __init__(
        self, url: str, scope: CredentialScope, timeout: float, *, root_certificates: bytes | None = None
    ) -> None:
        super().__init__(url, Dialect.V10, timeout)
        self.target = parse_target(url)
        self.scope = scope
        check_credentials(scope, self.target)  # credentials go to configured origins only
        #: PEM of the CAs to trust for TLS (None: the system's roots)
        self.root_certificates = root_certificates
        self._channel: grpc.aio.Channel | None = None
        self._stub: Any = None

    def _stub_ready(self) -> Any:
        if self._channel is None:
            logged = wire_interceptors(self.target.address)  # the wire log, while one is active
            if self.target.tls:
                credentials = grpc.ssl_channel_credentials(root_certificates=self.root_certificates)
                self._channel = grpc.aio.secure_channel(
                    self.target.address, credentials, options=CHANNEL_OPTIONS, interceptors=logged
                )
            else:
                self._channel = grpc.aio.insecure_channel(
                    self.target.address, options=CHANNEL_OPTIONS, interceptors=logged
                )
            self._stub = a2a_grpc_stub(self._channel)
        return self._stub

    def _metadata(self) -> tuple[tuple[str, str], ...]:
        return call_metadata(self.scope, self.target)

    async def aclose(self) -> None:
        channel, self._channel, self._stub = self._channel, None, None
        if channel is not None:
            await channel.close()

    def _send(self, params: dict[str, Any], read_timeout: float | None) -> Any:
        request = _to_proto(params, pb.SendMessageRequest(), "the message")
        return self._stream("SendStreamingMessage", request, read_timeout)

    def subscribe(self, task_id: str) -> Any:
        return self._stream("SubscribeToTask", pb.SubscribeToTaskRequest(id=task_id), None, ready_first=True)

    @asynccontextmanager
    async def _stream(
        self, name: str, request: ProtoMessage, read_timeout: float | None, *, ready_first: bool = False
    ) -> AsyncIterator[Any]:
        stub = self._stub_ready()
        if ready_first and self._channel is not None:
            # a resume comes right after a lost connection, while the channel may still be
            # reconnecting: a call made then fails at once (UNAVAILABLE, gRPC's fail-fast). Wait
            # for the channel, as long as a call may take; then the call says what it says.
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._channel.channel_ready(), self.timeout)
        call = getattr(stub, name)(request, metadata=self._metadata())
        try:
            yield self._events(call, name, read_timeout)
        finally:
            call.cancel()

    async def _events(self, call: Any, name: str, read_timeout: float | None) -> AsyncIterator[StreamEvent]:
        answered = False
        reader = call.__aiter__()
        while True:
            try:
                if read_timeout is None:
                    response = await reader.__anext__()
                else:
                    response = await asyncio.wait_for(reader.__anext__(), read_timeout)
            except StopAsyncIteration:
                return
            except TimeoutError:
                raise ConnectionLost(
                    f"timed out waiting for {self.target.address} after sending the request (no event in "
                    f"{read_timeout:g} s)"
                ) from None
            except grpc.aio.AioRpcError as exc:
                failure = _failure(exc, self.target, name, answered)
                if failure is not None:
                    raise failure from None
                yield StreamEvent(EventKind.ERROR, error_body(exc))
                return
            answered = True
            event = classify(_to_json(response))
            if event.kind is EventKind.UNKNOWN:
                raise MalformedFrame(f"{name}: an empty stream response from {self.target.address}")
            yield event

    async def call(self, operation: str, params: dict[str, Any]) -> Any:
        if operation not in _OPERATIONS:
            raise ClientError(f"gRPC: no {operation.replace('_', ' ')} method")
        name, make = _OPERATIONS[operation]
        request = _to_proto(params, make(), name)
        try:
            response = await getattr(self._stub_ready(), name)(request, metadata=self._metadata(), timeout=self.timeout)
        except grpc.aio.AioRpcError as exc:
            # UNAVAILABLE on a unary call: most often no connection could be made (a request cut
            # half way reads the same; the calls here are reads and a cancel, safe to ask again)
            failure = _failure(exc, self.target, name, False)
            if failure is not None:
                raise failure from None
            body = error_body(exc)
            raise RpcError(
                f"{name}: gRPC error {body['code']}: {body['message']}", body["code"], body["message"]
            ) from None
        return _to_json(response)


def wire_interceptors(target: str) -> list[Any]:
    """Client interceptors recording each call on ``target`` (the request, each message, the end
    status) in the wire log active at that call (:mod:`rewindtui.client.wire_log`); they pass
    everything through when none is."""
    from rewindtui.client import wire_log

    def as_json(message: Any) -> str:
        try:
            return wire_log.redact_body(json.dumps(_to_json(message)))
        except Exception:
            return f"({type(message).__name__})"

    def method_of(details: Any) -> str:
        return details.method.decode() if isinstance(details.method, bytes) else str(details.method)

    class Unary(grpc.aio.UnaryUnaryClientInterceptor):  # type: ignore[misc]  # grpcio has no type hints: Any
        async def intercept_unary_unary(self, continuation: Any, details: Any, request: Any) -> Any:
            log = wire_log.active()
            if log is None:
                return await continuation(details, request)
            rid, started = wire_log.grpc_request(log, target, method_of(details), details.metadata, as_json(request))
            call = await continuation(details, request)
            try:
                response = await call
            except grpc.aio.AioRpcError as exc:
                log.add(
                    "end",
                    id=rid,
                    ms=wire_log.since(started),
                    status=exc.code().name,
                    error=redact(exc.details() or ""),
                )
                raise
            log.add("response", id=rid, ms=wire_log.since(started), status="OK", body=as_json(response))
            return response

    class Streaming(grpc.aio.UnaryStreamClientInterceptor):  # type: ignore[misc]  # grpcio has no type hints
        async def intercept_unary_stream(self, continuation: Any, details: Any, request: Any) -> Any:
            log = wire_log.active()
            if log is None:
                return await continuation(details, request)
            rid, started = wire_log.grpc_request(log, target, method_of(details), details.metadata, as_json(request))
            call = await continuation(details, request)

            async def frames() -> AsyncIterator[Any]:
                status = "OK"
                try:
                    async for message in call:
                        log.add("frame", id=rid, ms=wire_log.since(started), body=as_json(message))
                        yield message
                except grpc.aio.AioRpcError as exc:
                    status = exc.code().name
                    raise
                finally:
                    log.add("end", id=rid, ms=wire_log.since(started), status=status)

            return frames()

    return [Unary(), Streaming()]


def a2a_grpc_stub(channel: grpc.aio.Channel) -> Any:
    """a2a-sdk's generated ``A2AServiceStub`` on ``channel``."""
    return a2a_pb2_grpc.A2AServiceStub(channel)  # type: ignore[no-untyped-call]  # generated, unannotated
