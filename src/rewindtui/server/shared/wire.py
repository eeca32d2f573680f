"""Wire shapes: A2A 0.3 JSON dicts (our internal and stored form) and a2a-sdk protos.

The server keeps messages, tasks and stream events as A2A 0.3 JSON dicts
(``kind`` fields, camelCase) -- the shape kagent's controller stores and the
REST API returns. a2a-sdk 1.x speaks protobuf internally and renders either
dialect from it, so events cross into protos at the A2A boundary
(:func:`event_to_proto`) and incoming messages come back out as 0.3 dicts
(:func:`message_from_proto`). The dict->proto conversion is written out by hand
because it runs for every message of a rewound history (thousands on a long
session) and a2a-sdk's pydantic round trip is several times slower.

Also here: kagent's metadata keys and the ADK ``Event`` -> A2A message mapping
(text parts, and function calls/results as ``data`` parts with
``metadata.kagent_type``), matching what kagent-adk 0.10.x produces.
"""

from __future__ import annotations

import base64
import functools
import importlib
import json
import uuid
from collections.abc import Collection, Mapping
from datetime import UTC, datetime
from importlib import metadata as importlib_metadata
from typing import TYPE_CHECKING, Any

from rewindtui.a2a import contract
from rewindtui.a2a.dialect import TURN_ENDING_STATES
from rewindtui.server.shared.effects import effects_of


class _OnFirstUse:
    """A module imported on the first use of one of its names, each name then kept as a plain
    attribute (as fast as the module's own). a2a-sdk's protos (and protobuf with them) are about
    0.03 s of CPU to import: the server's front, whose store writes with this module's plain
    helpers, answers the app before they are needed (the launch's CPU)."""

    def __init__(self, module: str) -> None:
        self._module = module

    def __getattr__(self, name: str) -> Any:
        value = getattr(importlib.import_module(self._module), name)
        setattr(self, name, value)
        return value


if TYPE_CHECKING:
    from a2a.types import a2a_pb2 as pb
    from a2a.utils import json_utils
    from google.protobuf import struct_pb2
else:
    pb = _OnFirstUse("a2a.types.a2a_pb2")
    json_utils = _OnFirstUse("a2a.utils.json_utils")
    struct_pb2 = _OnFirstUse("google.protobuf.struct_pb2")

# -- metadata keys -------------------------------------------------------------
REWIND_KEY = contract.REWIND_METADATA_KEY
EFFECTIVE_HISTORY_KEY = contract.EFFECTIVE_HISTORY_KEY
REWIND_EXTENSION_URI = contract.EXTENSION_URI
#: kagent's mark on a long-running tool call (a question waiting for the user)
LONG_RUNNING_KEY = "kagent_is_long_running"


@functools.cache
def role_to_pb() -> dict[str, pb.Role]:
    """A 0.3 role -> a2a-sdk's proto enum value."""
    return {"user": pb.ROLE_USER, "agent": pb.ROLE_AGENT}


@functools.cache
def state_to_pb() -> dict[str, pb.TaskState]:
    """A 0.3 task state -> a2a-sdk's proto enum value."""
    return {
        "submitted": pb.TASK_STATE_SUBMITTED,
        "working": pb.TASK_STATE_WORKING,
        "completed": pb.TASK_STATE_COMPLETED,
        "failed": pb.TASK_STATE_FAILED,
        "canceled": pb.TASK_STATE_CANCELED,
        "input-required": pb.TASK_STATE_INPUT_REQUIRED,
        "rejected": pb.TASK_STATE_REJECTED,
        "auth-required": pb.TASK_STATE_AUTH_REQUIRED,
        "unknown": pb.TASK_STATE_UNSPECIFIED,
    }


def now_iso() -> str:
    """UTC timestamp, ISO-8601 with microseconds and a ``Z`` suffix."""
    return utc_text(datetime.now(UTC))


