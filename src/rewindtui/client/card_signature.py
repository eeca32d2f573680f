"""Signed agent cards (A2A ``AgentCardSignature``): verified, self-signed, not signed, or a bad signature.

A signature is a JWS with a detached payload: ``protected`` (base64url of the JOSE header, with
``alg`` and ``kid``, and ``jku``: where the public keys are, as a JWKS) and ``signature``; the
payload is the card without its ``signatures``, empty values left out, canonicalised by RFC 8785
(JCS) -- as a2a-sdk's ``a2a.utils.signing`` signs it.

Whom the user trusts decides the word. The key comes from a JWKS the user gave (``keys``: the
``card_keys`` setting or ``--card-keys``), else from the header's ``jku`` when that is a **pinned
issuer** (``issuers``: the ``card_issuers`` setting, each a key set URL or an origin) or on the
agent card's own origin. The answer (:class:`CardSignature`) says:

- ``verified``: a signature checks with a key the user trusts (configured, or from a pinned issuer);
- ``self-signed`` (keys served by the agent itself): it checks with keys from the card's own origin
  only -- which proves nothing about who wrote the card: whoever can change a card sent over plain
  HTTP can serve the keys beside it too;
- ``bad signature`` (none checks), ``not signed``, or ``not checked`` (no usable key: keys on another
  origin that is not pinned, an algorithm we do not accept, or PyJWT missing).

Everything is bounded (:mod:`rewindtui.client.limits`): at most ``MAX_SIGNATURES`` signatures are
checked, each at most ``MAX_SIGNATURE_CHARS`` long; a key set is read to ``MAX_DOCUMENT_BYTES`` and
used only with at most ``MAX_KEYS`` keys.

Needs PyJWT with its crypto extra (the ``signing`` extra); without it: "not checked".
"""

from __future__ import annotations

import base64
import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

import httpx

from rewindtui.base.tls import default_context
from rewindtui.client.auth import same_origin
from rewindtui.client.errors import ClientError
from rewindtui.client.limits import MAX_DOCUMENT_BYTES, MAX_KEYS, MAX_SIGNATURE_CHARS, MAX_SIGNATURES
from rewindtui.client.transports.http import bounded_request

