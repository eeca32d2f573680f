"""A fast path for the A2A rewind control message (rewind only, no text).

The answer to a rewind is one Task whose history is the whole effective
history -- about 2,000 messages on a 1,000-turn session. Through a2a-sdk that
is 2,000 dicts -> protos -> (pydantic models ->) JSON, 150+ ms of CPU, longer
than the rewind itself. Here the request is parsed and validated with a2a-sdk
exactly as its ``JsonRpcDispatcher`` would (JSON-RPC envelope, version header,
method, params), the Task *without* its history is rendered by a2a-sdk in the
caller's dialect, and the history array is spliced in from the message JSON the
store keeps for both dialects. The response is the same SSE stream a2a-sdk
produces (one ``data:`` frame).

Anything else -- a message with text (rewind-and-send), a malformed request,
a version mismatch, a ``taskId`` -- returns ``None`` and takes the normal
a2a-sdk path, which also produces every JSON-RPC error.
"""

from __future__ import annotations

import json
import uuid
from typing import Any

from a2a.compat.v0_3 import conversions
from a2a.compat.v0_3 import types as types_v03
from a2a.server.routes.common import create_event_source_response
from a2a.types import a2a_pb2 as pb
from a2a.utils import proto_utils
from a2a.utils.constants import VERSION_HEADER
from google.protobuf.json_format import MessageToDict, ParseDict
from starlette.requests import Request
from starlette.responses import Response

from rewindtui.server.errors import ServiceError
from rewindtui.server.executor import AgentService
from rewindtui.server.users import InvalidUser, resolve_user
from rewindtui.server.wire import REWIND_KEY, event_to_proto, failed_event, message_from_proto

METHOD_03 = "message/stream"
METHOD_10 = "SendStreamingMessage"


def _major(request: Request) -> int | None:
    """Major A2A version of the request (no header means 0.3, as in a2a-sdk); None if unreadable."""
    raw = (request.headers.get(VERSION_HEADER) or "").strip()
    if not raw:
        return 0
    head = raw.split(".", 1)[0]
    return int(head) if head.isdigit() else None


def _parse(request: Request, body: Any) -> tuple[str, Any, pb.Message] | None:
    """(dialect, request id, message) for a well-formed streaming rewind, else None."""
    if not isinstance(body, dict) or body.get("jsonrpc") != "2.0":
        return None
    request_id = body.get("id")
    if isinstance(request_id, bool) or not isinstance(request_id, str | int):
        return None
    method = body.get("method")
    params = body.get("params")
    if not isinstance(params, dict):
        return None
    message = params.get("message")
    if not isinstance(message, dict) or not isinstance(message.get("metadata"), dict):
        return None
    if REWIND_KEY not in message["metadata"] or message.get("taskId"):
        return None
    major = _major(request)
    try:
        if method == METHOD_03 and major == 0:
            parsed = types_v03.SendStreamingMessageRequest.model_validate(body)
            core = conversions.to_core_send_message_request(parsed)  # type: ignore[arg-type]
            dialect = "0.3"
        elif method == METHOD_10 and major == 1:
            core = ParseDict(params, pb.SendMessageRequest(), ignore_unknown_fields=True)
            dialect = "1.0"
        else:
            return None
        proto_utils.validate_proto_required_fields(core)
    except Exception:  # let a2a-sdk produce its own error for it
        return None
    return dialect, request_id, core.message


def _render(dialect: str, request_id: Any, event: dict[str, Any], history_json: str | None) -> str:
    """One JSON-RPC result frame as a2a-sdk renders it, with ``history`` spliced in."""
    stream_response = proto_utils.to_stream_response(event_to_proto(event))
    if dialect == "0.3":
        frame = json.loads(
            conversions.to_compat_stream_response(stream_response, request_id).model_dump_json(
                by_alias=True, exclude_none=True
            )
        )
        target = frame["result"]
    else:
        frame = {"result": MessageToDict(stream_response, preserving_proto_field_name=False), "id": request_id, "jsonrpc": "2.0"}
        target = frame["result"].get("task")
    separators = (",", ":") if dialect == "0.3" else (", ", ": ")  # as a2a-sdk writes each dialect
    if history_json is None or target is None:
        return json.dumps(frame, ensure_ascii=False, separators=separators)
    marker = f"@@history-{uuid.uuid4().hex}@@"
    target["history"] = marker
    text = json.dumps(frame, ensure_ascii=False, separators=separators)
    return text.replace(json.dumps(marker), history_json, 1)


class FastRewind:
    def __init__(self, service: AgentService) -> None:
        self.service = service

    async def maybe_handle(self, request: Request) -> Response | None:
        raw = await request.body()  # Starlette caches it for the dispatcher
        if REWIND_KEY.encode() not in raw:
            return None
        try:
            body = json.loads(raw)
        except ValueError:
            return None
        parsed = _parse(request, body)
        if parsed is None:
            return None
        dialect, request_id, message_pb = parsed
        message = message_from_proto(message_pb)
        text = "".join(p.get("text", "") for p in message.get("parts") or [] if p.get("kind") == "text")
        if text.strip() or any(p.get("kind") != "text" for p in message.get("parts") or []):
            return None  # rewind-and-send: the normal path streams the rewind and the turn
        try:
            user_id = resolve_user(request)
        except InvalidUser:
            return None
        try:
            task, bodies = await self.service.rewind_for_message(user_id, message, v1=dialect == "1.0")
            # an empty history is left out, as a2a-sdk leaves out an empty repeated field
            frame = _render(dialect, request_id, task, "[" + ",".join(bodies) + "]" if bodies else None)
        except ServiceError as exc:
            refused = failed_event(exc.message, context_id=message.get("contextId"), code=exc.code)
            frame = _render(dialect, request_id, refused, None)

        async def frames() -> Any:
            yield {"data": frame}

        return create_event_source_response(frames())
