"""Signed cards and the extended card, against a2a-sdk servers: cards signed with a2a-sdk's own
signer (``a2a.utils.signing.create_agent_card_signer``) and a key made in the test, the key set
served on the agent's origin; the extended card served by a2a-sdk's ``GetExtendedAgentCard`` to
a client holding a token from the Authlib server."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest
from a2a.server.routes import create_agent_card_routes
from a2a.utils.signing import create_agent_card_signer
from cryptography.hazmat.primitives.asymmetric import ec
from jwt.algorithms import ECAlgorithm
from oauth_stack import CC_ID, CC_SECRET, Stack
from starlette.applications import Starlette
from starlette.responses import JSONResponse
from starlette.routing import Route

from asgi_thread import ServeInThread
from clirun import isolate, runner

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "a2a_servers"))
from a2a_servers import card


@pytest.fixture
def cli(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]):
    isolate(tmp_path, monkeypatch)
    monkeypatch.setenv("CC_SECRET", CC_SECRET)
    return runner(capsys)


def _jwks(key: Any, kid: str) -> dict[str, Any]:
    jwk = json.loads(ECAlgorithm.to_jwk(key.public_key()))
    return {"keys": [{**jwk, "kid": kid, "use": "sig", "alg": "ES256"}]}


def _signed_app(url: str, key: Any, *, jku: str | None = None, tamper: bool = False, signed: bool = True) -> Starlette:
    """a2a-sdk's card route serving a card a2a-sdk's signer signed (or, ``tamper``, the same card
    with its description changed after signing), and the key set at /.well-known/jwks.json."""
    agent_card = card(url, only_03=False)
    if signed:
        header = {"kid": "test-key", "alg": "ES256", "jku": jku or url + ".well-known/jwks.json", "typ": "JOSE"}
        create_agent_card_signer(key, header)(agent_card)  # type: ignore[arg-type]
    if tamper:
        agent_card.description = "an agent that was changed after it was signed"
    routes = [
        *create_agent_card_routes(agent_card),
        Route("/.well-known/jwks.json", lambda request: JSONResponse(_jwks(key, "test-key"))),
    ]
    return Starlette(routes=routes)


@pytest.fixture
def key() -> Any:
    return ec.generate_private_key(ec.SECP256R1())


def _signature(cli, url: str, *flags: str) -> dict[str, Any]:
    result = cli("card", "--json", "--url", url, *flags)
    assert result.rc == 0, result.err
    return result.records()[0]["signature"]


def test_a_card_signed_with_its_own_origins_keys_is_self_signed_until_the_issuer_is_pinned(
    cli, key, monkeypatch
) -> None:
    """(Issue 30, item 7: this read "verified" -- anyone on the path of a plain-HTTP card can
    serve both the card and the keys beside it.)"""
    with ServeInThread(factory=lambda url: _signed_app(url + "/", key)) as served:
        signature = _signature(cli, served.url + "/")
        assert signature["status"] == "self-signed" and signature["kid"] == "test-key"
        text = cli("card", "--url", served.url + "/")
        assert "signature: self-signed (keys served by the agent itself; key test-key" in text.out
        assert "verified" not in text.out
        monkeypatch.setenv("REWINDTUI_CARD_ISSUERS", served.url + "/")  # the user pins the origin
        signature = _signature(cli, served.url + "/")
        assert signature["status"] == "verified" and signature["kid"] == "test-key"
        assert f"key test-key from trusted issuer {served.url}/.well-known/jwks.json" in signature["detail"]


def test_a_card_changed_after_signing_has_a_bad_signature(cli, key) -> None:
    with ServeInThread(factory=lambda url: _signed_app(url + "/", key, tamper=True)) as served:
        assert _signature(cli, served.url + "/")["status"] == "bad signature"


def test_an_unsigned_card_says_so(cli, key) -> None:
    with ServeInThread(factory=lambda url: _signed_app(url + "/", key, signed=False)) as served:
        assert _signature(cli, served.url + "/")["status"] == "not signed"


def test_keys_on_another_origin_are_not_trusted_unless_given(cli, key, tmp_path: Path) -> None:
    with ServeInThread(factory=lambda url: _signed_app(url + "/", key, jku="http://keys.example/jwks.json")) as served:
        unchecked = _signature(cli, served.url + "/")
        assert unchecked["status"] == "not checked" and "keys.example" in unchecked["detail"]
        (tmp_path / "keys.json").write_text(json.dumps(_jwks(key, "test-key")))
        assert _signature(cli, served.url + "/", "--card-keys", str(tmp_path / "keys.json"))["status"] == "verified"
        other = ec.generate_private_key(ec.SECP256R1())
        (tmp_path / "other.json").write_text(json.dumps(_jwks(other, "test-key")))
        assert (
            _signature(cli, served.url + "/", "--card-keys", str(tmp_path / "other.json"))["status"] == "bad signature"
        )


def test_the_extended_card_for_an_authenticated_user(stack: Stack, cli) -> None:
    url = stack.agent.url + "/"
    # not signed in: the card says there is one, and what to do to see it
    anonymous = cli("card", "--extended", "--url", url)
    assert anonymous.rc == 0, anonymous.err
    assert "extended card: the agent has one for authenticated users" in anonymous.out
    assert "secret skill" not in anonymous.out

    flags = [
        "--url",
        url,
        "--oauth-client-id",
        CC_ID,
        "--oauth-client-secret-env",
        "CC_SECRET",
        "--oidc-issuer",
        stack.issuer.url,
    ]
    signed_in = cli("card", "--extended", "--json", *flags)
    assert signed_in.rc == 0, signed_in.err
    record = signed_in.records()[0]
    assert record["extended"]["description"] == "the extended card: for signed-in users only"
    assert "secret skill" in [s["name"] for s in record["extended"]["skills"]]
    assert record["extended_signature"]["status"] == "not signed"
    text = cli("card", "--extended", *flags)
    assert "extended card (for authenticated users):" in text.out and "secret skill" in text.out
    # the extended card went to the bearer of a valid token only
    asked = [auth for path, auth in stack.guard.seen if path == "/"]
    assert asked and all(a and stack.auth.valid(a[7:]) for a in asked)


def test_no_extended_card_offered(cli, key) -> None:
    with ServeInThread(factory=lambda url: _signed_app(url + "/", key)) as served:
        result = cli("card", "--extended", "--url", served.url + "/")
        assert "extended card: the agent's card says it has none" in result.out
