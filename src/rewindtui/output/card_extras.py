"""What ``rewindtui card`` (and the app's card screen) adds to the card itself: whether it is
signed (:mod:`rewindtui.client.card_signature`), and the authenticated **extended card**.

The extended card is asked for only when the card says the agent has one
(``capabilities.extendedAgentCard`` in A2A 1.0, ``supportsAuthenticatedExtendedCard`` in 0.3)
and the user is authenticated (credentials or an OAuth2 token go to the agent's origin); it is
read over the binding in use: JSON-RPC ``GetExtendedAgentCard`` (1.0) /
``agent/getAuthenticatedExtendedCard`` (0.3), or HTTP+JSON ``GET /extendedAgentCard`` (1.0) /
``GET /v1/card`` (0.3). Its signature is checked too.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from rewindtui.a2a import outgoing
from rewindtui.a2a.dialect import Dialect
from rewindtui.base.textsafe import sanitize_line
from rewindtui.client.auth import is_sensitive_header
from rewindtui.client.card_signature import CardSignature, v10_projection, verify_card
from rewindtui.client.errors import ClientError

EXTENDED_METHOD = {Dialect.V10: "GetExtendedAgentCard", Dialect.V03: "agent/getAuthenticatedExtendedCard"}
EXTENDED_PATH = {Dialect.V10: "/extendedAgentCard", Dialect.V03: "/v1/card"}


class ExtendedCardFailed(ClientError):
    category = "extended-card"


def load_keys(path: str | None) -> dict[str, Any] | None:
    """A JWKS file's keys (None: no file given). A bad file is a ClientError (one line)."""
    if not path:
        return None
    import json
    from pathlib import Path

    try:
        data = json.loads(Path(path).expanduser().read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise ExtendedCardFailed(f"cannot read the key set {path}: {getattr(exc, 'strerror', None) or exc}") from None
    if not isinstance(data, dict) or not isinstance(data.get("keys"), list):
        raise ExtendedCardFailed(f'{path} is not a JWKS (an object with a "keys" list)')
    return data


def offers_extended(card: Mapping[str, Any]) -> bool:
    found = card.get("capabilities")
    caps: Mapping[str, Any] = found if isinstance(found, Mapping) else {}
    return bool(
        caps.get("extendedAgentCard")
        or card.get("supportsAuthenticatedExtendedCard")
        or caps.get("supportsAuthenticatedExtendedCard")
    )


def authenticated(client: Any) -> bool:
    """Credentials (configured or an OAuth2 token) go to the agent's origin."""
    headers = getattr(client.scope, "headers", {})
    return any(
        name.lower() == "authorization" or is_sensitive_header(name) for name in headers
    ) and client.scope.allows(client.url)


async def fetch_extended(client: Any) -> dict[str, Any]:
    """The extended card, over the binding in use. ExtendedCardFailed (one line) otherwise."""
    caps = client.capabilities
    if caps is None:
        caps = await client.connect()
    dialect: Dialect = caps.dialect
    endpoint = caps.endpoint or client.url
    try:
        if caps.binding == "HTTP+JSON":
            response = await client.http.get(
                endpoint.rstrip("/") + EXTENDED_PATH[dialect], headers=outgoing.headers_for(dialect, stream=False)
            )
        else:
            body = outgoing.jsonrpc(EXTENDED_METHOD[dialect], {})
            response = await client.http.post(endpoint, json=body, headers=outgoing.headers_for(dialect, stream=False))
    except Exception as exc:  # transport failures: one line
        raise ExtendedCardFailed(f"cannot read the extended card: {type(exc).__name__}") from None
    if response.status_code in (401, 403):
        raise ExtendedCardFailed(
            f"the agent refused the extended card (HTTP {response.status_code})", hint=client.auth_hint(endpoint)
        )
    try:
        data = response.json()
    except ValueError:
        raise ExtendedCardFailed(f"the extended card is not JSON (HTTP {response.status_code})") from None
    if caps.binding != "HTTP+JSON" and isinstance(data, dict):
        if isinstance(data.get("error"), dict):
            error = data["error"]
            raise ExtendedCardFailed(
                f"the agent did not give the extended card: {sanitize_line(str(error.get('message', error)))}"
            )
        data = data.get("result")
    if response.status_code >= 400 or not isinstance(data, dict) or not data.get("name"):
        raise ExtendedCardFailed(f"no extended card in the answer (HTTP {response.status_code})")
    return data


#: what became of the extended card (``CardExtras.extended_status``)
FETCHED, NOT_OFFERED, NEEDS_AUTH, NOT_READ = "fetched", "not offered", "needs auth", "not read"


@dataclass
class CardExtras:
    signature: CardSignature
    extended: dict[str, Any] | None = None
    extended_signature: CardSignature | None = None
    note: str = ""  # why there is no extended card (when it was asked for)
    #: fetched / not offered / needs auth / not read ("" when it was not asked for)
    extended_status: str = ""

    def extended_text(self) -> str:
        """One line for a view: ``fetched``, ``not offered (...)``, ``needs auth (...)``, ``not read (...)``."""
        if not self.extended_status:
            return ""
        detail = "" if self.extended_status == FETCHED else self.note
        return self.extended_status + (f" ({sanitize_line(detail)})" if detail else "")

    def lines(self, url: str = "") -> list[str]:
        """Text lines after the card's own: the signature, then the extended card (or why none)."""
        from rewindtui.output.render_text import format_card

        out = [f"signature: {sanitize_line(self.signature.text())}"]
        if self.note:
            out.append(f"extended card: {sanitize_line(self.note)}")
        if self.extended is not None:
            out.append("extended card (for authenticated users):")
            out += ["  " + line for line in format_card(self.extended, url, None)]
            if self.extended_signature is not None:
                out.append(f"  signature: {sanitize_line(self.extended_signature.text())}")
        return out

    def record(self) -> dict[str, Any]:
        return {
            "signature": self.signature.record(),
            "extended": self.extended,
            "extended_signature": self.extended_signature.record() if self.extended_signature else None,
            "extended_note": self.note or None,
        }


async def card_extras(
    client: Any,
    card: Mapping[str, Any],
    url: str,
    *,
    extended: bool = False,
    keys: Mapping[str, Any] | None = None,
    tolerant: bool = False,
    issuers: Sequence[str] = (),
) -> CardExtras:
    """The signature and (``extended``) the extended card. A failure to read the extended card is
    raised (ExtendedCardFailed), or with ``tolerant`` (a view) kept as ``needs auth`` (refused) /
    ``not read`` with the reason in ``note``."""
    extras = CardExtras(await verify_card(card, url, keys, issuers=issuers))
    if not extended:
        return extras
    if not offers_extended(card):
        extras.extended_status, extras.note = NOT_OFFERED, "the agent's card says it has none"
    elif not authenticated(client):
        extras.extended_status = NEEDS_AUTH
        extras.note = (
            "the agent has one for authenticated users: give credentials "
            "(e.g. --bearer-env, or OAuth2 with --oauth-client-id)"
        )
    else:
        try:
            extras.extended = await fetch_extended(client)
        except ExtendedCardFailed as exc:
            if not tolerant:
                raise
            extras.extended_status = NEEDS_AUTH if "refused" in str(exc) else NOT_READ
            extras.note = str(exc)
            return extras
        extras.extended_status = FETCHED
        extras.extended_signature = await verify_card(extras.extended, url, keys, issuers=issuers)
    return extras


def _skill_key(skill: Any) -> str:
    return str(skill.get("id") or skill.get("name") or "") if isinstance(skill, Mapping) else ""


def extended_additions(card: Mapping[str, Any], extended: Mapping[str, Any]) -> list[tuple[str, str]]:
    """What the extended card adds to or changes in the public one, as (label, value) rows: a
    changed name / description / version, the skills it adds or changes, and the names of other
    fields that differ. Bounded: at most 20 skill rows."""
    rows: list[tuple[str, str]] = []
    for key in ("name", "description", "version"):
        if extended.get(key) != card.get(key) and extended.get(key) is not None:
            rows.append((key, str(extended.get(key))))
    public_skills = {_skill_key(s): s for s in card.get("skills") or [] if _skill_key(s)}
    skill_rows: list[tuple[str, str]] = []
    for skill in extended.get("skills") or []:
        key = _skill_key(skill)
        if not key or public_skills.get(key) == skill:
            continue
        what = "skill added" if key not in public_skills else "skill changed"
        name = str(skill.get("name") or key)
        description = str(skill.get("description") or "")
        skill_rows.append((what, name + (f" — {description}" if description else "")))
    if len(skill_rows) > 20:
        skill_rows = [*skill_rows[:20], ("…", f"{len(skill_rows) - 20} more skills")]
    rows += skill_rows
    # A2A 1.0 fields only: a2a-sdk merges 0.3 fields (url, preferredTransport ...) into each card
    # for old clients, differently for the public and the extended one
    public, wider = (v10_projection(c) if c.get("supportedInterfaces") else dict(c) for c in (card, extended))
    other = sorted(
        k
        for k in set(public) | set(wider)
        if k not in ("name", "description", "version", "skills", "signatures") and public.get(k) != wider.get(k)
    )
    if other:
        rows.append(("also differs", ", ".join(other[:20]) + (" …" if len(other) > 20 else "")))
    if not rows:
        rows.append(("adds", "nothing: it is the same as the public card"))
    return rows
