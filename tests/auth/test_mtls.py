"""Mutual TLS: an a2a-sdk agent behind Python's ``ssl`` (uvicorn) that requires a client
certificate signed by a test CA made here with ``cryptography``."""

from __future__ import annotations

import datetime
import ipaddress
import ssl
import sys
from pathlib import Path

import pytest
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

from asgi_thread import ServeInThread
from clirun import isolate, runner

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "a2a_servers"))
from a2a_servers import sdk_app


def _name(cn: str) -> x509.Name:
    return x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, cn)])


def _cert(
    subject: str, key, issuer_name: x509.Name, issuer_key, *, ca: bool = False, server: bool = False
) -> x509.Certificate:
    now = datetime.datetime.now(datetime.UTC)
    builder = (
        x509.CertificateBuilder()
        .subject_name(_name(subject))
        .issuer_name(issuer_name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(days=1))
        .add_extension(x509.BasicConstraints(ca=ca, path_length=None), critical=True)
    )
    if server:
        builder = builder.add_extension(
            x509.SubjectAlternativeName([x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]), critical=False
        )
    return builder.sign(issuer_key, hashes.SHA256())


def _pem(tmp: Path, name: str, cert: x509.Certificate, key=None) -> tuple[Path, Path | None]:
    cert_path = tmp / f"{name}.crt"
    cert_path.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    key_path = None
    if key is not None:
        key_path = tmp / f"{name}.key"
        key_path.write_bytes(
            key.private_bytes(
                serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
            )
        )
    return cert_path, key_path


@pytest.fixture
def pki(tmp_path: Path) -> dict[str, Path]:
    ca_key = ec.generate_private_key(ec.SECP256R1())
    ca = _cert("test CA", ca_key, _name("test CA"), ca_key, ca=True)
    server_key = ec.generate_private_key(ec.SECP256R1())
    client_key = ec.generate_private_key(ec.SECP256R1())
    other_key = ec.generate_private_key(ec.SECP256R1())
    other_ca = _cert("another CA", other_key, _name("another CA"), other_key, ca=True)
    paths: dict[str, Path] = {}
    paths["ca"], _ = _pem(tmp_path, "ca", ca)
    paths["other_ca"], _ = _pem(tmp_path, "other-ca", other_ca)
    paths["server"], paths["server_key"] = _pem(
        tmp_path, "server", _cert("127.0.0.1", server_key, ca.subject, ca_key, server=True), server_key
    )  # type: ignore[assignment]
    paths["client"], paths["client_key"] = _pem(
        tmp_path, "client", _cert("rewindtui user", client_key, ca.subject, ca_key), client_key
    )  # type: ignore[assignment]
    stranger_key = ec.generate_private_key(ec.SECP256R1())
    paths["stranger"], paths["stranger_key"] = _pem(
        tmp_path, "stranger", _cert("stranger", stranger_key, other_ca.subject, other_key), stranger_key
    )  # type: ignore[assignment]
    return paths


@pytest.fixture
def tls_agent(pki: dict[str, Path]):
    served = ServeInThread(
        factory=lambda url: sdk_app(url + "/"),
        ssl_certfile=str(pki["server"]),
        ssl_keyfile=str(pki["server_key"]),
        ssl_ca_certs=str(pki["ca"]),
        ssl_cert_reqs=ssl.CERT_REQUIRED,
    ).start()
    yield served
    served.stop()


@pytest.fixture
def cli(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]):
    isolate(tmp_path, monkeypatch)
    return runner(capsys)


def test_mutual_tls_with_a_client_certificate(tls_agent: ServeInThread, pki: dict[str, Path], cli) -> None:
    assert tls_agent.url.startswith("https://")
    flags = ["--url", tls_agent.url + "/", "--tls-ca", str(pki["ca"])]
    ok = cli(
        "send", "over mTLS", "--json", *flags, "--tls-cert", str(pki["client"]), "--tls-key", str(pki["client_key"])
    )
    assert ok.rc == 0, ok.err
    assert any("You said: over mTLS" in r.get("text", "") for r in ok.records()[1:])

    card = cli("card", "--json", *flags, "--tls-cert", str(pki["client"]), "--tls-key", str(pki["client_key"]))
    assert card.rc == 0 and card.records()[0]["card"]["name"] == "echo-sdk"

    # no client certificate: the server ends the handshake; a clear one-line error
    refused = cli("send", "hello", *flags)
    assert refused.rc == 1 and "cannot reach the agent" in refused.err
    # a certificate from a CA the server does not trust
    stranger = cli("send", "hello", *flags, "--tls-cert", str(pki["stranger"]), "--tls-key", str(pki["stranger_key"]))
    assert stranger.rc == 1


