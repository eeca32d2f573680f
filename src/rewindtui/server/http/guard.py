"""The local server is not a door: browser-originated requests and strangers are turned away.

An ASGI middleware in front of every route:

* **Host** -- on a loopback bind, the ``Host`` header must name loopback (``127.0.0.1``,
  ``localhost``, ``::1``) or a host given with ``--allow-host``: a web page that rebinds its
  own name to 127.0.0.1 (DNS rebinding) sends its own name and is refused (403).
* **Origin** -- a request a browser made for another site (an ``Origin`` that is not this
  server's own, or ``Sec-Fetch-Site: cross-site``) is refused (403).
* **Content type** -- a ``POST``/``PUT``/``PATCH`` must be ``application/json`` (or A2A's
  ``application/a2a+json``), which a page
  cannot send cross-origin without a CORS preflight this server never grants (415; on the A2A
  endpoint with the JSON-RPC error ContentTypeNotSupported, -32005; on its HTTP+JSON routes with
  the binding's AIP-193 error, reason ``CONTENT_TYPE_NOT_SUPPORTED``).
* **Token** -- when the server has one (always when it binds anything but loopback; always
  for a server the app spawns), every request but the agent card needs
  ``Authorization: Bearer <token>`` (401). The comparison is constant-time.

``X-User-Id`` is a label that separates conversations, not an identity: anyone who may talk
to the server may name any user.
"""

from __future__ import annotations

import hmac
import json
from collections.abc import Awaitable, Callable, Iterable, MutableMapping
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from rewindtui.server.http.options import is_loopback

if TYPE_CHECKING:
    from a2a.utils.errors import A2AError

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]

_WRITE_METHODS = frozenset({"POST", "PUT", "PATCH"})
#: JSON, and A2A's own media type for it (the HTTP+JSON binding); neither is one a page may send
#: cross-origin without a CORS preflight.
_JSON_TYPES = frozenset({"application/json", "application/a2a+json"})


def _hostname(value: str) -> str:
    """``host`` of ``host[:port]`` (IPv6 in brackets), lower case."""
    value = value.strip().lower()
    if value.startswith("["):
        return value[1 : value.find("]")] if "]" in value else value
    return value.rsplit(":", 1)[0] if value.count(":") == 1 else value


class Guard:
    def __init__(
        self,
        app: ASGIApp,
        *,
        bind_host: str,
        token: str | None,
        allowed_hosts: Iterable[str] = (),
        a2a_paths: Iterable[str] = (),
        public_paths: Iterable[str] = (),
    ) -> None:
        self.app = app
        self.token = token
        self.check_host = is_loopback(bind_host)
        self.allowed = {h.lower().strip("[]") for h in allowed_hosts} | {_hostname(bind_host)}
        self.a2a_paths = frozenset(a2a_paths)
        # the HTTP+JSON binding's routes hang under the JSON-RPC endpoint's path ("{agent}/message:send")
        self.a2a_prefixes = tuple(p.rstrip("/") + "/" for p in self.a2a_paths)
        self.public_paths = frozenset(public_paths)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope.get("headers") or []}
        refusal = self._refusal(scope, headers)
        if refusal is None:
            await self.app(scope, receive, send)
            return
        status, body, extra = refusal
        data = json.dumps(body).encode()
        response_headers = [(b"content-type", b"application/json"), (b"content-length", str(len(data)).encode())]
        response_headers += [(k.encode(), v.encode()) for k, v in extra.items()]
        await send({"type": "http.response.start", "status": status, "headers": response_headers})
        await send({"type": "http.response.body", "body": data})

    def _refusal(self, scope: Scope, headers: dict[str, str]) -> tuple[int, dict[str, Any], dict[str, str]] | None:
        host = headers.get("host", "")
        if self.check_host and not (is_loopback(_hostname(host)) or _hostname(host) in self.allowed):
            return 403, {"error": f"refused: Host {host!r} is not this server (a browser page may not reach it)"}, {}
        origin = headers.get("origin")
        if origin is not None and not self._same_origin(origin, host, scope.get("scheme", "http")):
            return 403, {"error": f"refused: a request from {origin!r} (browser pages may not use this server)"}, {}
        if headers.get("sec-fetch-site") == "cross-site":
            return 403, {"error": "refused: a cross-site browser request (browser pages may not use this server)"}, {}
        path = scope.get("path", "")
        if self.token is not None and path not in self.public_paths:
            given = headers.get("authorization", "")
            scheme, _, value = given.partition(" ")
            if scheme.lower() != "bearer" or not hmac.compare_digest(value.strip().encode(), self.token.encode()):
                return (
                    401,
                    {"error": "this server needs Authorization: Bearer <token> (the token it was started with)"},
                    {"www-authenticate": 'Bearer realm="rewindtui"'},
                )
        if scope.get("method") in _WRITE_METHODS:
            media_type = headers.get("content-type", "").split(";", 1)[0].strip().lower()
            if media_type not in _JSON_TYPES:
                message = f"send Content-Type: application/json (not {media_type or 'none'!r})"
                # a2a-sdk's error builders: imported on a refusal only (the server's front uses
                # this guard before a2a-sdk's server half is loaded)
                from a2a.server.request_handlers.response_helpers import build_error_response
                from a2a.utils.errors import ContentTypeNotSupportedError

                if path in self.a2a_paths:
                    return 415, build_error_response(None, ContentTypeNotSupportedError(message=message)), {}
                if path.startswith(self.a2a_prefixes):
                    return 415, _http_json_error(415, ContentTypeNotSupportedError(message=message)), {}
                return 415, {"error": message}, {}
        return None

    @staticmethod
    def _same_origin(origin: str, host: str, scheme: str = "http") -> bool:
        """The page's origin is this server's: the same scheme, host and port (``Host`` carries
        the port; a page on another port or over another scheme is another site)."""
        parts = urlsplit(origin)
        return parts.scheme == scheme and parts.netloc.lower() == host.strip().lower()


def _http_json_error(status: int, error: A2AError) -> dict[str, Any]:
    """An A2A error as the HTTP+JSON binding answers it (AIP-193: ``{"error": {"code", "status",
    "message", "details"}}``, a2a-sdk's own payload), its ``code`` the HTTP status sent (A2A 1.0
    maps ContentTypeNotSupported to 415; a2a-sdk 1.3.0's table says 400)."""
    from a2a.utils.error_handlers import build_rest_error_payload

    payload = build_rest_error_payload(error)
    payload["error"]["code"] = status
    return payload
