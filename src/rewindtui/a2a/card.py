"""Reading an agent card: its interfaces (and which one to use), its security schemes, what is
wrong with it, and the sections a person reads. Both card shapes: A2A 1.0
(``supportedInterfaces``, ``securityRequirements``, schemes as ``{"httpAuthSecurityScheme": ...}``)
and 0.3 (``url`` + ``preferredTransport`` + ``additionalInterfaces``, ``security``, schemes with a
``type``). Pure functions over the parsed JSON; nothing here raises on odd input except
:func:`choose_interface`, whose error says what the card offers.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

from rewindtui.a2a import contract
from rewindtui.a2a.dialect import Dialect

JSONRPC = "JSONRPC"
HTTP_JSON = "HTTP+JSON"
GRPC = "GRPC"
#: The bindings this client speaks, and the dialects it speaks each in.
SPOKEN = {JSONRPC: (Dialect.V03, Dialect.V10), HTTP_JSON: (Dialect.V10,), GRPC: (Dialect.V10,)}
_BINDING_NAMES = {
    "JSONRPC": JSONRPC,
    "JSON-RPC": JSONRPC,
    "HTTP+JSON": HTTP_JSON,
    "HTTP_JSON": HTTP_JSON,
    "HTTPJSON": HTTP_JSON,
    "REST": HTTP_JSON,
    "GRPC": GRPC,
}


def norm_binding(value: Any) -> str:
    """``"jsonrpc"``, ``"JSON-RPC"`` -> ``JSONRPC``; ``"rest"``, ``"http+json"`` -> ``HTTP+JSON``; other
    names upper-cased as given."""
    text = str(value or "").strip().upper()
    return _BINDING_NAMES.get(text, text)


class NoUsableInterface(Exception):
    """The card offers no interface this client can speak; ``str()`` says what it offers."""


@dataclass(frozen=True)
class Interface:
    url: str
    binding: str  # JSONRPC | HTTP+JSON | GRPC | what the card says
    version: str  # the protocol version as the card gives it ("" when it gives none)

    @property
    def dialect(self) -> Dialect | None:
        return Dialect.parse(self.version)

    def describe(self) -> str:
        return f"{self.binding} {self.version or '?'} at {self.url}"


@dataclass(frozen=True)
class Choice:
    """The interface to use: its binding and dialect, and the URL requests go to."""

    binding: str
    dialect: Dialect
    url: str
    interface: Interface | None  # None: the card lists none (the URL the card was read from)
    note: str = ""  # e.g. why the card's URL was not used


def _text(value: Any) -> str:
    return value.strip() if isinstance(value, str) else ""


def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def _dict(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def interfaces(card: dict[str, Any]) -> list[Interface]:
    """The card's interfaces in its order of preference: 1.0 ``supportedInterfaces``; else 0.3
    ``url``/``preferredTransport`` first, then ``additionalInterfaces`` (duplicates dropped)."""
    out: list[Interface] = []
    listed = _list(card.get("supportedInterfaces") or card.get("supported_interfaces"))
    if listed:
        for item in listed:
            d = _dict(item)
            url = _text(d.get("url"))
            if url:
                binding = norm_binding(
                    d.get("protocolBinding") or d.get("protocol_binding") or d.get("transport") or JSONRPC
                )
                version = _text(d.get("protocolVersion") or d.get("protocol_version"))
                out.append(Interface(url, binding, version))
        return out
    version = _text(card.get("protocolVersion") or card.get("protocol_version"))
    url = _text(card.get("url"))
    if url:
        out.append(
            Interface(
                url, norm_binding(card.get("preferredTransport") or card.get("preferred_transport") or JSONRPC), version
            )
        )
    for item in _list(card.get("additionalInterfaces") or card.get("additional_interfaces")):
        d = _dict(item)
        found = Interface(_text(d.get("url")), norm_binding(d.get("transport") or JSONRPC), version)
        if found.url and found not in out:
            out.append(found)
    return out


def _origin(url: str) -> tuple[str, str]:
    parts = urlsplit(url)
    scheme = parts.scheme.lower()
    port = parts.port or {"http": 80, "https": 443}.get(scheme)
    return scheme, f"{(parts.hostname or '').lower()}:{port}"


def same_origin(a: str, b: str) -> bool:
    return _origin(a) == _origin(b)


def choose_interface(
    card: dict[str, Any], card_url: str, *, binding: str | None = None, dialect: Dialect | None = None
) -> Choice:
    """The interface to use: the card's most preferred one this client speaks (or the one of
    ``binding``, when the user asked for one), in its best dialect (1.0 over 0.3, unless
    ``dialect`` is forced). Requests go to its URL when it is on the origin the card came from;
    an interface on another origin (often an address inside the agent's own network, behind a
    proxy) is reached at the URL the card was read from, where the user's credentials go.

    NoUsableInterface when nothing fits, naming what the card offers."""
    wanted = norm_binding(binding) if binding and binding.lower() != "auto" else None
    listed = interfaces(card)
    if not listed:
        if wanted not in (None, JSONRPC):
            raise NoUsableInterface(
                f"the agent card lists no {wanted} interface (it lists none: JSON-RPC at {card_url} is assumed)"
            )
        found = (
            dialect or Dialect.parse(_text(card.get("protocolVersion") or card.get("protocol_version"))) or Dialect.V03
        )
        return Choice(JSONRPC, found, card_url, None)

    def speaks(i: Interface) -> bool:
        dialects = SPOKEN.get(i.binding, ())
        d = dialect or i.dialect or (Dialect.V03 if i.binding == JSONRPC else None)
        return d in dialects

    usable = [i for i in listed if speaks(i) and (wanted is None or i.binding == wanted)]
    if wanted is None and any(i.binding != GRPC for i in usable):
        # gRPC is taken when asked for (--binding grpc) or when it is all the card offers
        usable = [i for i in usable if i.binding != GRPC]
    if not usable:
        offered = "; ".join(i.describe() for i in listed)
        if wanted is not None:
            raise NoUsableInterface(f"the agent offers no {wanted} interface rewindtui can use (it offers: {offered})")
        raise NoUsableInterface(
            f"the agent offers no interface rewindtui can use ({offered}); rewindtui speaks JSON-RPC (A2A 0.3 "
            "and 1.0), HTTP+JSON (A2A 1.0) and gRPC (A2A 1.0)"
        )
    first = usable[0].binding
    same_binding = [i for i in usable if i.binding == first]
    best = next((i for i in same_binding if (dialect or i.dialect) is Dialect.V10), same_binding[0])
    chosen_dialect = dialect or best.dialect or Dialect.V03
    if best.binding == GRPC:
        # a gRPC endpoint is its own address (never reachable at the card's http URL)
        return Choice(first, chosen_dialect, best.url, best)
    if same_origin(best.url, card_url):
        return Choice(first, chosen_dialect, best.url, best)
    note = f"the card names {best.url}, on another origin than {card_url}: requests go to {card_url}"
    return Choice(first, chosen_dialect, card_url, best, note)


# -- security --------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Scheme:
    """A security scheme, in words, with the rewindtui option that answers it (if any)."""

    name: str
    kind: str  # bearer | basic | api-key | oauth2 | openid | mtls | unknown
    detail: str
    option: str  # e.g. "--bearer-env VAR"; "" when rewindtui has none for it

    def describe(self) -> str:
        how = f" (give {self.option})" if self.option else " (rewindtui cannot do this one)"
        return f"{self.name}: {self.detail}{how}"


def _scheme(name: str, raw: Any) -> Scheme:
    d = _dict(raw)
    kind_03 = _text(d.get("type")).lower()
    http = _dict(d.get("httpAuthSecurityScheme") or d.get("http_auth_security_scheme"))
    api_key = _dict(d.get("apiKeySecurityScheme") or d.get("api_key_security_scheme"))
    if kind_03 == "http" or http:
        scheme = _text(http.get("scheme") or d.get("scheme")).lower()
        if scheme == "basic":
            return Scheme(name, "basic", "HTTP Basic", "--basic-user NAME --basic-password-env VAR")
        fmt = _text(http.get("bearerFormat") or d.get("bearerFormat"))
        detail = "HTTP bearer token" + (f" ({fmt})" if fmt else "")
        if scheme and scheme != "bearer":
            return Scheme(name, "unknown", f"HTTP {scheme} authentication", "")
        return Scheme(name, "bearer", detail, "--bearer-env VAR")
    if kind_03 == "apikey" or api_key:
        where = _text(api_key.get("location") or d.get("in")).lower() or "header"
        header = _text(api_key.get("name") or d.get("name")) or "?"
        if where != "header":
            return Scheme(name, "api-key", f"API key in {where} parameter {header}", "")
        return Scheme(name, "api-key", f"API key in header {header}", f"--api-key-env VAR --api-key-header {header}")
    if kind_03 == "oauth2" or d.get("oauth2SecurityScheme") or d.get("oauth2_security_scheme"):
        return Scheme(name, "oauth2", "OAuth 2.0", "--bearer-env VAR (with a token you obtained)")
    if kind_03 == "openidconnect" or d.get("openIdConnectSecurityScheme") or d.get("open_id_connect_security_scheme"):
        return Scheme(name, "openid", "OpenID Connect", "--bearer-env VAR (with a token you obtained)")
    if kind_03 == "mutualtls" or d.get("mtlsSecurityScheme") or d.get("mtls_security_scheme"):
        return Scheme(name, "mtls", "mutual TLS (client certificate)", "")
    return Scheme(name, "unknown", f"an unrecognised scheme {json.dumps(d, sort_keys=True)[:80]}", "")


def security_schemes(card: dict[str, Any]) -> list[Scheme]:
    schemes = _dict(card.get("securitySchemes") or card.get("security_schemes"))
    return [_scheme(str(name), raw) for name, raw in schemes.items()]


def security_requirements(card: dict[str, Any]) -> list[list[str]]:
    """Each alternative the card accepts, as the scheme names it needs together."""
    out: list[list[str]] = []
    for item in _list(card.get("securityRequirements") or card.get("security_requirements")):
        schemes = _dict(_dict(item).get("schemes"))
        if schemes:
            out.append([str(k) for k in schemes])
    if out:
        return out
    for item in _list(card.get("security")):  # 0.3: [{"name": [scopes]}] (a2a-sdk's cards carry both)
        if isinstance(item, dict) and item:
            out.append([str(k) for k in item])
    return out


def wanted_schemes(card: dict[str, Any]) -> list[Scheme]:
    """The schemes the card requires (all declared ones when it names no requirement)."""
    schemes = {s.name: s for s in security_schemes(card)}
    required = [n for alt in security_requirements(card) for n in alt]
    if not required:
        return list(schemes.values())
    seen: list[Scheme] = []
    for name in required:
        scheme = schemes.get(name) or Scheme(name, "unknown", "not declared in securitySchemes", "")
        if scheme not in seen:
            seen.append(scheme)
    return seen


# -- warnings --------------------------------------------------------------------------------------
def _is_http_url(value: str) -> bool:
    parts = urlsplit(value)
    return parts.scheme in ("http", "https") and bool(parts.netloc)


def _rewind_params(card: dict[str, Any]) -> dict[str, Any] | None:
    for ext in _list(_dict(card.get("capabilities")).get("extensions")):
        if _dict(ext).get("uri") == contract.EXTENSION_URI:
            return _dict(_dict(ext).get("params"))
    return None


def card_warnings(card: dict[str, Any], card_url: str | None = None) -> list[str]:
    """Where the card is incomplete or contradicts itself, one sentence each."""
    out: list[str] = []
    for key in ("name", "description", "version"):
        if not _text(card.get(key)):
            out.append(f"no {key}")
    listed = interfaces(card)
    caps = card.get("capabilities")
    if not isinstance(caps, dict):
        out.append("no capabilities object (streaming is assumed)")
        caps = {}
    if not listed:
        out.append("no interfaces: neither supportedInterfaces (1.0) nor url (0.3) says where the agent is")
    for i in listed:
        if not _is_http_url(i.url) and i.binding != GRPC:
            out.append(f"interface {i.describe()}: not an http(s) URL")
        if i.binding not in (JSONRPC, HTTP_JSON, GRPC):
            out.append(f"interface {i.describe()}: unknown protocol binding {i.binding!r}")
        if i.version and i.dialect is None:
            out.append(f"interface {i.describe()}: unreadable protocol version {i.version!r}")
        if card_url and _is_http_url(i.url) and not same_origin(i.url, card_url):
            out.append(f"interface {i.describe()} is on another origin than where the card was read ({card_url})")
    if len(set(listed)) != len(listed):
        out.append("an interface is listed twice")
    preferred = _text(card.get("preferredTransport") or card.get("preferred_transport"))
    additional = _list(card.get("additionalInterfaces") or card.get("additional_interfaces"))
    if preferred and additional and _text(card.get("url")):
        main = Interface(_text(card.get("url")), norm_binding(preferred), "")
        if not any(
            norm_binding(_dict(a).get("transport")) == main.binding and _dict(a).get("url") == main.url
            for a in additional
        ):
            out.append(
                f"preferredTransport {preferred} at {main.url} is not repeated in additionalInterfaces (0.3 asks for "
                "it)"
            )
    if caps.get("streaming") is True and listed and not any(i.binding in (JSONRPC, HTTP_JSON, GRPC) for i in listed):
        out.append("streaming is claimed but no interface can stream")
    if caps.get("streaming") is True and not listed:
        out.append("streaming is claimed but no interface is given to stream on")
    version = _text(card.get("protocolVersion") or card.get("protocol_version"))
    if version and listed and _list(card.get("supportedInterfaces") or card.get("supported_interfaces")):
        top = Dialect.parse(version)
        if top is not None and not any(i.dialect is top for i in listed):
            out.append(f"protocolVersion {version} matches none of the supportedInterfaces' versions")
    if not _list(card.get("skills")):
        out.append("no skills")
    for skill in _list(card.get("skills")):
        d = _dict(skill)
        if not _text(d.get("id")) or not _text(d.get("name")):
            out.append(f"a skill without an id or a name: {json.dumps(d, sort_keys=True)[:60]}")
    for key in ("defaultInputModes", "defaultOutputModes"):
        if not _list(card.get(key) or card.get(_snake(key))):
            out.append(f"no {key}")
    schemes = {s.name for s in security_schemes(card)}
    for alternative in security_requirements(card):
        for name in alternative:
            if name not in schemes:
                out.append(f"security requirement names scheme {name!r}, which securitySchemes does not declare")
    for ext in _list(caps.get("extensions")):
        d = _dict(ext)
        if not _text(d.get("uri")):
            out.append("an extension without a uri")
        elif d.get("required") is True and d.get("uri") != contract.EXTENSION_URI:
            out.append(f"requires extension {d['uri']}, which rewindtui does not implement")
    params = _rewind_params(card)
    if params is not None:
        modes = params.get(contract.PARAM_REWIND)
        modes = [modes] if isinstance(modes, str) else _list(modes)
        api = params.get(contract.PARAM_API)
        if contract.MODE_REST in modes and not (isinstance(api, str) and api):
            out.append("rewind extension offers rewind over REST but names no api")
        if params.get(contract.PARAM_FORK) and not (isinstance(api, str) and api):
            out.append("rewind extension offers fork but names no api")
        if isinstance(api, str) and api:
            if not _is_http_url(api):
                out.append(f"rewind extension api {api!r} is not an http(s) URL")
            elif card_url and not same_origin(api, card_url):
                out.append(f"rewind extension api {api} is on another origin: your credentials are not sent there")
    return out


def _snake(key: str) -> str:
    return "".join("_" + c.lower() if c.isupper() else c for c in key)


# -- sections for people ---------------------------------------------------------------------------
@dataclass
class Section:
    title: str
    rows: list[tuple[str, str]] = field(default_factory=list)


def _join(values: Any) -> str:
    return ", ".join(str(v) for v in _list(values)) or "-"


def _compact(value: Any, limit: int = 200) -> str:
    text = json.dumps(value, ensure_ascii=False, sort_keys=True, default=str)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def card_sections(card: dict[str, Any], *, card_url: str | None = None, choice: Choice | None = None) -> list[Section]:
    """The card as titled sections of (label, value) rows: what a card view and ``rewindtui card`` show."""
    about = Section("Agent")
    about.rows.append(("name", _text(card.get("name")) or "-"))
    about.rows.append(("description", _text(card.get("description")) or "-"))
    about.rows.append(("version", _text(card.get("version")) or "-"))
    provider = _dict(card.get("provider"))
    if provider:
        about.rows.append(
            (
                "provider",
                " ".join(x for x in (_text(provider.get("organization")), _text(provider.get("url"))) if x) or "-",
            )
        )
    for key, label in (
        ("documentationUrl", "documentation"),
        ("iconUrl", "icon"),
        ("protocolVersion", "protocol version"),
    ):
        if _text(card.get(key)):
            about.rows.append((label, _text(card.get(key))))
    if card_url:
        about.rows.append(("card read from", card_url))
    sections = [about]

    where = Section("Interfaces")
    for i in interfaces(card):
        mark = " (used)" if choice is not None and choice.interface == i else ""
        where.rows.append((f"{i.binding} {i.version or '?'}{mark}", i.url))
    if choice is not None:
        where.rows.append(("rewindtui uses", f"{choice.binding} (A2A {choice.dialect.value}) at {choice.url}"))
        if choice.note:
            where.rows.append(("note", choice.note))
    if not where.rows:
        where.rows.append(("-", "none listed"))
    sections.append(where)

    caps = _dict(card.get("capabilities"))
    capabilities = Section("Capabilities")
    for key, label in (
        ("streaming", "streaming"),
        ("pushNotifications", "push notifications"),
        ("stateTransitionHistory", "state transition history"),
        ("extendedAgentCard", "extended agent card"),
    ):
        if key in caps:
            capabilities.rows.append((label, "yes" if caps[key] else "no"))
    capabilities.rows.append(("input modes", _join(card.get("defaultInputModes"))))
    capabilities.rows.append(("output modes", _join(card.get("defaultOutputModes"))))
    sections.append(capabilities)

    extensions = Section("Extensions")
    for ext in _list(caps.get("extensions")):
        d = _dict(ext)
        uri = _text(d.get("uri")) or "?"
        label = uri + (" (required)" if d.get("required") else "")
        text = ("rewindtui's rewind extension: " if uri == contract.EXTENSION_URI else "") + _text(d.get("description"))
        params = d.get("params")
        if params:
            text = (text + " " if text else "") + "params " + _compact(params)
        extensions.rows.append((label, text or "-"))
    if not extensions.rows:
        extensions.rows.append(("-", "none"))
    sections.append(extensions)

    skills = Section("Skills")
    for skill in _list(card.get("skills")):
        d = _dict(skill)
        name = _text(d.get("name")) or _text(d.get("id")) or "?"
        text = _text(d.get("description")) or "-"
        tags = _list(d.get("tags"))
        if tags:
            text += f" [tags: {_join(tags)}]"
        skills.rows.append((name, text))
        for example in _list(d.get("examples")):
            skills.rows.append(("  example", str(example)))
    if not skills.rows:
        skills.rows.append(("-", "none"))
    sections.append(skills)

    security = Section("Security")
    for scheme in security_schemes(card):
        security.rows.append((scheme.name, scheme.detail + (f" -> {scheme.option}" if scheme.option else "")))
    requirements = security_requirements(card)
    if requirements:
        security.rows.append(("required", " or ".join(" + ".join(alt) for alt in requirements)))
    if not security.rows:
        security.rows.append(("-", "none declared"))
    sections.append(security)

    warnings = card_warnings(card, card_url)
    if warnings:  # right after who the agent is: what is wrong with the card is read first
        sections.insert(1, Section("Warnings", [("!", w) for w in warnings]))
    return sections