def test_the_server_is_verified_with_the_given_ca_bundle(tls_agent: ServeInThread, pki: dict[str, Path], cli) -> None:
    wrong = cli(
        "send",
        "hello",
        "--url",
        tls_agent.url + "/",
        "--tls-ca",
        str(pki["other_ca"]),
        "--tls-cert",
        str(pki["client"]),
        "--tls-key",
        str(pki["client_key"]),
    )
    assert wrong.rc == 1 and "CERTIFICATE_VERIFY_FAILED" in wrong.err


def test_a_missing_certificate_file_is_a_settings_error(tmp_path: Path, cli) -> None:
    result = cli("send", "hello", "--url", "https://127.0.0.1:9/", "--tls-cert", str(tmp_path / "nope.crt"))
    assert result.rc == 2 and "TLS" in result.err and "nope.crt" in result.err


PASSPHRASE = "correct horse battery staple"


@pytest.fixture
def encrypted_key(pki: dict[str, Path], tmp_path: Path) -> Path:
    """The client's key, encrypted with PASSPHRASE (PKCS#8, best available encryption)."""
    key = serialization.load_pem_private_key(pki["client_key"].read_bytes(), password=None)
    path = tmp_path / "client-encrypted.key"
    path.write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.BestAvailableEncryption(PASSPHRASE.encode()),
        )
    )
    assert b"ENCRYPTED" in path.read_bytes()
    return path


def test_an_encrypted_key_with_its_passphrase_from_a_variable_or_a_file(
    tls_agent: ServeInThread,
    pki: dict[str, Path],
    encrypted_key: Path,
    cli,
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
) -> None:
    flags = [
        "--url",
        tls_agent.url + "/",
        "--tls-ca",
        str(pki["ca"]),
        "--tls-cert",
        str(pki["client"]),
        "--tls-key",
        str(encrypted_key),
    ]
    monkeypatch.setenv("KEY_PASS", PASSPHRASE)
    ok = cli("send", "over mTLS with a passphrase", "--json", *flags, "--tls-key-password-env", "KEY_PASS")
    assert ok.rc == 0, ok.err
    assert any("You said: over mTLS with a passphrase" in r.get("text", "") for r in ok.records()[1:])

    secret_file = tmp_path / "key-pass.txt"
    secret_file.write_text(PASSPHRASE + "\n", encoding="utf-8")
    from_file = cli("send", "from a file", "--json", *flags, "--tls-key-password-file", str(secret_file))
    assert from_file.rc == 0, from_file.err

    # the config file names the variable, never the value
    config = tmp_path / "config.toml"
    config.write_text('[tls]\nkey_password_env = "KEY_PASS"\n', encoding="utf-8")
    from_config = cli("send", "from the config", "--json", *flags, "--config", str(config))
    assert from_config.rc == 0, from_config.err


def test_an_encrypted_key_without_or_with_a_wrong_passphrase_is_said_and_redacted(
    tls_agent: ServeInThread, pki: dict[str, Path], encrypted_key: Path, cli, monkeypatch: pytest.MonkeyPatch
) -> None:
    flags = [
        "--url",
        tls_agent.url + "/",
        "--tls-ca",
        str(pki["ca"]),
        "--tls-cert",
        str(pki["client"]),
        "--tls-key",
        str(encrypted_key),
    ]
    missing = cli("send", "hello", *flags)  # no prompt on the terminal: one line saying what to give
    assert missing.rc == 2 and "is encrypted" in missing.err and "--tls-key-password-env" in missing.err

    wrong = "not the passphrase at all"
    monkeypatch.setenv("KEY_PASS", wrong)
    refused = cli("send", "hello", *flags, "--tls-key-password-env", "KEY_PASS")
    assert refused.rc == 2 and "cannot decrypt the private key" in refused.err and "$KEY_PASS" in refused.err
    assert wrong not in refused.err + refused.out

    # there is no option that takes the passphrase itself on the command line
    argv = cli("send", "hello", *flags, "--tls-key-password", PASSPHRASE)
    assert argv.rc == 2 and "ambiguous option" in argv.err and PASSPHRASE not in argv.out + argv.err


def test_a_passphrase_is_redacted_from_errors_that_carry_it(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from rewindtui.client.auth import SecretRef, redact

    monkeypatch.setenv("KEY_PASS", "a-passphrase-to-hide")
    SecretRef(env="KEY_PASS").resolve()
    assert redact("the handshake failed near a-passphrase-to-hide") == "the handshake failed near ***"
