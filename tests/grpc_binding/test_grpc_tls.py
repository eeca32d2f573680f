"""TLS when the card's URL says so: a ``grpcs://`` interface is reached over TLS and its
certificate checked -- against a plain a2a-sdk gRPC server with a certificate from a test CA
made here (``cryptography``): trusted with that CA, refused with the system's roots, and a
plaintext client cannot talk to it."""

from __future__ import annotations

import asyncio
import datetime
import threading

import grpc.aio
import pytest
from a2a.server.request_handlers import DefaultRequestHandler
from a2a.server.request_handlers.grpc_handler import GrpcHandler
from a2a.server.tasks.inmemory_task_store import InMemoryTaskStore
from a2a.types import a2a_pb2_grpc
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID
from grpc_servers import WordsExecutor, grpc_only_card

from rewindtui.client.auth import CredentialScope
from rewindtui.client.errors import ConnectFailed, RpcError
from rewindtui.client.transports.grpc import GrpcTransport

pytestmark = pytest.mark.timeout(60)


def _name(cn: str) -> x509.Name:
    return x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, cn)])


def make_pki() -> tuple[bytes, bytes, bytes]:
    """(CA certificate, server certificate for localhost, server key), PEM."""
    now = datetime.datetime.now(datetime.UTC)
    ca_key = ec.generate_private_key(ec.SECP256R1())
    ca = (
        x509.CertificateBuilder()
        .subject_name(_name("rewindtui test CA"))
        .issuer_name(_name("rewindtui test CA"))
        .public_key(ca_key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=1))
        .not_valid_after(now + datetime.timedelta(hours=1))
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .sign(ca_key, hashes.SHA256())
    )
    key = ec.generate_private_key(ec.SECP256R1())
    cert = (
        x509.CertificateBuilder()
        .subject_name(_name("localhost"))
        .issuer_name(ca.subject)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=1))
        .not_valid_after(now + datetime.timedelta(hours=1))
        .add_extension(x509.SubjectAlternativeName([x509.DNSName("localhost")]), critical=False)
        .sign(ca_key, hashes.SHA256())
    )
    pem = serialization.Encoding.PEM
    key_pem = key.private_bytes(pem, serialization.PrivateFormat.PKCS8, serialization.NoEncryption())
    return ca.public_bytes(pem), cert.public_bytes(pem), key_pem


@pytest.fixture(scope="module")
def tls_server():
    ca_pem, cert_pem, key_pem = make_pki()
    ready = threading.Event()
    state: dict = {}

    def run() -> None:
        async def main() -> None:
            card = grpc_only_card()
            handler = DefaultRequestHandler(
                agent_executor=WordsExecutor(), task_store=InMemoryTaskStore(), agent_card=card
            )
            server = grpc.aio.server()
            a2a_pb2_grpc.add_A2AServiceServicer_to_server(GrpcHandler(handler), server)
            state["port"] = server.add_secure_port("127.0.0.1:0", grpc.ssl_server_credentials([(key_pem, cert_pem)]))
            await server.start()
            state["stop"] = asyncio.Event()
            state["loop"] = asyncio.get_running_loop()
            ready.set()
            await state["stop"].wait()
            await server.stop(0.5)

        asyncio.run(main())

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    assert ready.wait(10)
    yield state["port"], ca_pem
    state["loop"].call_soon_threadsafe(state["stop"].set)
    thread.join(10)


async def test_grpcs_is_tls_checked_against_the_trusted_roots(tls_server):
    port, ca_pem = tls_server
    trusted = GrpcTransport(f"grpcs://localhost:{port}", CredentialScope(), 5, root_certificates=ca_pem)
    try:
        with pytest.raises(RpcError) as answered:  # the TLS handshake passed: the server answered
            await trusted.call("get_task", {"id": "no-such-task"})
        assert answered.value.code == -32001
    finally:
        await trusted.aclose()
    system_roots = GrpcTransport(f"grpcs://localhost:{port}", CredentialScope(), 5)
    try:
        with pytest.raises(ConnectFailed) as refused:  # the test CA is not among the system's roots
            await system_roots.call("get_task", {"id": "no-such-task"})
        assert type(refused.value) is ConnectFailed and "cannot connect to gRPC localhost" in str(refused.value)
    finally:
        await system_roots.aclose()
    plaintext = GrpcTransport(f"grpc://localhost:{port}", CredentialScope(), 5)
    try:
        with pytest.raises(ConnectFailed) as refused:
            await plaintext.call("get_task", {"id": "no-such-task"})
        assert type(refused.value) is ConnectFailed
    finally:
        await plaintext.aclose()
