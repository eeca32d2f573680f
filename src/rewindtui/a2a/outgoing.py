"""Outgoing messages and JSON-RPC requests, serialised in the dialect the server speaks."""

from __future__ import annotations

import uuid
from typing import Any

from rewindtui.a2a.dialect import Dialect, method, wire_role

#: The data part that answers a human-in-the-loop question (kagent's ``adk_request_confirmation``).
DECISION_KEY = "decision_type"
APPROVE = "approve"
REJECT = "reject"


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


def stream_request(
    message: dict[str, Any],
    dialect: Dialect,
    rpc_id: str | int | None = None,
    history_length: int | None = None,
    push: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """The streaming send; ``history_length``: the request's ``configuration.historyLength``
    (at most that many of the newest history messages in an answering Task); ``push``: a push
    notification config (``{"url", "token"}``) for the task the message starts."""
    name = method("stream", dialect)
    assert name is not None
    return jsonrpc(name, {"message": message, **send_configuration(history_length, push, dialect)}, rpc_id)


def send_configuration(
    history_length: int | None, push: dict[str, Any] | None = None, dialect: Dialect = Dialect.V10
) -> dict[str, Any]:
    """The ``configuration`` member of a send request's params (none when nothing is asked)."""
    configuration: dict[str, Any] = {}
    if history_length is not None:
        configuration["historyLength"] = history_length
    if push:
        configuration["pushNotificationConfig" if dialect is Dialect.V03 else "taskPushNotificationConfig"] = dict(push)
    return {"configuration": configuration} if configuration else {}


def decision_message(approve: bool, *, dialect: Dialect, context_id: str | None, task_id: str) -> dict[str, Any]:
    """The answer to a confirmation question, as kagent's web UI sends it: the same ``taskId``, a
    data part ``{"decision_type": "approve" | "reject"}`` and the words ``Approved`` / ``Rejected``."""
    message = user_message(
        None,
        dialect=dialect,
        context_id=context_id,
        task_id=task_id,
        data=[{DECISION_KEY: APPROVE if approve else REJECT}],
    )
    message["parts"].append(text_part("Approved" if approve else "Rejected", dialect))
    return message


def headers_for(dialect: Dialect, *, stream: bool = True) -> dict[str, str]:
    """HTTP headers a request needs in this dialect (1.0 must say so)."""
    headers = {"Accept": "text/event-stream" if stream else "application/json", "Content-Type": "application/json"}
    if dialect is Dialect.V10:
        headers["A2A-Version"] = "1.0"
    return headers
