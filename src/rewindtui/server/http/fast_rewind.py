"""A fast path for the A2A rewind control message (rewind only, no text).

The answer to a rewind is one Task whose history is the whole effective history -- about
2,000 messages on a 1,000-turn session -- or, when the request's ``configuration.historyLength``
asks for it, the newest N of them (the Task's metadata gives the whole count,
``contract.EFFECTIVE_HISTORY_TOTAL_KEY``). Through a2a-sdk that is 2,000 dicts -> protos -> JSON,
150+ ms of CPU, longer than the rewind itself. Here the request is parsed and validated with
a2a-sdk exactly as its ``JsonRpcDispatcher`` would (JSON-RPC envelope, version header, method,
params), classified like every other message (:mod:`rewindtui.server.service.requests`), the Task is
rendered by a2a-sdk in the caller's dialect with one placeholder history entry, and the
placeholder is replaced by the history the store keeps in that dialect (its 1.0 JSON rendered
by a2a-sdk too, see ``wire.message_v1_text``). The response is the same SSE stream a2a-sdk
produces (one ``data:`` frame).

Anything else -- a message with content (rewind-and-send), a malformed request, a version
mismatch, a ``taskId`` -- returns ``None`` and takes the normal a2a-sdk path, which also
produces every JSON-RPC error.
"""

from __future__ import annotations

import json
import uuid
from typing import Any

from a2a.compat.v0_3 import conversions
from a2a.compat.v0_3 import types as types_v03
from a2a.server.routes.common import create_event_source_response
from a2a.types import a2a_pb2 as pb
from a2a.utils import json_utils, proto_utils
from google.protobuf.json_format import MessageToDict, ParseDict
from jsonrpc.jsonrpc2 import JSONRPC20Response
from starlette.requests import Request
from starlette.responses import Response

from rewindtui.server.http.users import InvalidUser, resolve_user
from rewindtui.server.service.agent_service import AgentService
from rewindtui.server.service.requests import Kind, classify
from rewindtui.server.shared.errors import BadRequest, ServiceError
from rewindtui.server.shared.wire import REWIND_KEY, event_to_proto, failed_event, message_from_proto

METHOD_03 = "message/stream"
METHOD_10 = "SendStreamingMessage"


def _parse(body: Any, major: int | None) -> tuple[str, Any, pb.Message, int | None] | None:
    """(dialect, request id, message, the request's ``historyLength`` or None) for a well-formed
    streaming request with the rewind key, else None."""
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
    config = core.configuration
    history_length = config.history_length if config.HasField("history_length") else None
    if history_length is not None and history_length < 0:
        return None  # a2a-sdk says what is wrong with it
    return dialect, request_id, core.message, history_length


def render(dialect: str, request_id: Any, event: dict[str, Any], history_json: str | None) -> str:
    """One JSON-RPC result frame as a2a-sdk renders it, with ``history_json`` as the Task's history."""
    proto = event_to_proto(event)
    marker = f"@@history-{uuid.uuid4().hex}@@"
    if history_json is not None and isinstance(proto, pb.Task):
        placeholder = proto.history.add(message_id=marker, role=pb.ROLE_AGENT)
        placeholder.parts.add(text=marker)
    stream_response = proto_utils.to_stream_response(proto)
    if dialect == "0.3":
        frame = json.loads(
            conversions.to_compat_stream_response(stream_response, request_id).model_dump_json(
                by_alias=True, exclude_none=True
            )
        )
        target = frame["result"]
        text_of = _compact
    else:
        frame = JSONRPC20Response(
            result=MessageToDict(stream_response, preserving_proto_field_name=False), _id=request_id
        ).data
        target = frame["result"].get("task")
        text_of = json_utils.dumps
    if history_json is None or target is None:
        return text_of(frame)
    target["history"] = marker  # same key, same place
    return text_of(frame).replace(json.dumps(marker), history_json, 1)


def _compact(obj: Any) -> str:
    """JSON as a2a-sdk's 0.3 adapter writes it (pydantic's compact, UTF-8 kept)."""
    return json.dumps(obj, ensure_ascii=False, separators=(",", ":"))


class FastRewind:
    def __init__(self, service: AgentService) -> None:
        self.service = service

    async def maybe_handle(self, request: Request, body: Any, major: int | None) -> Response | None:
        """The answer to a rewind-only control message, or None for a2a-sdk to handle ``body``."""
        parsed = _parse(body, major)
        if parsed is None:
            return None
        dialect, request_id, message_pb, history_length = parsed
        try:
            classified = classify(message_from_proto(message_pb))
            user_id = resolve_user(request)
        except (BadRequest, InvalidUser):
            return None  # a2a-sdk's path says what is wrong with it
        if classified.kind is not Kind.REWIND:
            return None  # rewind-and-send: the normal path streams the rewind and the turn
        assert classified.context_id is not None and classified.rewind_before is not None
        try:
            task, bodies = await self.service.rewind(
                user_id,
                classified.context_id,
                classified.rewind_before,
                v1=dialect == "1.0",
                history_length=history_length,
            )
            # an empty history is left out, as a2a-sdk leaves out an empty repeated field
            frame = render(dialect, request_id, task, "[" + ",".join(bodies) + "]" if bodies else None)
        except ServiceError as exc:
            refused = failed_event(exc.message, context_id=classified.context_id, code=exc.code)
            frame = render(dialect, request_id, refused, None)

        async def frames() -> Any:
            yield {"data": frame}

        return create_event_source_response(frames())
