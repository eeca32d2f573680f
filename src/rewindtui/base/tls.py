"""One default TLS context per process for the HTTP clients that verify with the default CA bundle.

httpx builds a new context for every client made with ``verify=True`` (``httpx.create_ssl_context``:
certifi's whole bundle loaded again, about 22 ms of CPU each). An ``ssl.SSLContext`` may be shared
by any number of connections and clients, so it is built once, the same way httpx builds it, on
first use. A client with a TLS configuration of its own (a CA bundle, a client certificate) keeps
its own context (``client/auth_flows.py``)."""

from __future__ import annotations

import functools
import ssl

import httpx


@functools.cache
def default_context() -> ssl.SSLContext:
    """What httpx uses for ``verify=True`` (certifi's CA bundle, ``SSL_CERT_FILE`` and
    ``SSL_CERT_DIR`` honoured as httpx does), built once."""
    return httpx.create_ssl_context()
