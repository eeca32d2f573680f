"""What every A2A binding gives the client, and the error codes they all read alike.

A transport is one binding at one URL (a2a-python's ``client/transports/base.py`` is the model):
:meth:`Transport.stream` (send a message, read its stream of events), :meth:`Transport.subscribe`
(resume a task's stream) and :meth:`Transport.call` (``get_task``, ``list_tasks``,
``cancel_task``), with the same errors: a stream yields classified events (an error the server
answers with is an ``EventKind.ERROR`` event, ``{"code", "message"}`` with the JSON-RPC code, so
every binding reads alike), a unary call returns the result or raises
:class:`~rewindtui.client.errors.RpcError`.

The bindings: :mod:`~rewindtui.client.transports.jsonrpc`, :mod:`~rewindtui.client.transports.rest`
(HTTP+JSON; both over :mod:`~rewindtui.client.transports.http`) and
:mod:`~rewindtui.client.transports.grpc`; :func:`~rewindtui.client.transports.factory.make_transport`
picks one for a card's interface.
"""

from __future__ import annotations

import json
from typing import Any

from rewindtui.a2a import outgoing
from rewindtui.a2a.dialect import Dialect

#: HTTP+JSON error ``reason`` (google.rpc.ErrorInfo) -> the JSON-RPC code of the same error
#: (a2a-sdk ``a2a.utils.errors``: ``A2A_ERROR_MAPPING`` and ``JSON_RPC_ERROR_CODE_MAP``).
REST_REASON_CODES = {
    "TASK_NOT_FOUND": -32001,
    "TASK_NOT_CANCELABLE": -32002,
    "PUSH_NOTIFICATION_NOT_SUPPORTED": -32003,
    "UNSUPPORTED_OPERATION": -32004,
    "CONTENT_TYPE_NOT_SUPPORTED": -32005,
    "INVALID_AGENT_RESPONSE": -32006,
    "EXTENDED_AGENT_CARD_NOT_CONFIGURED": -32007,
    "EXTENSION_SUPPORT_REQUIRED": -32008,
    "VERSION_NOT_SUPPORTED": -32009,
    "INVALID_PARAMS": -32602,
    "INVALID_REQUEST": -32600,
    "METHOD_NOT_FOUND": -32601,
    "INTERNAL_ERROR": -32603,
}
#: Without a reason: the HTTP status says it.
_STATUS_CODES = {404: -32001, 400: -32602, 405: -32601, 501: -32004}


def rest_error(body: Any, status: int) -> dict[str, Any] | None:
    """An HTTP+JSON error body as a JSON-RPC style ``{"code", "message"}`` (None if it is not one)."""
    if not isinstance(body, dict) or not isinstance(body.get("error"), dict):
        return None
    error = body["error"]
    code = _STATUS_CODES.get(status)
    for detail in error.get("details") or ():
        if isinstance(detail, dict) and isinstance(detail.get("reason"), str):
            code = REST_REASON_CODES.get(detail["reason"], code)
            break
    message = error.get("message") if isinstance(error.get("message"), str) else json.dumps(error)[:200]
    return {"code": code, "message": message, "status": error.get("status"), "http_status": status}


class Transport:
    """One binding at one URL. A binding implements :meth:`_send` (the send request's params
    built here, once for all bindings), :meth:`subscribe`, :meth:`call` and, when it holds
    something of its own, :meth:`aclose`."""

    binding = ""

    def __init__(self, url: str, dialect: Dialect, timeout: float) -> None:
        self.url = url
        self.dialect = dialect
        self.timeout = timeout

    def stream(
        self,
        message: dict[str, Any],
        read_timeout: float | None,
        history_length: int | None = None,
        push: dict[str, Any] | None = None,
    ) -> Any:
        """Send ``message`` streaming (an async context manager giving the events);
        ``history_length``: the request's ``configuration.historyLength``; ``push``: its
        ``configuration``'s push notification config."""
        params = {"message": message, **outgoing.send_configuration(history_length, push, self.dialect)}
        return self._send(params, read_timeout)

    def _send(self, params: dict[str, Any], read_timeout: float | None) -> Any:
        """The streaming send with these params (``{"message", "configuration"?}``)."""
        raise NotImplementedError

    def subscribe(self, task_id: str) -> Any:
        raise NotImplementedError

    async def call(self, operation: str, params: dict[str, Any]) -> Any:
        raise NotImplementedError

    async def aclose(self) -> None:
        """Release what the binding holds of its own (the HTTP ones share the client's connection)."""
