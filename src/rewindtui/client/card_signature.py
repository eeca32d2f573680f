"""Signed agent cards (A2A ``AgentCardSignature``): verified, not signed, or a bad signature.

A signature is a JWS with a detached payload: ``protected`` (base64url of the JOSE header, with
``alg`` and ``kid``, and ``jku``: where the public keys are, as a JWKS) and ``signature``; the
payload is the card without its ``signatures``, empty values left out, canonicalised by RFC 8785
(JCS) -- as a2a-sdk's ``a2a.utils.signing`` signs it.

The key comes from a JWKS the user gave (``keys``), else from the header's ``jku`` when it is on
the agent card's own origin (a card cannot vouch for itself with keys from anywhere: a ``jku``
elsewhere is "not checked", with the reason). The answer (:class:`CardSignature`) says
``verified`` (one signature checks with a trusted key), ``bad signature`` (none checks), ``not
signed``, or ``not checked`` (no trusted key, an algorithm we do not accept, or PyJWT missing).

Needs PyJWT with its crypto extra (the ``signing`` extra); without it: "not checked".
"""

from __future__ import annotations

import base64
import json
import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import httpx

from rewindtui.client.auth import same_origin
from rewindtui.client.errors import ClientError
from rewindtui.client.transports.http import bounded_request

VERIFIED, NOT_SIGNED, BAD, NOT_CHECKED = "verified", "not signed", "bad signature", "not checked"
#: Algorithms accepted (asymmetric only: a shared secret proves nothing about who signed).
ALGORITHMS = ("ES256", "ES384", "ES512", "RS256", "RS384", "RS512", "PS256", "PS384", "PS512", "EdDSA")


@dataclass(frozen=True)
class CardSignature:
    status: str
    detail: str = ""
    kid: str | None = None

    def text(self) -> str:
        return self.status + (f" ({self.detail})" if self.detail else "")

    def record(self) -> dict[str, Any]:
        return {"status": self.status, "detail": self.detail, "kid": self.kid}


# -- the signed bytes ----------------------------------------------------------------------------
def _clean(value: Any) -> Any:
    """Empty strings, lists and objects left out (None when nothing is left), as the signer does."""
    if isinstance(value, dict):
        out = {k: c for k, v in value.items() if (c := _clean(v)) is not None}
        return out or None
    if isinstance(value, list):
        items = [c for v in value if (c := _clean(v)) is not None]
        return items or None
    if isinstance(value, str) and not value:
        return None
    return value


def _number(value: float) -> str:
    if math.isnan(value) or math.isinf(value):
        raise ValueError("JCS has no NaN or infinity")
    if value == int(value) and abs(value) < 1e21:
        return str(int(value))
    text = repr(value)
    if "e" in text:  # ECMAScript: 1e+21, 1.5e-7
        mantissa, exponent = text.split("e")
        sign = "-" if exponent.startswith("-") else "+"
        text = f"{mantissa.rstrip('0').rstrip('.') if '.' in mantissa else mantissa}e{sign}{int(exponent.lstrip('+-'))}"
    return text


def canonical(value: Any) -> str:
    """RFC 8785 (JCS): keys sorted by UTF-16 code units, no spaces, ECMAScript numbers."""
    if isinstance(value, dict):
        keys = sorted(value, key=lambda k: k.encode("utf-16-be"))
        return "{" + ",".join(json.dumps(k, ensure_ascii=False) + ":" + canonical(value[k]) for k in keys) + "}"
    if isinstance(value, list):
        return "[" + ",".join(canonical(v) for v in value) + "]"
    if isinstance(value, bool) or value is None:
        return json.dumps(value)
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return _number(value)
    return json.dumps(value, ensure_ascii=False)


def signed_payload(card: Mapping[str, Any]) -> bytes:
    body = {k: v for k, v in card.items() if k != "signatures"}
    return canonical(_clean(body) or {}).encode("utf-8")


# A2A 1.0's AgentCard fields (a2a.proto), for cards that also carry the 0.3 fields a2a-sdk merges
# in for old clients (``url``, ``preferredTransport``, a scheme's ``type`` ...): the signer signed
# the 1.0 card only. ``None``: keep the value whole.
_ANY = None
_INTERFACE = {"url": _ANY, "protocolBinding": _ANY, "tenant": _ANY, "protocolVersion": _ANY}
_CAPABILITIES = {"streaming": _ANY, "pushNotifications": _ANY, "extensions": _ANY, "extendedAgentCard": _ANY}
_SCHEME = {k: _ANY for k in ("apiKeySecurityScheme", "httpAuthSecurityScheme", "oauth2SecurityScheme", "openIdConnectSecurityScheme", "mtlsSecurityScheme")}
_SKILL = {k: _ANY for k in ("id", "name", "description", "tags", "examples", "inputModes", "outputModes", "securityRequirements")}
_CARD: dict[str, Any] = {
    "name": _ANY, "description": _ANY, "supportedInterfaces": [_INTERFACE], "provider": _ANY, "version": _ANY,
    "documentationUrl": _ANY, "capabilities": _CAPABILITIES, "securitySchemes": {"*": _SCHEME},
    "securityRequirements": _ANY, "defaultInputModes": _ANY, "defaultOutputModes": _ANY, "skills": [_SKILL],
    "signatures": _ANY, "iconUrl": _ANY,
}


