"""The A2A client's own HTTP client, made when it is given none: httpx's default, except that the
TLS context -- the CA bundle read and parsed, about 0.02 s of CPU -- is made on the first https
request instead of when the client is made. The embedded server is plain http on loopback: the
app's launch (issue 32: its CPU before it is connected) never needs one.

An https request goes through exactly the transport httpx would have made (verification on, its
CA bundle, ``SSL_CERT_FILE`` / ``SSL_CERT_DIR`` honoured). With proxies set in the environment the
client is httpx's own, as before: httpx leaves the environment's proxies out when it is given a
transport, and they must keep applying.
"""

from __future__ import annotations

import ssl
import urllib.request
from typing import Any

import httpx

from rewindtui.base.tls import default_context


class TlsOnFirstUse(httpx.AsyncBaseTransport):
    """http requests on a plain transport; https ones on httpx's default transport, made (with its
    TLS context) for the first of them."""

    def __init__(self) -> None:
        # the plain transport never makes a TLS connection (https goes to the other one); were it to,
        # this context, which trusts no CA, would refuse every certificate
        self._plain = httpx.AsyncHTTPTransport(verify=ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT))
        self.tls: httpx.AsyncHTTPTransport | None = None

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        if request.url.scheme == "https":
            if self.tls is None:
                # httpx's default (verify=True, trust_env=True), with the process's one such context
                self.tls = httpx.AsyncHTTPTransport(verify=default_context())
            return await self.tls.handle_async_request(request)
        return await self._plain.handle_async_request(request)

    async def aclose(self) -> None:
        await self._plain.aclose()
        if self.tls is not None:
            await self.tls.aclose()


def default_http(timeout: Any) -> httpx.AsyncClient:
    """``httpx.AsyncClient(timeout=timeout, follow_redirects=True)``, its TLS context made when first
    needed (httpx's own client when the environment names a proxy)."""
    if urllib.request.getproxies():
        return httpx.AsyncClient(timeout=timeout, follow_redirects=True, verify=default_context())
    return httpx.AsyncClient(timeout=timeout, follow_redirects=True, transport=TlsOnFirstUse())
