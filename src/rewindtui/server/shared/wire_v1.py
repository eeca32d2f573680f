"""A2A 1.0 JSON of a stream event, without the round trip through a2a-sdk's protos.

a2a-sdk renders a stream event as ``MessageToDict(to_stream_response(proto))``: our 0.3 event dict
is first built into a proto (:func:`~rewindtui.server.shared.wire.event_to_proto`), then printed
by protobuf's JSON printer -- most of the server's per-frame cost. :func:`stream_result` gives the
same JSON object straight from the dict, by the rules that printer follows for these messages
(``a2a.proto``, a2a-sdk 1.3's ``a2a_pb2``):

* lowerCamelCase field names, each message's fields in field-number order; a string, enum or bool
  field at its default (``""``, ``0``, ``False``) and an empty repeated field are left out; a
  ``oneof`` member and a message field are printed when set, even when empty (``"text": ""``);
* enums by name (``ROLE_AGENT``, ``TASK_STATE_WORKING``);
* a ``google.protobuf.Struct`` (metadata, a data part's object) as its JSON object, every number
  a float (``16`` is printed ``16.0``), bool, string, null, lists and objects as they are;
* a ``Timestamp`` in RFC 3339, ``Z``, with 0, 3, 6 or 9 fractional digits (``Timestamp.ToJsonString``).

Anything these rules do not cover -- a file part, a data part that is not an object, a number that
is not finite, a key that is not a string, an unknown state or role -- raises :class:`Unusual`, and
the caller takes a2a-sdk's own path for that event (:func:`v1_result`). ``tests/server/test_wire_v1.py``
holds the two equal on the events real turns stream and on random ones (hypothesis).
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from datetime import datetime
from typing import Any

from a2a.types import a2a_pb2 as pb
from a2a.utils import proto_utils
from google.protobuf.json_format import MessageToDict
from google.protobuf.timestamp_pb2 import Timestamp

from rewindtui.server.shared.wire import event_to_proto, message_to_proto, role_to_pb, set_timestamp, state_to_pb


class Unusual(ValueError):
    """An event outside what :func:`stream_result` renders itself."""


_ROLE_NAMES = {role: pb.Role.Name(number) for role, number in role_to_pb().items()}
_STATE_NAMES = {state: pb.TaskState.Name(number) for state, number in state_to_pb().items() if number}


def _value(value: Any) -> Any:
    """A ``google.protobuf.Value`` as protobuf prints it, from the Python value ``Struct.update`` takes."""
    if value is None or isinstance(value, (bool, str)):
        return value
    if isinstance(value, (int, float)):
        number = float(value)
        if math.isinf(number) or math.isnan(number):
            raise Unusual("a number that is not finite")
        return number
    if isinstance(value, dict):
        return _struct(value)
    if isinstance(value, (list, tuple)):
        return [_value(item) for item in value]
    raise Unusual(f"a {type(value).__name__} in a Struct")


def _struct(value: Mapping[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, item in value.items():
        if not isinstance(key, str):
            raise Unusual("a Struct key that is not a string")
        out[key] = _value(item)
    return out


#: :func:`~rewindtui.server.shared.wire.now_iso`'s layout (UTC, six fractional digits, ``Z``), ASCII digits
_NOW_ISO = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}\.([0-9]{6})Z")


def _timestamp(text: str) -> str:
    """``Timestamp.ToJsonString`` of the ``Timestamp`` ``text`` parses to. For a valid time in
    ``now_iso``'s layout (every timestamp the server writes) without protobuf: its printer writes
    the same date and time, then 0, 3 or 6 of the fractional digits (none when all are zeros, three
    when the last three are) -- 9 only for nanoseconds, which a microsecond time lacks; anything
    else goes through protobuf."""
    match = _NOW_ISO.fullmatch(text)
    if match is not None:
        try:
            datetime.fromisoformat(text[:19])  # a real date and time: else protobuf's error
        except ValueError:
            pass
        else:
            fraction = match.group(1)
            if fraction == "000000":
                return text[:19] + "Z"
            return text[:23] + "Z" if fraction.endswith("000") else text
    stamp = Timestamp()
    set_timestamp(stamp, text)
    text_out: str = stamp.ToJsonString()
    return text_out


def _part(part: Mapping[str, Any]) -> dict[str, Any]:
    kind = part.get("kind")
    metadata = part.get("metadata")
    if metadata and "data_part_compat" in metadata:
        raise Unusual("a data part of the 0.3 compat form")
    out: dict[str, Any] = {}
    if kind == "data":
        data = part.get("data")
        if not isinstance(data, dict):
            raise Unusual("a data part that is not an object")
        if data:  # an empty object sets nothing in the proto: the part has no content
            out["data"] = _struct(data)
    elif kind == "file":
        raise Unusual("a file part")
    else:
        out["text"] = part.get("text", "")
    if metadata:
        out["metadata"] = _struct(metadata)
    return out


def message_v1(message: Mapping[str, Any]) -> dict[str, Any]:
    """A 0.3 message dict as a2a-sdk prints its 1.0 ``Message``."""
    out: dict[str, Any] = {}
    if message.get("messageId"):
        out["messageId"] = message["messageId"]
    if message.get("contextId"):
        out["contextId"] = message["contextId"]
    if message.get("taskId"):
        out["taskId"] = message["taskId"]
    role = _ROLE_NAMES.get(message.get("role", ""))
    if role is None:
        raise Unusual("an unknown role")
    out["role"] = role
    parts = [_part(part) for part in message.get("parts") or []]
    if parts:
        out["parts"] = parts
    if message.get("metadata"):
        out["metadata"] = _struct(message["metadata"])
    if message.get("extensions"):
        out["extensions"] = list(message["extensions"])
    if message.get("referenceTaskIds"):
        out["referenceTaskIds"] = list(message["referenceTaskIds"])
    return out


def _status(status: Mapping[str, Any]) -> dict[str, Any]:
    state = _STATE_NAMES.get(status.get("state", "unknown"))
    if state is None:
        raise Unusual("an unknown state")
    out: dict[str, Any] = {"state": state}
    if status.get("message"):
        out["message"] = message_v1(status["message"])
    if status.get("timestamp"):
        out["timestamp"] = _timestamp(status["timestamp"])
    return out


def _artifact(artifact: Mapping[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key in ("artifactId", "name", "description"):
        if artifact.get(key):
            out[key] = artifact[key]
    parts = [_part(part) for part in artifact.get("parts") or []]
    if parts:
        out["parts"] = parts
    if artifact.get("metadata"):
        out["metadata"] = _struct(artifact["metadata"])
    return out


def _ids(event: Mapping[str, Any], id_key: str) -> dict[str, Any]:
    out: dict[str, Any] = {}
    if event.get(id_key):
        out[id_key] = event[id_key]
    if event.get("contextId"):
        out["contextId"] = event["contextId"]
    return out


def stream_result(event: Mapping[str, Any]) -> dict[str, Any]:
    """The ``result`` of a stream frame for one event (0.3 dict), as a2a-sdk prints it in A2A 1.0;
    :class:`Unusual` for what it does not cover."""
    kind = event.get("kind")
    if kind == "status-update":
        out = _ids(event, "taskId")
        out["status"] = _status(event["status"])
        if event.get("metadata"):
            out["metadata"] = _struct(event["metadata"])
        return {"statusUpdate": out}
    if kind == "artifact-update":
        out = _ids(event, "taskId")
        out["artifact"] = _artifact(event["artifact"])
        if event.get("append"):
            out["append"] = True
        if event.get("lastChunk"):
            out["lastChunk"] = True
        if event.get("metadata"):
            out["metadata"] = _struct(event["metadata"])
        return {"artifactUpdate": out}
    if kind == "task":
        out = _ids(event, "id")
        out["status"] = _status(event.get("status") or {"state": "unknown"})
        artifacts = [_artifact(artifact) for artifact in event.get("artifacts") or []]
        if artifacts:
            out["artifacts"] = artifacts
        history = [message_v1(message) for message in event.get("history") or []]
        if history:
            out["history"] = history
        if event.get("metadata"):
            out["metadata"] = _struct(event["metadata"])
        return {"task": out}
    if kind == "message":
        return {"message": message_v1(event)}
    raise Unusual(f"an event of kind {kind!r}")


def message_v1_dict(message: Mapping[str, Any]) -> dict[str, Any]:
    """:func:`message_v1`, or a2a-sdk's rendering for a message it does not cover."""
    try:
        return message_v1(message)
    except Unusual:
        rendered: dict[str, Any] = MessageToDict(message_to_proto(message), preserving_proto_field_name=False)
        return rendered


def sdk_result(event: Mapping[str, Any]) -> dict[str, Any]:
    """The same through a2a-sdk's protos, as its JSON-RPC dispatcher renders a frame."""
    proto = proto_utils.to_stream_response(event_to_proto(event))
    rendered: dict[str, Any] = MessageToDict(proto, preserving_proto_field_name=False)
    return rendered


def v1_result(event: Mapping[str, Any]) -> dict[str, Any]:
    """:func:`stream_result`, or a2a-sdk's rendering for an event it does not cover."""
    try:
        return stream_result(event)
    except Unusual:
        return sdk_result(event)
