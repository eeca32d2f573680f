"""Moved to :mod:`rewindtui.client.transports` (one module per binding). Kept for code written
before the move; import from the new modules, and delete this file once nothing imports it."""

from rewindtui.client.transports.base import REST_REASON_CODES, Transport, rest_error
from rewindtui.client.transports.factory import make_transport
from rewindtui.client.transports.http import (
    MAX_TURN_REDIRECTS,
    AnswerTooLarge,
    HttpTransport,
    RedirectRefused,
    bounded_request,
    read_bounded,
    segment,
    sse_frames,
)
from rewindtui.client.transports.jsonrpc import JsonRpcTransport
from rewindtui.client.transports.rest import RestTransport

__all__ = [
    "MAX_TURN_REDIRECTS",
    "REST_REASON_CODES",
    "AnswerTooLarge",
    "HttpTransport",
    "JsonRpcTransport",
    "RedirectRefused",
    "RestTransport",
    "Transport",
    "bounded_request",
    "make_transport",
    "read_bounded",
    "rest_error",
    "segment",
    "sse_frames",
]
