"""The binding for a card's interface: :func:`make_transport` (a2a-python's ``ClientFactory`` is
the model). gRPC is loaded only when a card's gRPC interface is used (it needs grpcio and
a2a-sdk's generated types)."""

from __future__ import annotations

import httpx

from rewindtui.a2a.card import GRPC, HTTP_JSON
from rewindtui.a2a.dialect import Dialect
from rewindtui.client.auth import CredentialScope
from rewindtui.client.errors import Unsupported
from rewindtui.client.transports.base import Transport
from rewindtui.client.transports.jsonrpc import JsonRpcTransport
from rewindtui.client.transports.rest import RestTransport


def make_transport(
    binding: str,
    http: httpx.AsyncClient,
    url: str,
    dialect: Dialect,
    timeout: float,
    scope: CredentialScope | None = None,
) -> Transport:
    if binding == GRPC:
        # the one binding built on a2a-sdk's generated types and grpcio: loaded only when used
        try:
            from rewindtui.client.transports.grpc import GrpcTransport
        except ImportError as exc:
            raise Unsupported(f"the gRPC binding needs grpcio ({exc}): pip install 'rewindtui[grpc]'") from None
        return GrpcTransport(url, scope or CredentialScope(), timeout)
    if binding == HTTP_JSON:
        if dialect is not Dialect.V10:
            raise Unsupported("rewindtui speaks the HTTP+JSON binding in A2A 1.0 only; use JSON-RPC with this agent")
        return RestTransport(http, url, dialect, timeout)
    return JsonRpcTransport(http, url, dialect, timeout)
