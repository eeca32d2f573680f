"""Honest and bounded card signatures (issue 30, item 7), against a2a-sdk's card route and signer
on loopback: "verified" only with keys the user trusts (a configured key set -- the setting
``card_keys`` -- or a pinned issuer, ``card_issuers``, on the agent's origin or elsewhere), and key
sets and signatures bounded in number and size."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from a2a.utils.signing import create_agent_card_signer
from cryptography.hazmat.primitives.asymmetric import ec
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route
from test_card_extras import _jwks, _signature, _signed_app, card

from asgi_thread import ServeInThread
from clirun import isolate, runner
from rewindtui.client.card_signature import BAD, NOT_CHECKED, SELF_SIGNED, VERIFIED, verify_card
from rewindtui.client.limits import MAX_KEYS, MAX_SIGNATURE_CHARS, MAX_SIGNATURES


@pytest.fixture
def cli(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]):
    isolate(tmp_path, monkeypatch)
    return runner(capsys)


@pytest.fixture
def key() -> Any:
    return ec.generate_private_key(ec.SECP256R1())


def test_a_pinned_issuer_on_another_origin_and_configured_keys_are_trusted(
    cli, key, tmp_path: Path, monkeypatch
) -> None:
    keys = Starlette(routes=[Route("/k/jwks.json", lambda request: JSONResponse(_jwks(key, "test-key")))])
    with ServeInThread(keys) as issuer:
        jku = issuer.url + "/k/jwks.json"
        with ServeInThread(factory=lambda url: _signed_app(url + "/", key, jku=jku)) as served:
            assert _signature(cli, served.url + "/")["status"] == "not checked"  # elsewhere, not pinned
            monkeypatch.setenv("REWINDTUI_CARD_ISSUERS", jku)
            assert _signature(cli, served.url + "/")["status"] == "verified"
            monkeypatch.setenv("REWINDTUI_CARD_ISSUERS", issuer.url + "/other/jwks.json")  # another key set there
            assert _signature(cli, served.url + "/")["status"] == "not checked"
            monkeypatch.delenv("REWINDTUI_CARD_ISSUERS")
            (tmp_path / "keys.json").write_text(json.dumps(_jwks(key, "test-key")))
            config = tmp_path / "config.toml"
            config.write_text(f'card_keys = "{tmp_path / "keys.json"}"\n')
            result = cli("card", "--json", "--url", served.url + "/", "--config", str(config))
            assert result.rc == 0, result.err
            assert result.records()[0]["signature"]["status"] == "verified"


def _signed_card(url: str, signer: Any, kid: str = "test-key") -> dict[str, Any]:
    agent_card = card(url, only_03=False)
    create_agent_card_signer(signer, {"kid": kid, "alg": "ES256", "jku": url + "jwks.json", "typ": "JOSE"})(agent_card)  # type: ignore[arg-type]
    from google.protobuf.json_format import MessageToDict

    return MessageToDict(agent_card)


async def test_key_sets_and_signatures_are_bounded(key) -> None:
    fetched: list[str] = []
    many = {"keys": [{**_jwks(key, f"k{i}")["keys"][0]} for i in range(MAX_KEYS + 1)]}

    async def jwks(request: Request) -> JSONResponse:
        fetched.append(request.url.path)
        return JSONResponse(many if request.query_params.get("many") else _jwks(key, "test-key"))

    with ServeInThread(Starlette(routes=[Route("/jwks.json", jwks)])) as served:
        url = served.url + "/"
        signed = _signed_card(url, key)
        assert (await verify_card(signed, url)).status == SELF_SIGNED
        assert (await verify_card(signed, url, issuers=[url])).status == VERIFIED
        # a key set with more keys than the bound is not used
        entry = signed["signatures"][0]
        header = json.loads(_b64d(entry["protected"]))
        header["jku"] = url + "jwks.json?many=1"
        too_many = {**signed, "signatures": [{**entry, "protected": _b64e(json.dumps(header))}]}
        result = await verify_card(too_many, url, issuers=[url])
        assert result.status == NOT_CHECKED and f"more than {MAX_KEYS} keys" in result.detail
        # an oversized signature is bad without being decoded
        huge = {**signed, "signatures": [{**entry, "signature": "A" * (MAX_SIGNATURE_CHARS + 1)}]}
        result = await verify_card(huge, url, issuers=[url])
        assert result.status == BAD and "longer than" in result.detail
        # a thousand signatures: at most MAX_SIGNATURES are looked at (each would fetch its key set)
        fetched.clear()
        other = ec.generate_private_key(ec.SECP256R1())
        wrong = _signed_card(url, other)["signatures"][0]
        crowd = {**signed, "signatures": [wrong] * 1000}
        assert (await verify_card(crowd, url, issuers=[url])).status == BAD
        assert 0 < len(fetched) <= MAX_SIGNATURES


def _b64d(text: str) -> bytes:
    import base64

    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def _b64e(text: str) -> str:
    import base64

    return base64.urlsafe_b64encode(text.encode()).rstrip(b"=").decode()
