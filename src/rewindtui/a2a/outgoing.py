"""Outgoing messages and JSON-RPC requests, serialised in the dialect the server speaks."""

from __future__ import annotations

import uuid
from typing import Any

from rewindtui.a2a.dialect import Dialect, wire_role

STREAM_METHOD = {Dialect.V03: "message/stream", Dialect.V10: "SendStreamingMessage"}


def new_id() -> str:
    return str(uuid.uuid4())


def text_part(text: str, dialect: Dialect) -> dict[str, Any]:
    return {"kind": "text", "text": text} if dialect is Dialect.V03 else {"text": text}


def data_part(data: Any, dialect: Dialect) -> dict[str, Any]:
    return {"kind": "data", "data": data} if dialect is Dialect.V03 else {"data": data}


def user_message(
    text: str | None,
    *,
    dialect: Dialect,
    context_id: str | None,
    message_id: str | None = None,
    task_id: str | None = None,
    metadata: dict[str, Any] | None = None,
    data: list[Any] | None = None,
) -> dict[str, Any]:
    """A user message: a new messageId each time, ``contextId`` = session, ``taskId`` only to
    resume a task that waits for input."""
    parts: list[dict[str, Any]] = []
    if text is not None:
        parts.append(text_part(text, dialect))
    for item in data or ():
        parts.append(data_part(item, dialect))
    message: dict[str, Any] = {
        "messageId": message_id or new_id(),
        "role": wire_role("user", dialect),
        "parts": parts,
    }
    if dialect is Dialect.V03:
        message["kind"] = "message"
    if context_id:
        message["contextId"] = context_id
    if task_id:
        message["taskId"] = task_id
    if metadata:
        message["metadata"] = dict(metadata)
    return message


def jsonrpc(method: str, params: dict[str, Any], rpc_id: str | int | None = None) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": rpc_id if rpc_id is not None else new_id(), "method": method, "params": params}


def stream_request(message: dict[str, Any], dialect: Dialect, rpc_id: str | int | None = None) -> dict[str, Any]:
    return jsonrpc(STREAM_METHOD[dialect], {"message": message}, rpc_id)


def headers_for(dialect: Dialect) -> dict[str, str]:
    """HTTP headers a streaming request needs in this dialect (1.0 must say so)."""
    headers = {"Accept": "text/event-stream", "Content-Type": "application/json"}
    if dialect is Dialect.V10:
        headers["A2A-Version"] = "1.0"
    return headers
