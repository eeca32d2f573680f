"""The JSON-RPC binding (A2A 0.3 and 1.0): ``POST {url}`` with the dialect's method names."""

from __future__ import annotations

from typing import Any

from rewindtui.a2a import outgoing
from rewindtui.a2a.card import JSONRPC
from rewindtui.a2a.classify import EventKind, classify_frame
from rewindtui.a2a.dialect import method
from rewindtui.client.errors import MalformedFrame, Unsupported, excerpt, parse_json, status_error
from rewindtui.client.transports.http import HttpTransport, rpc_error


class JsonRpcTransport(HttpTransport):
    """JSON-RPC: ``POST {url}`` with ``message/stream`` / ``SendStreamingMessage`` ... in the dialect."""

    binding = JSONRPC

    def _send(self, params: dict[str, Any], read_timeout: float | None) -> Any:
        name = method("stream", self.dialect)
        assert name is not None
        return self._sse(
            "POST", self.url, outgoing.jsonrpc(name, params), outgoing.headers_for(self.dialect), read_timeout
        )

    def subscribe(self, task_id: str) -> Any:
        name = method("subscribe", self.dialect)
        assert name is not None
        return self._sse(
            "POST", self.url, outgoing.jsonrpc(name, {"id": task_id}), outgoing.headers_for(self.dialect), None
        )

    async def call(self, operation: str, params: dict[str, Any]) -> Any:
        name = method(operation, self.dialect)
        if name is None:
            raise Unsupported(f"A2A {self.dialect.value} has no {operation.replace('_', ' ')} method")
        response = await self.request(
            "POST",
            self.url,
            json=outgoing.jsonrpc(name, params),
            headers=outgoing.headers_for(self.dialect, stream=False),
        )
        if response.status_code >= 400:
            raise status_error(response)
        try:
            frame = parse_json(response.content)
        except ValueError:
            raise MalformedFrame(f"{name}: not JSON: {excerpt(response.text)!r}") from None
        event = classify_frame(frame)
        if event.kind is EventKind.ERROR:
            raise rpc_error(name, event.body, "JSON-RPC error")
        if isinstance(frame, dict) and "result" not in frame and operation == "delete_push":
            # a2a-sdk's 0.3 server answers a delete without "result"; its own client reads that
            # as null (a2a-sdk 1.3 a2a/compat/v0_3/jsonrpc_transport.py, delete_task_push_notification_config)
            return None
        if not isinstance(frame, dict) or "result" not in frame:
            raise MalformedFrame(f"{name}: no result in {excerpt(response.text)!r}")
        return frame["result"]
