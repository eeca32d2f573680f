"""kagent 1.0's controller calls in the wire log (:mod:`rewindtui.client.wire_log`: ``--wire-log
FILE``, the app's wire console), beside the A2A traffic of the same tab.

One call is a ``request`` entry (``method`` ``gRPC-Web`` or ``gRPC``, ``url`` the call's path
``/api/<package>.<Service>/<Method>`` on the controller, or ``grpc://host:port/<Service>/<Method>``,
the metadata sent as ``headers``, the request message as JSON), then either a ``response`` entry
(status ``OK``, the answer as JSON) or an ``end`` entry (the gRPC status name, its message, and the
``google.rpc.ErrorInfo`` reason and domain when the status carries one), each with the milliseconds
since the request. Messages are rendered by ``google.protobuf.json_format`` with their proto field
names and redacted and bounded as the A2A side's bodies are (:func:`~rewindtui.client.wire_log.redact_body`:
a ``token`` field, such as a new share's, is ``***``); the metadata as its headers are
(:func:`~rewindtui.client.wire_log.redact_headers`: ``Authorization``, ``X-Share-Token``, cookies,
API keys are ``***``). Nothing is recorded while no log is active.
"""

from __future__ import annotations

import json
import time
from typing import Any

from google.protobuf import json_format
from google.protobuf.message import Message

from rewindtui.client import wire_log
from rewindtui.client.auth import redact
from rewindtui.kagent1.grpcweb import GrpcError


def as_json(message: Message) -> str:
    """A message as logged: JSON (proto field names), redacted, at most ``MAX_BODY`` bytes."""
    try:
        data = json_format.MessageToDict(message, preserving_proto_field_name=True)
        return wire_log.redact_body(json.dumps(data, ensure_ascii=False))
    except Exception:  # a message json_format cannot render: its type, never its bytes
        return f"({message.DESCRIPTOR.full_name})"


class Call:
    """One controller call being recorded in ``log``."""

    def __init__(
        self, log: wire_log.WireLog, protocol: str, url: str, metadata: dict[str, str], request: Message
    ) -> None:
        self.log = log
        self.id = log.next_id()
        log.add(
            "request",
            id=self.id,
            method=protocol,
            url=redact(url),
            headers=wire_log.redact_headers(metadata),
            body=as_json(request),
        )
        self.started = time.monotonic()

    def answered(self, answer: Message) -> None:
        self.log.add("response", id=self.id, ms=wire_log.since(self.started), status="OK", body=as_json(answer))

    def failed(self, exc: GrpcError) -> None:
        fields: dict[str, Any] = {"id": self.id, "ms": wire_log.since(self.started), "status": exc.code}
        fields["error"] = redact(exc.message)
        if exc.reason or exc.domain:
            fields["details"] = {"reason": redact(exc.reason), "domain": redact(exc.domain)}
        self.log.add("end", **fields)


def start(protocol: str, url: str, metadata: dict[str, str], request: Message) -> Call | None:
    """The call recorded in the active wire log (None: there is none)."""
    log = wire_log.active()
    return Call(log, protocol, url, metadata, request) if log is not None else None
