"""The HTTP+JSON binding (A2A 1.0): ``POST {url}/message:stream``, ``POST {url}/tasks/{id}:subscribe``,
``GET {url}/tasks/{id}``, ``GET {url}/tasks?contextId=...``, ``POST {url}/tasks/{id}:cancel``;
errors as ``{"error": {"code": <HTTP status>, "status", "message", "details": [{"reason"}]}}``
(a2a-sdk's ``RestDispatcher`` and ``build_rest_error_payload``), mapped back to JSON-RPC codes
(:func:`~rewindtui.client.transports.base.rest_error`). Ids are escaped as single path segments.
"""

from __future__ import annotations

from typing import Any

import httpx

from rewindtui.a2a import outgoing
from rewindtui.a2a.card import HTTP_JSON
from rewindtui.a2a.classify import EventKind, StreamEvent
from rewindtui.a2a.dialect import Dialect
from rewindtui.client.errors import MalformedFrame, Unsupported, excerpt, parse_json, status_error
from rewindtui.client.transports.base import rest_error
from rewindtui.client.transports.http import HttpTransport, rpc_error, segment

_OPERATIONS = ("get_task", "list_tasks", "cancel_task", "set_push", "get_push", "list_push", "delete_push")


class RestTransport(HttpTransport):
    """The HTTP+JSON binding (A2A 1.0)."""

    binding = HTTP_JSON

    def _headers(self, stream: bool) -> dict[str, str]:
        return outgoing.headers_for(Dialect.V10, stream=stream)

    def _url(self, path: str) -> str:
        return self.url.rstrip("/") + path

    def _refusal(self, response: httpx.Response) -> StreamEvent:
        try:
            body = parse_json(response.content)
        except ValueError:
            body = None
        error = rest_error(body, response.status_code)
        if error is None or response.status_code in (401, 403):
            raise status_error(response)
        return StreamEvent(EventKind.ERROR, error)

    def _send(self, params: dict[str, Any], read_timeout: float | None) -> Any:
        return self._sse("POST", self._url("/message:stream"), params, self._headers(True), read_timeout)

    def subscribe(self, task_id: str) -> Any:
        return self._sse("POST", self._url(f"/tasks/{segment(task_id)}:subscribe"), {}, self._headers(True), None)

    async def call(self, operation: str, params: dict[str, Any]) -> Any:
        if operation not in _OPERATIONS:
            raise Unsupported(f"HTTP+JSON: no {operation.replace('_', ' ')} route")
        query = {k: _query_value(v) for k, v in params.items() if k != "id" and v is not None}
        if operation.endswith("_push"):
            verb, path, kw = _push_route(operation, params)
        elif operation == "get_task":
            verb, path, kw = "GET", f"/tasks/{segment(params['id'])}", {"params": query}
        elif operation == "list_tasks":
            verb, path, kw = "GET", "/tasks", {"params": query}
        else:
            verb, path, kw = "POST", f"/tasks/{segment(params['id'])}:cancel", {"json": {}}
        name = f"{verb} {path}"
        response = await self.request(verb, self._url(path), headers=self._headers(False), **kw)
        try:
            body = parse_json(response.content) if response.content.strip() else None
        except ValueError:
            body = None
        if response.status_code >= 400:
            error = rest_error(body, response.status_code)
            if error is None or response.status_code in (401, 403):
                raise status_error(response)
            raise rpc_error(name, error, "error")
        if body is None:
            raise MalformedFrame(f"{name}: not JSON: {excerpt(response.text)!r}")
        return body


def _push_route(operation: str, params: dict[str, Any]) -> tuple[str, str, dict[str, Any]]:
    """A push-config operation's HTTP+JSON route (a2a-sdk 1.3 ``server/routes/rest_routes.py``:
    ``POST|GET /tasks/{id}/pushNotificationConfigs``, ``GET|DELETE .../pushNotificationConfigs/{push_id}``)."""
    base = f"/tasks/{segment(str(params.get('taskId', '')))}/pushNotificationConfigs"
    if operation == "set_push":
        body = {k: v for k, v in params.items() if k != "taskId"}
        return "POST", base, {"json": body}
    if operation == "list_push":
        return "GET", base, {}
    return ("GET" if operation == "get_push" else "DELETE"), f"{base}/{segment(str(params.get('id', '')))}", {}


def _query_value(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)
