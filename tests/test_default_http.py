"""The A2A client's own HTTP client (``client/default_http.py``): plain http makes no TLS context
(the launch's CPU, issue 32); https is verified as httpx's default client verifies it (a test CA
made here with ``cryptography``, uvicorn serving TLS on loopback); proxies from the environment
keep applying."""

from __future__ import annotations

import datetime
import ipaddress
from pathlib import Path

import httpx
import pytest
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

from asgi_thread import ServeInThread
from rewindtui.client.a2a_client import A2AClient, ServerConfig
from rewindtui.client.default_http import TlsOnFirstUse, default_http


async def _ok(scope, receive, send) -> None:  # an ASGI app: 200 "ok" to any request
    if scope["type"] == "lifespan":
        while (await receive())["type"] != "lifespan.shutdown":
            await send({"type": "lifespan.startup.complete"})
        await send({"type": "lifespan.shutdown.complete"})
        return
    await send({"type": "http.response.start", "status": 200, "headers": [(b"content-type", b"text/plain")]})
    await send({"type": "http.response.body", "body": b"ok"})


def _cert(subject: str, key, issuer: x509.Name, issuer_key, *, ca: bool) -> x509.Certificate:
    now = datetime.datetime.now(datetime.UTC)
    builder = (
        x509.CertificateBuilder()
        .subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, subject)]))
        .issuer_name(issuer)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(days=1))
        .add_extension(x509.BasicConstraints(ca=ca, path_length=None), critical=True)
    )
    if not ca:
        builder = builder.add_extension(
            x509.SubjectAlternativeName([x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]), critical=False
        )
    return builder.sign(issuer_key, hashes.SHA256())


@pytest.fixture
def tls_server(tmp_path: Path):
    ca_key = ec.generate_private_key(ec.SECP256R1())
    ca_name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "test CA")])
    ca = _cert("test CA", ca_key, ca_name, ca_key, ca=True)
    key = ec.generate_private_key(ec.SECP256R1())
    (tmp_path / "ca.crt").write_bytes(ca.public_bytes(serialization.Encoding.PEM))
    (tmp_path / "server.crt").write_bytes(
        _cert("127.0.0.1", key, ca_name, ca_key, ca=False).public_bytes(serialization.Encoding.PEM)
    )
    (tmp_path / "server.key").write_bytes(
        key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption())
    )
    served = ServeInThread(
        _ok, ssl_certfile=str(tmp_path / "server.crt"), ssl_keyfile=str(tmp_path / "server.key")
    ).start()
    yield served, tmp_path / "ca.crt"
    served.stop()


@pytest.fixture
def no_proxy_env(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("http_proxy", "https_proxy", "all_proxy", "HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY"):
        monkeypatch.delenv(name, raising=False)


async def test_plain_http_makes_no_tls_context(no_proxy_env) -> None:
    with ServeInThread(_ok) as served:
        client = A2AClient(ServerConfig(url=served.url + "/"))  # its own HTTP client, as the app's
        inner = client.http._transport.inner  # under the wire log's recorder (client/wire_log.py)
        assert isinstance(inner, TlsOnFirstUse)
        response = await client.http.get(served.url + "/")
        assert response.status_code == 200 and response.text == "ok"
        assert inner.tls is None  # no CA bundle read
        await client.aclose()


async def test_https_is_verified_as_httpx_verifies_it(tls_server, no_proxy_env, monkeypatch) -> None:
    served, ca = tls_server
    monkeypatch.delenv("SSL_CERT_FILE", raising=False)
    monkeypatch.delenv("SSL_CERT_DIR", raising=False)
    http = default_http(10.0)
    with pytest.raises(httpx.ConnectError, match="CERTIFICATE_VERIFY_FAILED"):  # a CA nobody trusts
        await http.get(served.url + "/")
    await http.aclose()
    monkeypatch.setenv("SSL_CERT_FILE", str(ca))  # httpx's default client trusts it from the environment
    http = default_http(10.0)
    response = await http.get(served.url + "/")
    assert response.status_code == 200 and response.text == "ok"
    await http.aclose()


def test_proxies_in_the_environment_keep_httpx_own_client(monkeypatch) -> None:
    monkeypatch.setenv("HTTPS_PROXY", "http://127.0.0.1:9")
    http = default_http(10.0)
    assert not isinstance(http._transport, TlsOnFirstUse)
    assert any(pattern.scheme == "https" for pattern in http._mounts)  # the proxy applies
