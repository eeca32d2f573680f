"""gRPC-Web framing (the protocol kagent 1.0's controller serves on its HTTP port, wrapped by
improbable-eng's grpc-web in ``go/core/internal/grpcserver/grpcweb.go`` at 241979a08; it strips a
leading ``/api``, so a call goes to ``/api/<package>.<Service>/<Method>``).

A message is one frame: a flag byte (0 data, 0x80 trailers), a 4-byte big-endian length, the bytes.
The status comes in the trailer frame (``grpc-status``, ``grpc-message``, percent-encoded), or in
the HTTP headers of a trailers-only answer.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass
from urllib.parse import unquote

CONTENT_TYPE = "application/grpc-web+proto"
HEADERS = {"Content-Type": CONTENT_TYPE, "Accept": CONTENT_TYPE, "X-Grpc-Web": "1"}
_TRAILERS = 0x80

#: gRPC status codes by number (google.rpc.Code)
CODES = {
    0: "OK",
    1: "CANCELLED",
    2: "UNKNOWN",
    3: "INVALID_ARGUMENT",
    4: "DEADLINE_EXCEEDED",
    5: "NOT_FOUND",
    6: "ALREADY_EXISTS",
    7: "PERMISSION_DENIED",
    8: "RESOURCE_EXHAUSTED",
    9: "FAILED_PRECONDITION",
    10: "ABORTED",
    11: "OUT_OF_RANGE",
    12: "UNIMPLEMENTED",
    13: "INTERNAL",
    14: "UNAVAILABLE",
    15: "DATA_LOSS",
    16: "UNAUTHENTICATED",
}


class GrpcError(Exception):
    """A call that ended with a non-OK status: ``code`` is its name (``FAILED_PRECONDITION`` ...);
    ``reason`` and ``domain`` are its ``google.rpc.ErrorInfo`` when the status carries one (the
    ``grpc-status-details-bin`` trailer, a serialized ``google.rpc.Status``)."""

    def __init__(self, code: str, message: str, *, reason: str = "", domain: str = "") -> None:
        super().__init__(f"{code}: {message}" if message else code)
        self.code = code
        self.message = message
        self.reason = reason
        self.domain = domain


def frame(message: bytes, flag: int = 0) -> bytes:
    return struct.pack(">BI", flag, len(message)) + message


def trailers(status: int, message: str = "", details: bytes = b"") -> bytes:
    import base64
    from urllib.parse import quote

    text = f"grpc-status: {status}\r\n" + (f"grpc-message: {quote(message)}\r\n" if message else "")
    if details:
        text += f"grpc-status-details-bin: {base64.b64encode(details).decode().rstrip('=')}\r\n"
    return frame(text.encode(), _TRAILERS)


@dataclass
class Reply:
    messages: list[bytes]
    status: int | None
    message: str
    details: bytes = b""  # grpc-status-details-bin, decoded: a google.rpc.Status


MAX_DETAILS = 64 * 1024  # an outside party's status details are bounded


def error_info(details: bytes) -> tuple[str, str]:
    """(reason, domain) of the first ``google.rpc.ErrorInfo`` in a serialized ``google.rpc.Status``
    (("", "") when there is none or it does not parse)."""
    if not details or len(details) > MAX_DETAILS:
        return "", ""
    from google.protobuf.message import DecodeError
    from google.rpc import error_details_pb2, status_pb2

    try:
        status = status_pb2.Status.FromString(details)
    except DecodeError:
        return "", ""
    for detail in status.details:
        info = error_details_pb2.ErrorInfo()
        if detail.Is(info.DESCRIPTOR):
            try:
                detail.Unpack(info)
            except DecodeError:
                continue
            return info.reason, info.domain
    return "", ""


def _b64(value: str) -> bytes:
    import base64
    import binascii

    text = value.strip()
    try:
        return base64.b64decode(text + "=" * (-len(text) % 4))
    except (binascii.Error, ValueError):
        return b""


def parse(body: bytes, headers: dict[str, str] | None = None) -> Reply:
    """The data frames and the status of a gRPC-Web answer."""
    messages: list[bytes] = []
    status: int | None = None
    text = ""
    details = b""
    at = 0
    while at + 5 <= len(body):
        flag, length = struct.unpack(">BI", body[at : at + 5])
        chunk = body[at + 5 : at + 5 + length]
        at += 5 + length
        if flag & _TRAILERS:
            for line in chunk.decode("utf-8", "replace").split("\r\n"):
                key, _, value = line.partition(":")
                if key.strip().lower() == "grpc-status":
                    status = int(value.strip() or 2)
                elif key.strip().lower() == "grpc-message":
                    text = unquote(value.strip())
                elif key.strip().lower() == "grpc-status-details-bin":
                    details = _b64(value)
        else:
            messages.append(chunk)
    if status is None and headers:
        lowered = {k.lower(): v for k, v in headers.items()}
        if "grpc-status" in lowered:
            status = int(lowered["grpc-status"] or 2)
            text = unquote(lowered.get("grpc-message", ""))
            details = _b64(lowered.get("grpc-status-details-bin", ""))
    return Reply(messages, status, text, details)


def check(reply: Reply) -> bytes:
    """The one answer message, or :class:`GrpcError` for a non-OK (or missing) status."""
    if reply.status is None:
        raise GrpcError("UNKNOWN", "the answer has no gRPC status (not a gRPC-Web server?)")
    if reply.status != 0:
        reason, domain = error_info(reply.details)
        raise GrpcError(CODES.get(reply.status, str(reply.status)), reply.message, reason=reason, domain=domain)
    if len(reply.messages) != 1:
        raise GrpcError("INTERNAL", f"expected one answer message, got {len(reply.messages)}")
    return reply.messages[0]
