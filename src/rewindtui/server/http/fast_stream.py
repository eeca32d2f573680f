"""A fast path for an A2A 1.0 ``SendStreamingMessage`` turn: its frames rendered from our events.

Through a2a-sdk, each event of a turn's stream is built into a proto (``wire.event_to_proto``) and
printed back to JSON by protobuf (``MessageToDict``), behind the dispatcher's wrappers: about a
fifth of the server's CPU per turn. Here the request is parsed and checked as a2a-sdk's
``JsonRpcDispatcher`` would (the JSON-RPC envelope, the method, ``params`` by ``ParseDict``, the
required fields, the ``A2A-Version`` its ``validate_version`` accepts), taken by the same
:class:`~rewindtui.server.http.handler.AgentRequestHandler` checks, and each event is printed by
:func:`~rewindtui.server.shared.wire_v1.v1_result` (the same JSON object a2a-sdk prints, or
a2a-sdk's own rendering for an event it does not cover) into the frame a2a-sdk writes
(``{"result", "id", "jsonrpc"}``, ``json_utils.dumps``) in the SSE response a2a-sdk makes
(sse-starlette's, each frame encoded as it encodes one, :func:`frame_bytes`).

Anything else returns ``None`` and takes a2a-sdk's path, which also produces every JSON-RPC error:
another method or dialect, a malformed request, a message with a ``taskId`` or the rewind key
(``fast_rewind.py`` and the normal path), a push notification config to register, a request the
handler refuses. ``REWINDTUI_FAST_STREAM=0`` turns the path off.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator, Callable
from typing import Any

from a2a.server.request_handlers.response_helpers import build_error_response
from a2a.types import a2a_pb2 as pb
from a2a.utils import constants, json_utils, proto_utils
from a2a.utils.errors import A2AError, InternalError
from google.protobuf.json_format import ParseDict
from packaging.version import InvalidVersion, Version
from sse_starlette.sse import EventSourceResponse, ensure_bytes
from starlette.requests import Request
from starlette.responses import Response
from starlette.types import Message, Send

from rewindtui.server.http.handler import VERSION_STATE_KEY, AgentRequestHandler
from rewindtui.server.http.users import InvalidUser, resolve_user
from rewindtui.server.shared.wire import REWIND_KEY
from rewindtui.server.shared.wire_v1 import v1_result

log = logging.getLogger(__name__)

METHOD = "SendStreamingMessage"
_ENVELOPE = frozenset({"jsonrpc", "method", "params", "id"})  # JSON-RPC 2.0's (python-jsonrpc's check)


def version_is_1(request: Request) -> bool:
    """The A2A version a2a-sdk reads for this request (its ``validate_version``: the header, or
    what the endpoint decided for a headerless 1.0 method; none is 0.3) is a 1.x."""
    actual = request.headers.get(constants.VERSION_HEADER) or getattr(request.state, VERSION_STATE_KEY, None)
    if not actual:
        return False
    if actual == constants.PROTOCOL_VERSION_1_0:
        return True
    try:
        return Version(actual).major == 1
    except InvalidVersion:
        return False


def parse(body: Any) -> tuple[Any, pb.SendMessageRequest] | None:
    """(request id, params) of a well-formed streaming turn request, else None."""
    if not isinstance(body, dict) or body.get("jsonrpc") != "2.0" or body.get("method") != METHOD:
        return None
    if not set(body) <= _ENVELOPE:
        return None
    request_id = body.get("id")
    if isinstance(request_id, bool) or not isinstance(request_id, str | int):
        return None
    params = body.get("params")
    if not isinstance(params, dict):
        return None
    message = params.get("message")
    if not isinstance(message, dict) or message.get("taskId"):
        return None
    metadata = message.get("metadata")
    if isinstance(metadata, dict) and REWIND_KEY in metadata:
        return None
    try:
        core = ParseDict(params, pb.SendMessageRequest(), ignore_unknown_fields=True)
        proto_utils.validate_proto_required_fields(core)
    except Exception:  # let a2a-sdk produce its own error for it
        return None
    if core.message.task_id or core.configuration.task_push_notification_config.url:
        return None
    if core.configuration.history_length < 0:
        return None
    return request_id, core


class FastStream:
    def __init__(self, handler: AgentRequestHandler) -> None:
        self.handler = handler

    async def maybe_handle(self, request: Request, body: Any) -> Response | None:
        """The SSE answer to a 1.0 streaming turn, or None for a2a-sdk to handle ``body``."""
        parsed = parse(body)
        if parsed is None or not version_is_1(request):
            return None
        request_id, params = parsed
        try:
            user_id = resolve_user(request)
            classified = await self.handler._request(user_id, params)
        except (InvalidUser, A2AError):
            return None  # a2a-sdk's path says what is wrong with it
        batches = self.handler.service.handle_batches(user_id, classified, streaming=True)
        response = SseResponse(coalesced(_frames(request_id, batches), lambda: response.sep))
        return response


class SseResponse(EventSourceResponse):
    """sse-starlette's response as a2a-sdk makes it (``create_event_source_response``: no shutdown
    grace period), each write without a cancel scope that can never fire: with no ``send_timeout``
    (a2a-sdk sets none) its ``move_on_after(None)`` only enters and leaves an anyio scope per write."""

    async def _send_with_timeout(self, send: Send, message: Message) -> None:
        if self.send_timeout is None:
            await send(message)
        else:
            await super()._send_with_timeout(send, message)


async def _frames(request_id: Any, batches: AsyncIterator[list[dict[str, Any]]]) -> AsyncIterator[list[dict[str, str]]]:
    """The SSE events a2a-sdk's dispatcher writes for these stream events (its ``_wrap_stream``
    and ``event_generator``: a frame per event; an error ends the stream with an error frame), in
    the batches the events came in."""
    try:
        async for batch in batches:
            yield [
                {"data": json_utils.dumps({"result": v1_result(event), "id": request_id, "jsonrpc": "2.0"})}
                for event in batch
            ]
    except Exception as exc:
        log.exception("Unhandled error during JSON-RPC SSE stream")
        error = exc if isinstance(exc, A2AError) else InternalError(message=str(exc))
        yield [{"event": "error", "data": json_utils.dumps(build_error_response(request_id, error))}]
    finally:
        aclose = getattr(batches, "aclose", None)
        if aclose is not None:
            await aclose()


def frame_bytes(frame: dict[str, str], sep: str) -> bytes:
    """``ensure_bytes(frame, sep)``, sse-starlette's encoding of an SSE event given as a dict, for
    the frames this module makes: a lone ``data`` field on one line is ``data: `` the text, the
    separator, and the separator that ends the event (``ServerSentEvent.encode``); anything else is
    sse-starlette's own. ``tests/server/test_coalesced_frames.py`` holds the two equal."""
    data = frame.get("data")
    if len(frame) == 1 and type(data) is str and "\n" not in data and "\r" not in data:
        return f"data: {data}{sep}{sep}".encode()
    return ensure_bytes(frame, sep)


async def coalesced(batches: AsyncIterator[list[dict[str, str]]], sep: Callable[[], str]) -> AsyncIterator[bytes]:
    """Each batch of SSE events as one body chunk: their bytes as sse-starlette encodes each
    (:func:`frame_bytes`, with the response's separator), joined. The stream's bytes are the same
    as one write per event; only the writes are fewer (an event stream is parsed from the bytes
    whatever their chunks: WHATWG HTML §9.2.6, "Interpreting an event stream"), so every frame
    still goes as its own SSE event."""
    try:
        async for batch in batches:
            if len(batch) == 1:
                yield frame_bytes(batch[0], sep())
            elif batch:
                yield b"".join(frame_bytes(frame, sep()) for frame in batch)
    finally:
        aclose = getattr(batches, "aclose", None)
        if aclose is not None:
            await aclose()
