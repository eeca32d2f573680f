"""One default TLS context for the HTTP clients that verify with the default CA bundle.

httpx builds a new context for every client made with ``verify=True`` (``httpx.create_ssl_context``:
certifi's whole bundle loaded again, about 22 ms of CPU each). An ``ssl.SSLContext`` may be shared
by any number of connections and clients, so it is built once, the same way httpx builds it, on
first use -- once per value of ``SSL_CERT_FILE`` and ``SSL_CERT_DIR``, which httpx reads when it
builds one. A client with a TLS configuration of its own (a CA bundle, a client certificate) keeps
its own context (``client/auth_flows.py``)."""

from __future__ import annotations

import functools
import os
import ssl

import httpx


def default_context() -> ssl.SSLContext:
    """What httpx uses for ``verify=True`` (certifi's CA bundle, or ``SSL_CERT_FILE`` /
    ``SSL_CERT_DIR`` as the environment names them now), built once for each."""
    return _context(os.environ.get("SSL_CERT_FILE"), os.environ.get("SSL_CERT_DIR"))


@functools.cache
def _context(cert_file: str | None, cert_dir: str | None) -> ssl.SSLContext:
    return httpx.create_ssl_context()
