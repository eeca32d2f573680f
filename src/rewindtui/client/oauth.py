"""OAuth 2 for an agent that wants it: client credentials and the device-code flow (RFC 8628),
endpoints from the user, from OIDC discovery, or from the agent card's security schemes; tokens
cached on this machine (0600), refreshed, revocable (RFC 7009).

- :func:`endpoints_for` finds the token, device-authorization and revocation endpoints: what the
  user configured wins; else OIDC discovery (the issuer the user gave, or the card's
  ``openIdConnect`` scheme); else the card's ``oauth2`` scheme flows.
- A client secret goes only to a token endpoint the user named, or found through an issuer the
  user named, or on the agent's own origin: a card cannot send it elsewhere.
- :class:`TokenStore`: ``oauth-tokens.json`` in the user data dir, written 0600, keyed by token
  endpoint, client id and scope. Tokens are registered for redaction as soon as they are read.
- :class:`OAuthSession`: a valid access token (cached, refreshed with the refresh token, or a new
  client-credentials grant); :meth:`OAuthSession.login` runs the device flow, showing the user the
  URL and code through ``prompt``; :meth:`OAuthSession.logout` revokes and forgets.

Plain httpx; no Textual, nothing of the server.
"""

from __future__ import annotations

import asyncio
import json
import os
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx

from rewindtui.client.auth import AuthError, SecretRef, register_secret, same_origin
from rewindtui.client.errors import ClientError
from rewindtui.client.limits import MAX_DOCUMENT_BYTES, MAX_TOKEN_ANSWER_BYTES, MAX_TOKEN_CHARS
from rewindtui.client.transports.http import AnswerTooLarge, bounded_request

CLIENT_CREDENTIALS, DEVICE = "client-credentials", "device"
DEVICE_GRANT = "urn:ietf:params:oauth:grant-type:device_code"
TOKENS_FILE = "oauth-tokens.json"
#: A token is renewed this many seconds before it expires.
EARLY = 30.0


@dataclass(frozen=True)
class OAuthConfig:
    """What the user configured (see ``rewindtui --help``, the oauth options)."""

    client_id: str
    secret: SecretRef | None = None  # a confidential client (client credentials; or a device flow client with a secret)
    flow: str = ""  # client-credentials | device; "" = client-credentials with a secret, else device
    token_url: str | None = None
    device_url: str | None = None
    issuer: str | None = None  # OIDC issuer (or its .well-known URL)
    scope: str | None = None

    @property
    def grant(self) -> str:
        return self.flow or (CLIENT_CREDENTIALS if self.secret is not None else DEVICE)

    def describe(self) -> str:
        how = "client credentials" if self.grant == CLIENT_CREDENTIALS else "device-code login"
        secret = f", secret from {self.secret.describe()}" if self.secret else ""
        return f"OAuth2 {how} as client {self.client_id}{secret}"


@dataclass
class Endpoints:
    token_url: str
    device_url: str | None = None
    revocation_url: str | None = None
    #: where they came from: "configured", "oidc" (issuer the user gave), "oidc-card", "card"
    source: str = "configured"
    #: the client authentication the token endpoint takes (OIDC ``token_endpoint_auth_methods_supported``)
    auth_methods: tuple[str, ...] = ()

    @property
    def secret_in_form(self) -> bool:
        """client_secret_post: only when the server says it does not take client_secret_basic."""
        return "client_secret_post" in self.auth_methods and "client_secret_basic" not in self.auth_methods