def _project(value: Any, schema: Any) -> Any:
    if schema is None:
        return value
    if isinstance(schema, list):
        return [_project(v, schema[0]) for v in value] if isinstance(value, list) else value
    if not isinstance(value, dict):
        return value
    if "*" in schema:  # a map: every value by the same schema
        return {k: _project(v, schema["*"]) for k, v in value.items()}
    return {k: _project(v, schema[k]) for k, v in value.items() if k in schema}


def v10_projection(card: Mapping[str, Any]) -> dict[str, Any]:
    """The card with only A2A 1.0's fields (what a 1.0 signer signed)."""
    return _project(dict(card), _CARD)


def _b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


def _header(protected: str) -> dict[str, Any] | None:
    try:
        header = json.loads(base64.urlsafe_b64decode(protected + "=" * (-len(protected) % 4)))
    except (ValueError, TypeError):
        return None
    return header if isinstance(header, dict) else None


# -- verification --------------------------------------------------------------------------------
async def _jwks(url: str, timeout: float) -> dict[str, Any] | None:
    try:
        async with httpx.AsyncClient(timeout=timeout, follow_redirects=False) as http:  # no credentials
            response = await bounded_request(http, "GET", url)  # a key set: bounded like any answer
        data = response.json() if response.status_code == 200 else None
    except (httpx.HTTPError, ClientError, ValueError):
        return None
    return data if isinstance(data, dict) and isinstance(data.get("keys"), list) else None


def _key_for(jwks: Mapping[str, Any], kid: str | None) -> dict[str, Any] | None:
    keys = [k for k in jwks.get("keys") or [] if isinstance(k, dict)]
    for key in keys:
        if kid is not None and key.get("kid") == kid:
            return key
    return keys[0] if kid is None and len(keys) == 1 else None


async def verify_card(
    card: Mapping[str, Any], card_url: str, keys: Mapping[str, Any] | None = None, timeout: float = 10.0
) -> CardSignature:
    """Whether ``card`` (read from ``card_url``) is signed by a key we trust (see the module)."""
    signatures = card.get("signatures")
    if not signatures:
        return CardSignature(NOT_SIGNED)
    if not isinstance(signatures, list):
        return CardSignature(BAD, "its signatures field is not a list")
    try:
        import jwt
        from jwt.exceptions import InvalidSignatureError, PyJWTError
    except ImportError:
        return CardSignature(NOT_CHECKED, "PyJWT is not installed: pip install 'rewindtui[signing]'")
    payloads = [_b64url(signed_payload(card))]
    projected = v10_projection(card)
    if projected != dict(card) and card.get("supportedInterfaces"):
        payloads.append(_b64url(signed_payload(projected)))  # a 1.0 card with 0.3 fields merged in
    why_unchecked = "no signature names a key"
    bad: CardSignature | None = None
    for entry in signatures:
        if not isinstance(entry, dict) or not isinstance(entry.get("protected"), str) or not isinstance(entry.get("signature"), str):
            bad = CardSignature(BAD, "a signature is malformed")
            continue
        header = _header(entry["protected"])
        if header is None:
            bad = CardSignature(BAD, "a signature's protected header is not JSON")
            continue
        kid = header.get("kid") if isinstance(header.get("kid"), str) else None
        alg = header.get("alg")
        if alg not in ALGORITHMS:
            why_unchecked = f"algorithm {alg!r} is not accepted"
            continue
        jwks: Mapping[str, Any] | None = keys
        if jwks is None:
            jku = header.get("jku")
            if not isinstance(jku, str):
                why_unchecked = "the signature names no key set (jku) and none is configured"
                continue
            if not same_origin(jku, card_url):
                why_unchecked = f"its keys are at {jku}, not on the agent's origin; give the key set yourself to trust it"
                continue
            jwks = await _jwks(jku, timeout)
            if jwks is None:
                why_unchecked = f"no key set at {jku}"
                continue
        key = _key_for(jwks, kid)
        if key is None:
            why_unchecked = f"no key {kid!r} in the key set"
            continue
        try:
            public = jwt.PyJWK(key, algorithm=alg).key
        except PyJWTError as exc:
            why_unchecked = f"key {kid!r} cannot be used: {exc}"
            continue
        for n, payload in enumerate(payloads):
            try:
                jwt.api_jws.decode_complete(f"{entry['protected']}.{payload}.{entry['signature']}", public, algorithms=[alg])
            except InvalidSignatureError:
                continue
            except PyJWTError as exc:
                bad = CardSignature(BAD, f"the signature cannot be checked: {exc}", kid)
                break
            covered = "its A2A 1.0 fields; the 0.3 fields added for old clients are not signed" if n else ""
            return CardSignature(VERIFIED, "; ".join(x for x in (f"key {kid}" if kid else "", covered) if x), kid)
        else:
            bad = CardSignature(BAD, "the card does not match its signature: it was changed after signing, or signed by another key", kid)
    return bad or CardSignature(NOT_CHECKED, why_unchecked)