VERIFIED, NOT_SIGNED, BAD, NOT_CHECKED = "verified", "not signed", "bad signature", "not checked"
SELF_SIGNED = "self-signed"
#: what a self-signed card's detail starts with
SERVED_BY_AGENT = "keys served by the agent itself"
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
_SCHEME = {
    k: _ANY
    for k in (
        "apiKeySecurityScheme",
        "httpAuthSecurityScheme",
        "oauth2SecurityScheme",
        "openIdConnectSecurityScheme",
        "mtlsSecurityScheme",
    )
}
_SKILL = {
    k: _ANY
    for k in ("id", "name", "description", "tags", "examples", "inputModes", "outputModes", "securityRequirements")
}
_CARD: dict[str, Any] = {
    "name": _ANY,
    "description": _ANY,
    "supportedInterfaces": [_INTERFACE],
    "provider": _ANY,
    "version": _ANY,
    "documentationUrl": _ANY,
    "capabilities": _CAPABILITIES,
    "securitySchemes": {"*": _SCHEME},
    "securityRequirements": _ANY,
    "defaultInputModes": _ANY,
    "defaultOutputModes": _ANY,
    "skills": [_SKILL],
    "signatures": _ANY,
    "iconUrl": _ANY,
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
    return {k: _project(v, _CARD[k]) for k, v in card.items() if k in _CARD}  # as _project does an object


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
        # no credentials
        async with httpx.AsyncClient(timeout=timeout, follow_redirects=False, verify=default_context()) as http:
            response = await bounded_request(http, "GET", url, limit=MAX_DOCUMENT_BYTES)  # a key set is small
        data = response.json() if response.status_code == 200 else None
    except (httpx.HTTPError, ClientError, ValueError):
        return None
    if not isinstance(data, dict) or not isinstance(data.get("keys"), list) or len(data["keys"]) > MAX_KEYS:
        return None
    return data


def pinned(jku: str, issuers: Sequence[str]) -> bool:
    """``jku`` is a key set the user pinned: an issuer given as a key set URL (exactly), or as an
    origin (any key set on it)."""
    for issuer in issuers:
        path = urlsplit(issuer).path
        if (path in ("", "/") and same_origin(jku, issuer)) or jku == issuer:
            return True
    return False


def _key_for(jwks: Mapping[str, Any], kid: str | None) -> dict[str, Any] | None:
    keys = [k for k in jwks.get("keys") or [] if isinstance(k, dict)]
    for key in keys:
        if kid is not None and key.get("kid") == kid:
            return key
    return keys[0] if kid is None and len(keys) == 1 else None


async def verify_card(
    card: Mapping[str, Any],
    card_url: str,
    keys: Mapping[str, Any] | None = None,
    timeout: float = 10.0,
    *,
    issuers: Sequence[str] = (),
) -> CardSignature:
    """Whether ``card`` (read from ``card_url``) is signed by a key the user trusts (``keys``, or a
    key set of one of ``issuers``), or only by keys its own origin serves (see the module)."""
    signatures = card.get("signatures")
    if not signatures:
        return CardSignature(NOT_SIGNED)
    if not isinstance(signatures, list):
        return CardSignature(BAD, "its signatures field is not a list")
    if keys is not None and len(keys.get("keys") or []) > MAX_KEYS:
        return CardSignature(NOT_CHECKED, f"the configured key set has more than {MAX_KEYS} keys")
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
    self_signed: CardSignature | None = None
    for entry in signatures[:MAX_SIGNATURES]:  # the rest are not looked at
        if (
            not isinstance(entry, dict)
            or not isinstance(entry.get("protected"), str)
            or not isinstance(entry.get("signature"), str)
        ):
            bad = CardSignature(BAD, "a signature is malformed")
            continue
        if len(entry["protected"]) > MAX_SIGNATURE_CHARS or len(entry["signature"]) > MAX_SIGNATURE_CHARS:
            bad = CardSignature(BAD, f"a signature is longer than {MAX_SIGNATURE_CHARS:,} characters")
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
        trusted_from = "configured"
        if jwks is None:
            jku = header.get("jku")
            if not isinstance(jku, str):
                why_unchecked = "the signature names no key set (jku) and none is configured"
                continue
            trusted = pinned(jku, issuers)
            if not trusted and not same_origin(jku, card_url):
                why_unchecked = (
                    f"its keys are at {jku}, not on the agent's origin and not a trusted issuer; "
                    "give the key set (card_keys) or pin the issuer (card_issuers) to trust it"
                )
                continue
            jwks = await _jwks(jku, timeout)
            if jwks is None:
                why_unchecked = (
                    f"no usable key set at {jku} (unreachable, not a JWKS, "
                    f"over {MAX_DOCUMENT_BYTES // (1024 * 1024)} MB or more than {MAX_KEYS} keys)"
                )
                continue
            trusted_from = f"trusted issuer {jku}" if trusted else ""
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
                jwt.api_jws.decode_complete(
                    f"{entry['protected']}.{payload}.{entry['signature']}", public, algorithms=[alg]
                )
            except InvalidSignatureError:
                continue
            except PyJWTError as exc:
                bad = CardSignature(BAD, f"the signature cannot be checked: {exc}", kid)
                break
            covered = "its A2A 1.0 fields; the 0.3 fields added for old clients are not signed" if n else ""
            if not trusted_from:  # keys from the card's own origin: they vouch for nothing
                detail = "; ".join(x for x in (SERVED_BY_AGENT, f"key {kid}" if kid else "", covered) if x)
                self_signed = self_signed or CardSignature(SELF_SIGNED, detail, kid)
                break
            named = f"key {kid}" if kid else ""
            if trusted_from != "configured":
                named = f"{named or 'a key'} from {trusted_from}"
            return CardSignature(VERIFIED, "; ".join(x for x in (named, covered) if x), kid)
        else:
            bad = CardSignature(
                BAD,
                "the card does not match its signature: it was changed after signing, or signed by another key",
                kid,
            )
    return self_signed or bad or CardSignature(NOT_CHECKED, why_unchecked)