# -- the card's security schemes -------------------------------------------------------------------
def card_schemes(card: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The card's security schemes as ``{"name", "type", ...}`` (A2A 1.0's one-of wrappers and
    0.3's ``type`` field both read): ``type`` is oauth2 / openIdConnect / http / apiKey / mtls."""
    found: list[dict[str, Any]] = []
    schemes = card.get("securitySchemes") or {}
    if not isinstance(schemes, Mapping):
        return found
    wrappers = {
        "oauth2SecurityScheme": "oauth2",
        "openIdConnectSecurityScheme": "openIdConnect",
        "httpAuthSecurityScheme": "http",
        "apiKeySecurityScheme": "apiKey",
        "mtlsSecurityScheme": "mutualTLS",
    }
    for name, scheme in schemes.items():
        if not isinstance(scheme, Mapping):
            continue
        for key, kind in wrappers.items():
            if isinstance(scheme.get(key), Mapping):
                found.append({"name": name, "type": kind, **scheme[key]})
                break
        else:
            if isinstance(scheme.get("type"), str):
                found.append({"name": name, **scheme})
    return found


def _card_oidc_url(card: Mapping[str, Any]) -> str | None:
    for scheme in card_schemes(card):
        if scheme.get("type") == "openIdConnect" and isinstance(scheme.get("openIdConnectUrl"), str):
            return str(scheme["openIdConnectUrl"])
    return None


def _card_flows(card: Mapping[str, Any]) -> dict[str, Any]:
    for scheme in card_schemes(card):
        if scheme.get("type") == "oauth2" and isinstance(scheme.get("flows"), Mapping):
            flows = dict(scheme["flows"])
            # 1.0 wraps each flow too: {"clientCredentials": {...}} / {"deviceCode": {...}}
            return {k: v for k, v in flows.items() if isinstance(v, Mapping)}
    return {}


def _discovery_url(issuer: str) -> str:
    if ".well-known/" in issuer:
        return issuer
    return issuer.rstrip("/") + "/.well-known/openid-configuration"


async def _discover(http: httpx.AsyncClient, url: str) -> dict[str, Any]:
    try:
        response = await bounded_request(http, "GET", url, limit=MAX_DOCUMENT_BYTES)
    except AnswerTooLarge:
        raise AuthError(f"OIDC discovery at {url} answered more than {_size(MAX_DOCUMENT_BYTES)}: refused") from None
    except (httpx.HTTPError, ClientError) as exc:
        raise AuthError(f"OIDC discovery at {url} failed: {type(exc).__name__}") from None
    if response.status_code != 200:
        raise AuthError(f"OIDC discovery at {url} answered HTTP {response.status_code}")
    try:
        doc = response.json()
    except ValueError:
        raise AuthError(f"OIDC discovery at {url} did not answer JSON") from None
    if not isinstance(doc, dict) or not isinstance(doc.get("token_endpoint"), str):
        raise AuthError(f"OIDC discovery at {url} names no token_endpoint")
    return doc


async def endpoints_for(
    config: OAuthConfig, card: Mapping[str, Any], agent_url: str, http: httpx.AsyncClient
) -> Endpoints:
    """The endpoints to use (see the module's docstring for the order), checked: a client secret
    never goes to a token endpoint the user did not choose and the agent does not share."""
    found: Endpoints | None = None
    if config.token_url:
        found = Endpoints(config.token_url, config.device_url, None, "configured")
    if found is None or (config.grant == DEVICE and not found.device_url):
        oidc = config.issuer or _card_oidc_url(card)
        if oidc:
            doc = await _discover(http, _discovery_url(oidc))
            methods = doc.get("token_endpoint_auth_methods_supported")
            found = Endpoints(
                found.token_url if found else doc["token_endpoint"],
                (found.device_url if found else None) or doc.get("device_authorization_endpoint"),
                doc.get("revocation_endpoint"),
                "oidc" if config.issuer else "oidc-card",
                tuple(m for m in methods if isinstance(m, str)) if isinstance(methods, list) else (),
            )
    if found is None:
        flows = _card_flows(card)
        flow = flows.get("clientCredentials" if config.grant == CLIENT_CREDENTIALS else "deviceCode") or {}
        token_url = flow.get("tokenUrl")
        if isinstance(token_url, str):
            device = flow.get("deviceAuthorizationUrl")
            found = Endpoints(token_url, device if isinstance(device, str) else None, None, "card")
    if found is None:
        raise AuthError(
            "no OAuth2 token endpoint: the agent card names none (no oauth2 or openIdConnect security scheme); "
            "give --oauth-token-url URL or --oidc-issuer URL"
        )
    if config.grant == DEVICE and not found.device_url:
        raise AuthError(
            f"no device authorization endpoint for the device-code login (token endpoint {found.token_url}); give "
            "--oauth-device-url URL"
        )
    if (
        config.secret is not None
        and found.source in ("card", "oidc-card")
        and not same_origin(found.token_url, agent_url)
    ):
        raise AuthError(
            f"the agent card sends the client secret to {found.token_url}, not the agent's origin; "
            "if you trust it, give --oauth-token-url or --oidc-issuer yourself"
        )
    return found


def _size(limit: int) -> str:
    return f"{limit // (1024 * 1024)} MB" if limit >= 1024 * 1024 else f"{limit // 1024} KB"


def _too_long(value: Any) -> bool:
    return isinstance(value, str) and len(value) > MAX_TOKEN_CHARS


# -- the token cache -----------------------------------------------------------------------------
@dataclass
class Token:
    access_token: str
    expires_at: float | None = None
    refresh_token: str | None = None
    scope: str | None = None

    def fresh(self, now: float | None = None) -> bool:
        return self.expires_at is None or (now or time.time()) < self.expires_at - EARLY

    @classmethod
    def from_response(cls, data: Mapping[str, Any], previous: Token | None = None) -> Token:
        access = data.get("access_token")
        if not isinstance(access, str) or not access:
            raise AuthError("the token endpoint answered no access_token")
        for name in ("access_token", "refresh_token"):
            if _too_long(data.get(name)):
                raise AuthError(
                    f"the token endpoint answered a {name} of {len(data[name]):,} characters: refused and not cached "
                    f"(tokens over {_size(MAX_TOKEN_CHARS)} are not accepted)"
                )
        expires_in = data.get("expires_in")
        refresh = data.get("refresh_token") or (previous.refresh_token if previous else None)
        token = cls(
            access,
            time.time() + float(expires_in) if isinstance(expires_in, (int, float)) else None,
            refresh if isinstance(refresh, str) else None,
            data.get("scope") if isinstance(data.get("scope"), str) else None,
        )
        token.register()
        return token

    def register(self) -> None:
        register_secret(self.access_token)
        register_secret(self.refresh_token)


@dataclass
class TokenStore:
    """``oauth-tokens.json``: {key: token fields}; the file is created 0600 and kept so."""

    path: Path

    @staticmethod
    def key(token_url: str, client_id: str, scope: str | None) -> str:
        return f"{token_url} {client_id} {scope or ''}"

    def _read(self) -> dict[str, Any]:
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            return {}
        except (OSError, ValueError):
            return {}
        return data if isinstance(data, dict) else {}

    def _write(self, data: dict[str, Any]) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        tmp = self.path.with_name(self.path.name + ".tmp")
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            json.dump(data, handle)
        os.chmod(tmp, 0o600)
        os.replace(tmp, self.path)

    def get(self, key: str) -> Token | None:
        entry = self._read().get(key)
        if not isinstance(entry, dict) or not isinstance(entry.get("access_token"), str):
            return None
        if _too_long(entry["access_token"]) or _too_long(entry.get("refresh_token")):
            return None  # cached by an older version that took any size: never sent
        token = Token(entry["access_token"], entry.get("expires_at"), entry.get("refresh_token"), entry.get("scope"))
        token.register()
        return token

    def put(self, key: str, token: Token) -> None:
        data = self._read()
        data[key] = {k: v for k, v in vars(token).items() if v is not None}
        self._write(data)

    def delete(self, key: str) -> bool:
        data = self._read()
        if key not in data:
            return False
        del data[key]
        self._write(data)
        return True

    def entries(self) -> dict[str, Token]:
        return {k: t for k in self._read() if (t := self.get(k)) is not None}


# -- the flows -----------------------------------------------------------------------------------
#: the shortest wait between two polls of the token endpoint in the device flow (seconds)
MIN_POLL_INTERVAL = 0.2
Prompt = Callable[[str, str, str | None], None]  # (verification URL, user code, URL with the code)
#: what a device authorization answer may ask for, at most: a wait between polls, and the time
#: the code is valid (a server naming a day or a NaN does not hold the login open for it)
MAX_POLL_INTERVAL = 60.0
MAX_DEVICE_SECONDS = 1800.0


def _seconds(value: Any, default: float, low: float, high: float) -> float:
    """A number of seconds a server named, within [low, high]; ``default`` when it named none."""
    if isinstance(value, bool) or not isinstance(value, (int, float)) or value != value:  # NaN
        return default
    return min(max(float(value), low), high)


@dataclass
class OAuthSession:
    config: OAuthConfig
    endpoints: Endpoints
    store: TokenStore
    #: a plain client for the token endpoints, made per request: none of the agent's credentials on it
    make_http: Callable[[], httpx.AsyncClient]
    environ: Mapping[str, str] | None = None
    counts: dict[str, int] = field(default_factory=dict)  # grant type -> requests made (tests, status)
    _lock: asyncio.Lock = field(default_factory=asyncio.Lock)
    _current: Token | None = None  # the token in use (also in the store)

    @property
    def key(self) -> str:
        return TokenStore.key(self.endpoints.token_url, self.config.client_id, self.config.scope)

    def _client_auth(self, form: dict[str, str]) -> dict[str, Any]:
        """client_secret_basic when there is a secret (client_secret_post when discovery says the
        server takes only that); else the client id in the form (a public client)."""
        if self.config.secret is None:
            form["client_id"] = self.config.client_id
            return {}
        secret = self.config.secret.resolve(self.environ, "the OAuth2 client secret")
        if self.endpoints.secret_in_form:
            form.update(client_id=self.config.client_id, client_secret=secret)
            return {}
        return {"auth": (self.config.client_id, secret)}

    async def _token_request(self, form: dict[str, str]) -> tuple[int, dict[str, Any]]:
        kwargs = self._client_auth(form)
        self.counts[form["grant_type"]] = self.counts.get(form["grant_type"], 0) + 1
        try:
            async with self.make_http() as http:
                response = await bounded_request(
                    http,
                    "POST",
                    self.endpoints.token_url,
                    limit=MAX_TOKEN_ANSWER_BYTES,
                    data=form,
                    headers={"Accept": "application/json"},
                    **kwargs,
                )
        except AnswerTooLarge:
            raise AuthError(
                f"the token endpoint {self.endpoints.token_url} answered more than {_size(MAX_TOKEN_ANSWER_BYTES)}: "
                "refused and nothing cached (a token answer is a few KB at most)"
            ) from None
        except (httpx.HTTPError, ClientError) as exc:
            raise AuthError(
                f"the token endpoint {self.endpoints.token_url} did not answer: {type(exc).__name__}"
            ) from None
        try:
            data = response.json()
        except ValueError:
            data = {}
        return response.status_code, data if isinstance(data, dict) else {}

    @staticmethod
    def _why(status: int, data: Mapping[str, Any]) -> str:
        error = data.get("error") or f"HTTP {status}"
        text = data.get("error_description")
        return f"{error}" + (f" ({text})" if isinstance(text, str) and text else "")

    async def token(self, interactive: bool = False, prompt: Prompt | None = None) -> str:
        """A valid access token: the cached one, refreshed, or a new grant (the device flow only
        when ``interactive``; otherwise AuthError saying to run ``rewindtui auth login``)."""
        current = self._current
        if current is not None and current.fresh():  # the common case: no lock, no file read
            return current.access_token
        async with self._lock:
            cached = self.store.get(self.key)
            if cached is not None and cached.fresh():
                self._current = cached
                return cached.access_token
            if cached is not None and cached.refresh_token:
                status, data = await self._token_request(
                    {"grant_type": "refresh_token", "refresh_token": cached.refresh_token}
                )
                if status == 200:
                    return self._keep(Token.from_response(data, cached))
                self.store.delete(self.key)  # refused: the refresh token is dead
                self._current = None
            if self.config.grant == CLIENT_CREDENTIALS:
                return self._keep(await self._client_credentials())
            if not interactive:
                raise AuthError(
                    f"not signed in to {self.endpoints.token_url} as client {self.config.client_id}"
                    + (" (the session expired)" if cached is not None else "")
                    + ": run `rewindtui auth login` with the same options"
                )
            return self._keep(await self._device_flow(prompt))

    def _keep(self, token: Token) -> str:
        self.store.put(self.key, token)
        self._current = token
        return token.access_token

    async def _client_credentials(self) -> Token:
        form = {"grant_type": "client_credentials"}
        if self.config.scope:
            form["scope"] = self.config.scope
        status, data = await self._token_request(form)
        if status != 200:
            raise AuthError(
                f"the token endpoint {self.endpoints.token_url} refused the client credentials: "
                f"{self._why(status, data)}"
            )
        return Token.from_response(data)

    async def _device_flow(self, prompt: Prompt | None, sleep: Callable[[float], Any] = asyncio.sleep) -> Token:
        assert self.endpoints.device_url is not None
        form = {"scope": self.config.scope} if self.config.scope else {}
        kwargs = self._client_auth(form)
        try:
            async with self.make_http() as http:
                response = await bounded_request(
                    http,
                    "POST",
                    self.endpoints.device_url,
                    limit=MAX_TOKEN_ANSWER_BYTES,
                    data=form,
                    headers={"Accept": "application/json"},
                    **kwargs,
                )
            data = response.json()
        except AnswerTooLarge:
            raise AuthError(
                f"the device authorization endpoint {self.endpoints.device_url} answered more than "
                f"{_size(MAX_TOKEN_ANSWER_BYTES)}: refused"
            ) from None
        except (httpx.HTTPError, ClientError, ValueError) as exc:
            raise AuthError(
                f"the device authorization endpoint {self.endpoints.device_url} failed: {type(exc).__name__}"
            ) from None
        if response.status_code != 200 or not isinstance(data, dict) or "device_code" not in data:
            raise AuthError(
                "the device authorization endpoint refused: "
                f"{self._why(response.status_code, data if isinstance(data, dict) else {})}"
            )
        device_code = str(data["device_code"])
        register_secret(device_code)
        uri = str(data.get("verification_uri") or data.get("verification_url") or "")
        complete = data.get("verification_uri_complete")
        (prompt or (lambda *_: None))(
            uri, str(data.get("user_code", "")), complete if isinstance(complete, str) else None
        )
        # RFC 8628: 5 s when the server names no interval; a server that says 0 still gets a pause
        given = data.get("interval")
        interval = _seconds(given, 5.0, MIN_POLL_INTERVAL, MAX_POLL_INTERVAL)
        deadline = time.monotonic() + _seconds(data.get("expires_in"), 600.0, 1.0, MAX_DEVICE_SECONDS)
        while time.monotonic() < deadline:
            await sleep(interval)
            status, answer = await self._token_request({"grant_type": DEVICE_GRANT, "device_code": device_code})
            if status == 200:
                return Token.from_response(answer)
            error = answer.get("error")
            if error == "authorization_pending":
                continue
            if error == "slow_down":
                interval = min(interval + 5, MAX_POLL_INTERVAL)
                continue
            if error == "access_denied":
                raise AuthError("the sign-in was denied")
            if error == "expired_token":
                break
            raise AuthError(f"the device-code login failed: {self._why(status, answer)}")
        raise AuthError("the device code expired before the sign-in was completed; run `rewindtui auth login` again")

    async def login(self, prompt: Prompt | None = None) -> Token:
        """A new grant now (the device flow shows ``prompt`` the URL and code); cached."""
        async with self._lock:
            token = await (
                self._client_credentials() if self.config.grant == CLIENT_CREDENTIALS else self._device_flow(prompt)
            )
            self._keep(token)
            return token

    async def logout(self) -> tuple[bool, list[str]]:
        """Revoke the cached tokens at the revocation endpoint (when there is one) and forget them.
        (whether a token was cached, what could not be revoked)."""
        async with self._lock:
            cached = self.store.get(self.key)
            problems: list[str] = []
            if cached is None:
                return False, problems
            if self.endpoints.revocation_url:
                for value, hint in ((cached.refresh_token, "refresh_token"), (cached.access_token, "access_token")):
                    if not value:
                        continue
                    form = {"token": value, "token_type_hint": hint}
                    kwargs = self._client_auth(form)
                    try:
                        async with self.make_http() as http:
                            response = await bounded_request(
                                http,
                                "POST",
                                self.endpoints.revocation_url,
                                limit=MAX_TOKEN_ANSWER_BYTES,
                                data=form,
                                **kwargs,
                            )
                        if response.status_code != 200:
                            problems.append(f"{hint}: HTTP {response.status_code}")
                    except (httpx.HTTPError, ClientError) as exc:
                        problems.append(f"{hint}: {type(exc).__name__}")
            else:
                problems.append("the server names no revocation endpoint: the tokens were only forgotten here")
            self.store.delete(self.key)
            self._current = None
            return True, problems