def utc_text(moment: datetime) -> str:
    """``moment`` (UTC, year 1000 on) as ``strftime("%Y-%m-%dT%H:%M:%S.%fZ")`` writes it, in half
    its time: ``isoformat``'s text less its ``+00:00`` (``tests/server/test_fast_frames.py``)."""
    return moment.isoformat(timespec="microseconds")[:-6] + "Z"


def dumps(obj: Any) -> str:
    """Compact JSON text (UTF-8 kept as is)."""
    return json.dumps(obj, ensure_ascii=False, separators=(",", ":"))


def new_id() -> str:
    return str(uuid.uuid4())


def json_safe(value: Any) -> Any:
    """``value`` as plain JSON data (tool args/results can hold anything)."""
    return json.loads(json.dumps(value, default=str))


def kagent_metadata(
    *,
    app_name: str,
    user_id: str,
    session_id: str,
    invocation_id: str | None = None,
    author: str | None = None,
    partial: bool | None = None,
    usage: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """kagent's message/event metadata (same keys and order as kagent-adk)."""
    meta: dict[str, Any] = {}
    if partial is not None:
        meta["kagent_adk_partial"] = partial
    meta["kagent_app_name"] = app_name
    meta["kagent_user_id"] = user_id
    meta["kagent_session_id"] = session_id
    if invocation_id is not None:
        meta["kagent_invocation_id"] = invocation_id
    if author is not None:
        meta["kagent_author"] = author
    if usage:
        meta["kagent_usage_metadata"] = dict(usage)
    return meta


# -- building 0.3 dicts ------------------------------------------------------------
def text_of(message: Mapping[str, Any]) -> str:
    """The concatenated text parts of a 0.3 message dict."""
    return "".join(p.get("text", "") for p in message.get("parts") or [] if p.get("kind") == "text")


def status_update(
    *,
    task_id: str,
    context_id: str,
    state: str,
    message: dict[str, Any] | None = None,
    metadata: dict[str, Any] | None = None,
) -> dict[str, Any]:
    status: dict[str, Any] = {"state": state, "timestamp": now_iso()}
    if message is not None:
        status["message"] = message
    event: dict[str, Any] = {
        "kind": "status-update",
        "taskId": task_id,
        "contextId": context_id,
        "status": status,
        "final": state in TURN_ENDING_STATES,
    }
    if metadata:
        event["metadata"] = metadata
    return event


def artifact_update(*, task_id: str, context_id: str, artifact: dict[str, Any]) -> dict[str, Any]:
    return {
        "kind": "artifact-update",
        "taskId": task_id,
        "contextId": context_id,
        "artifact": artifact,
        "lastChunk": True,
    }


def agent_text_message(text: str, *, task_id: str | None = None, context_id: str | None = None) -> dict[str, Any]:
    message: dict[str, Any] = {
        "kind": "message",
        "messageId": new_id(),
        "role": "agent",
        "parts": [{"kind": "text", "text": text}],
    }
    if context_id:
        message["contextId"] = context_id
    if task_id:
        message["taskId"] = task_id
    return message


def failed_event(text: str, *, context_id: str | None, code: str) -> dict[str, Any]:
    """A final ``failed`` status for a request that was refused (nothing is stored)."""
    task_id = new_id()
    return status_update(
        task_id=task_id,
        context_id=context_id or "",
        state="failed",
        message=agent_text_message(text, task_id=task_id, context_id=context_id),
        metadata={contract.ERROR_CODE_KEY: code},
    )


def parts_from_adk(content: Any, long_running: Collection[str] = ()) -> list[dict[str, Any]]:
    """A2A 0.3 parts for the parts of a ``google.genai.types.Content``. A call in
    ``long_running`` (the event's ``long_running_tool_ids``) is marked ``kagent_is_long_running``,
    as kagent-adk's ``event_converter._process_long_running_tool`` does."""
    parts: list[dict[str, Any]] = []
    for part in getattr(content, "parts", None) or []:
        if part.function_call is not None:
            fc = part.function_call
            call_meta: dict[str, Any] = {"kagent_type": "function_call"}
            if fc.id in long_running:
                call_meta[LONG_RUNNING_KEY] = True
            if effects := effects_of(fc.name):  # this agent's own mark (server/shared/effects.py)
                call_meta[contract.TOOL_EFFECTS_KEY] = effects
            parts.append(
                {
                    "kind": "data",
                    "data": {"id": fc.id, "name": fc.name, "args": json_safe(fc.args or {})},
                    "metadata": call_meta,
                }
            )
        elif part.function_response is not None:
            fr = part.function_response
            parts.append(
                {
                    "kind": "data",
                    "data": {"id": fr.id, "name": fr.name, "response": json_safe(fr.response or {})},
                    "metadata": {"kagent_type": "function_response"},
                }
            )
        elif part.text:
            text_part: dict[str, Any] = {"kind": "text", "text": part.text}
            if part.thought:
                text_part["metadata"] = {"adk_thought": True}
            parts.append(text_part)
        elif part.inline_data is not None and part.inline_data.data is not None:
            file: dict[str, Any] = {"bytes": base64.b64encode(part.inline_data.data).decode("ascii")}
            if part.inline_data.mime_type:
                file["mimeType"] = part.inline_data.mime_type
            if part.inline_data.display_name:
                file["name"] = part.inline_data.display_name
            parts.append({"kind": "file", "file": file})
        elif part.file_data is not None and part.file_data.file_uri:
            file = {"uri": part.file_data.file_uri}
            if part.file_data.mime_type:
                file["mimeType"] = part.file_data.mime_type
            if part.file_data.display_name:
                file["name"] = part.file_data.display_name
            parts.append({"kind": "file", "file": file})
    return parts


def agent_message(
    event: Any, *, app_name: str, user_id: str, session_id: str, task_id: str, invocation_id: str | None
) -> dict[str, Any] | None:
    """The A2A 0.3 message kagent-adk makes of an agent's ADK event (None: nothing to show).

    A full (non-partial) message keeps the event's id as its ``messageId``, so the stored
    message and ADK's event name each other.
    """
    parts = parts_from_adk(event.content, event.long_running_tool_ids or ())
    if not parts:
        return None
    partial = bool(event.partial)
    metadata = kagent_metadata(
        app_name=app_name,
        user_id=user_id,
        session_id=session_id,
        invocation_id=event.invocation_id or invocation_id,
        author=event.author,
        partial=partial,
        usage=None if partial else usage_of(event),
    )
    changed = event.actions.state_delta if event.actions is not None else None
    if changed and not partial:
        metadata[contract.STATE_CHANGED_KEY] = sorted(changed)
    return {
        "kind": "message",
        "messageId": new_id() if partial or not event.id else event.id,
        "role": "agent",
        "parts": parts,
        "contextId": session_id,
        "taskId": task_id,
        "metadata": metadata,
    }


def effective_events(events: list[Any]) -> list[Any]:
    """ADK events that survive rewinds, oldest first (what the model sees).

    The same walk as ADK's own ``google.adk.events._rewind_events._apply_rewinds``: backwards;
    a rewind event drops itself and everything back to the first event of the invocation it
    names.
    """
    first: dict[str, int] = {}
    for index, event in enumerate(events):
        if event.invocation_id and event.invocation_id not in first:
            first[event.invocation_id] = index
    kept: list[Any] = []
    i = len(events) - 1
    while i >= 0:
        event = events[i]
        target = event.actions.rewind_before_invocation_id if event.actions else None
        if target:
            start = first.get(target)
            if start is not None and start < i:
                i = start
        else:
            kept.append(event)
        i -= 1
    kept.reverse()
    return kept


def usage_of(event: Any) -> dict[str, Any] | None:
    usage = getattr(event, "usage_metadata", None)
    if usage is None:
        return None
    return usage.model_dump(mode="json", by_alias=True, exclude_none=True) or None


def genai_content_from_message(message: Mapping[str, Any]) -> Any:
    """The user's 0.3 message as ``google.genai.types.Content`` for ADK."""
    from google.genai import types

    parts: list[types.Part] = []
    for part in message.get("parts") or []:
        kind = part.get("kind")
        if kind == "text":
            if part.get("text"):
                parts.append(types.Part(text=part["text"]))
        elif kind == "data":
            parts.append(types.Part(text=json.dumps(part.get("data"), ensure_ascii=False)))
        elif kind == "file":
            file = part.get("file") or {}
            if file.get("uri"):
                parts.append(types.Part(file_data=types.FileData(file_uri=file["uri"], mime_type=file.get("mimeType"))))
            elif file.get("bytes"):
                parts.append(
                    types.Part(
                        inline_data=types.Blob(
                            data=base64.b64decode(file["bytes"]),
                            mime_type=file.get("mimeType") or "application/octet-stream",
                        )
                    )
                )
    return types.Content(role="user", parts=parts)


# -- A2A 1.0 JSON, rendered by a2a-sdk ---------------------------------------------------
#: The a2a-sdk that renders stored 1.0 message JSON (``Store`` re-renders rows of another one).
RENDER_VERSION = "a2a-sdk " + importlib_metadata.version("a2a-sdk")


def v1_dumps(data: Any) -> str:
    """1.0 JSON text of a dict as :func:`message_v1_text` writes it (a2a-sdk's ``json_utils.dumps``)."""
    return json_utils.dumps(data)


def message_v1_text(message: Mapping[str, Any]) -> str:
    """A 0.3 message dict as the A2A 1.0 JSON text a2a-sdk writes into a stream frame.

    The JSON object a2a-sdk's JSON-RPC dispatcher prints for it (``MessageToDict`` of the proto,
    ``json_utils.dumps``), so this text spliced into a frame equals a2a-sdk's own frame; printed by
    :func:`~rewindtui.server.shared.wire_v1.message_v1_dict` without the proto.
    """
    from rewindtui.server.shared.wire_v1 import message_v1_dict  # it builds on this module

    return v1_dumps(message_v1_dict(message))


# -- proto <-> dict ------------------------------------------------------------------
def message_from_proto(message: pb.Message) -> dict[str, Any]:
    """An incoming a2a-sdk message as a 0.3 dict (a2a-sdk's own mapping)."""
    from a2a.compat.v0_3 import conversions  # pydantic models: ~0.5 s to import, not needed to serve the store

    return conversions.to_compat_message(message).model_dump(mode="json", by_alias=True, exclude_none=True)


def _value(value: Any) -> struct_pb2.Value:
    holder = struct_pb2.Struct()
    holder.update({"v": value})
    return holder.fields["v"]


def _part_to_proto(part: Mapping[str, Any], out: pb.Part) -> None:
    kind = part.get("kind")
    metadata = dict(part.get("metadata") or {})
    if kind == "data":
        data = part.get("data")
        if metadata.pop("data_part_compat", False) and isinstance(data, dict):
            out.data.CopyFrom(_value(data.get("value")))
        elif isinstance(data, dict):
            out.data.struct_value.update(data)
        else:
            out.data.CopyFrom(_value(data))
    elif kind == "file":
        file = part.get("file") or {}
        if "uri" in file:
            out.url = file["uri"]
        else:
            out.raw = base64.b64decode(file.get("bytes") or "")
        if file.get("mimeType"):
            out.media_type = file["mimeType"]
        if file.get("name"):
            out.filename = file["name"]
    else:
        out.text = part.get("text", "")
    if metadata:
        out.metadata.update(metadata)


def message_to_proto(message: Mapping[str, Any], out: pb.Message | None = None) -> pb.Message:
    m = out if out is not None else pb.Message()
    m.message_id = message.get("messageId", "")
    if message.get("contextId"):
        m.context_id = message["contextId"]
    if message.get("taskId"):
        m.task_id = message["taskId"]
    m.role = role_to_pb().get(message.get("role", ""), pb.ROLE_UNSPECIFIED)
    for part in message.get("parts") or []:
        _part_to_proto(part, m.parts.add())
    if message.get("metadata"):
        m.metadata.update(message["metadata"])
    if message.get("referenceTaskIds"):
        m.reference_task_ids.extend(message["referenceTaskIds"])
    if message.get("extensions"):
        m.extensions.extend(message["extensions"])
    return m


def _status_to_proto(status: Mapping[str, Any], out: pb.TaskStatus) -> None:
    out.state = state_to_pb().get(status.get("state", "unknown"), pb.TASK_STATE_UNSPECIFIED)
    if status.get("message"):
        message_to_proto(status["message"], out.message)
    if status.get("timestamp"):
        set_timestamp(out.timestamp, status["timestamp"])


_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


def set_timestamp(out: Any, text: str) -> None:
    """``out.FromJsonString(text)`` (a protobuf ``Timestamp``), for a UTC ``...Z`` text as
    :func:`now_iso` writes it without protobuf's ``strptime`` (about 30x the time); any other
    text goes to ``FromJsonString``."""
    if text.endswith("Z") and "T" in text:
        try:
            since = datetime.fromisoformat(text) - _EPOCH
        except ValueError:
            pass
        else:
            out.seconds = since.days * 86_400 + since.seconds
            out.nanos = since.microseconds * 1000
            return
    out.FromJsonString(text)


def _artifact_to_proto(artifact: Mapping[str, Any], out: pb.Artifact) -> None:
    out.artifact_id = artifact.get("artifactId", "")
    if artifact.get("name"):
        out.name = artifact["name"]
    if artifact.get("description"):
        out.description = artifact["description"]
    for part in artifact.get("parts") or []:
        _part_to_proto(part, out.parts.add())
    if artifact.get("metadata"):
        out.metadata.update(artifact["metadata"])


def task_to_proto(task: Mapping[str, Any]) -> pb.Task:
    t = pb.Task(id=task["id"], context_id=task.get("contextId", ""))
    _status_to_proto(task.get("status") or {"state": "unknown"}, t.status)
    for message in task.get("history") or []:
        message_to_proto(message, t.history.add())
    for artifact in task.get("artifacts") or []:
        _artifact_to_proto(artifact, t.artifacts.add())
    if task.get("metadata"):
        t.metadata.update(task["metadata"])
    return t


def event_to_proto(
    event: Mapping[str, Any],
) -> pb.Task | pb.Message | pb.TaskStatusUpdateEvent | pb.TaskArtifactUpdateEvent:
    """One stream event (0.3 dict) as the a2a-sdk proto the dispatchers render."""
    kind = event.get("kind")
    if kind == "status-update":
        e = pb.TaskStatusUpdateEvent(task_id=event["taskId"], context_id=event.get("contextId", ""))
        _status_to_proto(event["status"], e.status)
        if event.get("metadata"):
            e.metadata.update(event["metadata"])
        return e
    if kind == "artifact-update":
        a = pb.TaskArtifactUpdateEvent(
            task_id=event["taskId"],
            context_id=event.get("contextId", ""),
            append=bool(event.get("append", False)),
            last_chunk=bool(event.get("lastChunk", False)),
        )
        _artifact_to_proto(event["artifact"], a.artifact)
        if event.get("metadata"):
            a.metadata.update(event["metadata"])
        return a
    if kind == "task":
        return task_to_proto(event)
    if kind == "message":
        return message_to_proto(event)
    raise ValueError(f"unknown event kind {kind!r}")
