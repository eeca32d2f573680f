"""The HTTP clients share one default TLS context (``base/tls.py``): a client made without a TLS
configuration of its own builds none, and the shared context verifies as httpx's default does."""

from __future__ import annotations

import ssl

import pytest

from rewindtui.base.tls import default_context
from rewindtui.client.a2a_client import A2AClient, ServerConfig
from rewindtui.client.auth_flows import Flows


async def test_clients_build_no_tls_context_of_their_own(monkeypatch: pytest.MonkeyPatch) -> None:
    default_context()  # built once, on first use
    built: list[object] = []
    create = ssl.create_default_context

    def counting(*args: object, **kwargs: object) -> ssl.SSLContext:
        built.append(args)
        return create(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(ssl, "create_default_context", counting)
    clients = [A2AClient(ServerConfig(url=f"https://agent{n}.example/")) for n in range(5)]
    token_http = Flows().token_http(5.0)()
    try:
        assert built == []  # each httpx client with verify=True built (and loaded) a context before
    finally:
        for client in clients:
            await client.aclose()
        await token_http.aclose()


def test_the_shared_context_verifies_certificates_and_host_names() -> None:
    context = default_context()
    assert context is default_context()
    assert context.verify_mode == ssl.CERT_REQUIRED and context.check_hostname
    assert context.cert_store_stats()["x509_ca"] > 0  # a CA bundle is loaded
