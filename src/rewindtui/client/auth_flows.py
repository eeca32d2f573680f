"""The auth a company uses, wired into a connection: OAuth2 (:mod:`rewindtui.client.oauth`) and mTLS.

Options (flags; each also ``REWINDTUI_<NAME>`` in the environment):

- ``--oauth-client-id ID`` turns OAuth2 on. With ``--oauth-client-secret-env VAR`` /
  ``--oauth-client-secret-file PATH`` it is the client-credentials grant, else the device-code
  login (``rewindtui auth login`` shows a URL and a code; other commands use the cached token,
  refreshed as needed). ``--oauth-flow`` forces one. Endpoints: ``--oauth-token-url``,
  ``--oauth-device-url``, ``--oidc-issuer`` (OIDC discovery), else from the agent card's security
  schemes (see :func:`rewindtui.client.oauth.endpoints_for`). ``--oauth-scope "a b"``.
- ``--tls-cert PATH --tls-key PATH``: a client certificate for mutual TLS; ``--tls-ca PATH``: the
  CA bundle that signs the agent's (and the token endpoint's) certificate. An encrypted key's
  passphrase: ``--tls-key-password-env VAR`` / ``--tls-key-password-file PATH`` (never the
  passphrase itself on the command line); it is redacted like every secret, and a key that is
  encrypted without one given is refused with what to give (OpenSSL never prompts).

The access token is sent as ``Authorization: Bearer`` through the connection's
:class:`~rewindtui.client.auth.CredentialScope`, so only to the origins the user configured; a request
hook (:class:`BearerHook`) renews it before a request when it is about to expire. Token endpoint
requests use a separate plain client, with none of the agent's credentials.
"""

from __future__ import annotations

import ssl
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx

from rewindtui.base.dirs import default_data_dir
from rewindtui.base.tls import default_context
from rewindtui.client.auth import AuthError, CredentialScope, SecretRef
from rewindtui.client.oauth import (
    CLIENT_CREDENTIALS,
    DEVICE,
    TOKENS_FILE,
    OAuthConfig,
    OAuthSession,
    Prompt,
    TokenStore,
    endpoints_for,
)

FLAG_NAMES = (
    "oauth_client_id",
    "oauth_client_secret_env",
    "oauth_client_secret_file",
    "oauth_flow",
    "oauth_token_url",
    "oauth_device_url",
    "oidc_issuer",
    "oauth_scope",
    "tls_cert",
    "tls_key",
    "tls_ca",
    "tls_key_password_env",
    "tls_key_password_file",
    "grpc_same_host",
)
ENV_PREFIX = "REWINDTUI_"


def add_options(parser: Any) -> None:
    """The OAuth2 / mTLS options (argparse, defaults SUPPRESSed like the other connection options)."""
    import argparse

    s = argparse.SUPPRESS
    g = parser.add_argument_group("OAuth2 and mutual TLS (see docs/auth.md)")
    g.add_argument("--oauth-client-id", default=s, metavar="ID", help="OAuth2 client id (turns OAuth2 on)")
    g.add_argument(
        "--oauth-client-secret-env",
        default=s,
        metavar="VAR",
        help="client secret from this variable (client credentials)",
    )
    g.add_argument(
        "--oauth-client-secret-file",
        default=s,
        metavar="PATH",
        help="client secret from this file (client credentials)",
    )
    g.add_argument(
        "--oauth-flow",
        default=s,
        choices=(CLIENT_CREDENTIALS, DEVICE),
        help="the grant (default: client-credentials with a secret, else device)",
    )
    g.add_argument(
        "--oauth-token-url", default=s, metavar="URL", help="token endpoint (default: OIDC discovery or the card)"
    )
    g.add_argument("--oauth-device-url", default=s, metavar="URL", help="device authorization endpoint")
    g.add_argument("--oidc-issuer", default=s, metavar="URL", help="OIDC issuer to discover the endpoints from")
    g.add_argument("--oauth-scope", default=s, metavar="SCOPES", help="scopes to ask for (space separated)")
    g.add_argument("--tls-cert", default=s, metavar="PATH", help="client certificate (PEM) for mutual TLS")
    g.add_argument("--tls-key", default=s, metavar="PATH", help="its private key (PEM; default: in the cert file)")
    g.add_argument("--tls-ca", default=s, metavar="PATH", help="CA bundle (PEM) to verify the server with")
    g.add_argument(
        "--tls-key-password-env", default=s, metavar="VAR", help="the encrypted key's passphrase from this variable"
    )
    g.add_argument(
        "--tls-key-password-file", default=s, metavar="PATH", help="the encrypted key's passphrase from this file"
    )
    g.add_argument(
        "--grpc-same-host",
        action="store_true",
        default=s,
        help=(
            "also send your credentials and user id to a gRPC port the card names on the host of --url "
            "(default: --url's origin only)"
        ),
    )


class _NoPassphrase(Exception):
    """OpenSSL asked for a passphrase and none was given (instead of its prompt on the terminal)."""


def _no_passphrase() -> str:
    raise _NoPassphrase


@dataclass(frozen=True)
class TLSConfig:
    cert: Path | None = None
    key: Path | None = None
    ca: Path | None = None
    #: where the private key's passphrase is (an encrypted key), never the passphrase itself
    password: SecretRef | None = None

    def context(self) -> ssl.SSLContext:
        for what, path in (("--tls-cert", self.cert), ("--tls-key", self.key), ("--tls-ca", self.ca)):
            if path is not None and not path.is_file():
                raise AuthError(f"TLS: {what} {path}: file not found")
        try:
            context = ssl.create_default_context(cafile=str(self.ca) if self.ca else None)
        except (ssl.SSLError, OSError) as exc:
            raise AuthError(f"TLS: cannot load the CA bundle: {getattr(exc, 'reason', None) or exc}") from None
        if self.cert is None:
            return context
        # the passphrase is read at each load (a file or a variable may change), never kept here
        password: Any = self.password.resolve(where="TLS key passphrase") if self.password else _no_passphrase
        key = self.key or self.cert
        try:
            context.load_cert_chain(str(self.cert), str(self.key) if self.key else None, password=password)
        except _NoPassphrase:
            raise AuthError(
                f"TLS: the private key in {key} is encrypted: give its passphrase with "
                "--tls-key-password-env VAR or --tls-key-password-file PATH"
            ) from None
        except ssl.SSLError as exc:
            reason = getattr(exc, "reason", None) or str(exc)
            if self.password is not None and ("BAD_DECRYPT" in str(reason).upper() or "PEM" in str(reason).upper()):
                raise AuthError(
                    f"TLS: cannot decrypt the private key in {key} with the passphrase from {self.password.describe()} "
                    f"({reason})"
                ) from None
            raise AuthError(f"TLS: cannot load the certificate or key: {reason}") from None
        except OSError as exc:
            raise AuthError(f"TLS: cannot load the certificate or key: {exc}") from None
        return context

    def describe(self) -> str:
        parts = []
        if self.cert:
            parts.append(f"client certificate {self.cert}")
        if self.password:
            parts.append(f"the key's passphrase from {self.password.describe()}")
        if self.ca:
            parts.append(f"CA bundle {self.ca}")
        return "mutual TLS with " + " and ".join(parts) if self.cert else "TLS with " + " and ".join(parts)


@dataclass(frozen=True)
class Flows:
    oauth: OAuthConfig | None = None
    tls: TLSConfig | None = None
    #: credentials may go to a gRPC port of a configured origin's host (``--grpc-same-host``)
    grpc_same_host: bool = False

    def http_client(self, timeout: float) -> httpx.AsyncClient:
        """The agent's HTTP client (the TLS context when one is configured)."""
        verify: Any = self.tls.context() if self.tls else default_context()
        return httpx.AsyncClient(timeout=timeout, follow_redirects=True, verify=verify)

    def token_http(self, timeout: float) -> Callable[[], httpx.AsyncClient]:
        """Plain clients for the token endpoints (no redirects: a secret is posted there)."""
        verify: Any = self.tls.context() if self.tls else default_context()
        return lambda: httpx.AsyncClient(timeout=timeout, follow_redirects=False, verify=verify)

    def describe(self) -> str:
        parts = [x.describe() for x in (self.oauth, self.tls) if x is not None]
        if self.grpc_same_host:
            parts.append("credentials also to gRPC on the same host")
        return "; ".join(parts)


#: The config file's keys: ``[oauth]`` and ``[tls]`` tables (secrets only by variable or file).
FILE_KEYS = {
    "oauth_client_id": ("oauth", "client_id"),
    "oauth_client_secret_env": ("oauth", "client_secret_env"),
    "oauth_client_secret_file": ("oauth", "client_secret_file"),
    "oauth_flow": ("oauth", "flow"),
    "oauth_token_url": ("oauth", "token_url"),
    "oauth_device_url": ("oauth", "device_url"),
    "oidc_issuer": ("oauth", "oidc_issuer"),
    "oauth_scope": ("oauth", "scope"),
    "tls_cert": ("tls", "cert"),
    "tls_key": ("tls", "key"),
    "tls_ca": ("tls", "ca"),
    "tls_key_password_env": ("tls", "key_password_env"),
    "tls_key_password_file": ("tls", "key_password_file"),
}
_PATHS = ("oauth_client_secret_file", "tls_cert", "tls_key", "tls_ca", "tls_key_password_file")


def _file_values(tables: Mapping[str, Any] | None, base: Path | None) -> dict[str, str]:
    """The ``[oauth]`` / ``[tls]`` values of the config file, checked (relative paths: from its folder)."""
    found: dict[str, str] = {}
    for table_name in ("oauth", "tls"):
        table = (tables or {}).get(table_name)
        if table is None:
            continue
        if not isinstance(table, Mapping):
            raise AuthError(f"[{table_name}] in the config file: expected a table")
        known = {key: name for name, (t, key) in FILE_KEYS.items() if t == table_name}
        for key, value in table.items():
            if key not in known:
                hint = (
                    "; secrets are read from a variable or a file (client_secret_env / client_secret_file, "
                    "key_password_env / key_password_file)"
                    if "secret" in key or "pass" in key
                    else ""
                )
                raise AuthError(
                    f"{table_name}.{key} in the config file: unknown setting (known: {', '.join(sorted(known))}){hint}"
                )
            if not isinstance(value, str) or not value.strip():
                raise AuthError(f"{table_name}.{key} in the config file: expected a non-empty string")
            name = known[key]
            text = value.strip()
            if name in _PATHS and base is not None and not Path(text).expanduser().is_absolute():
                text = str(base / text)
            found[name] = text
    return found


def load_flows(
    get: Callable[[str], Any], env: Mapping[str, str], tables: Mapping[str, Any] | None = None, base: Path | None = None
) -> Flows | None:
    """The flows the flags (``get``), the environment or the config file's ``[oauth]`` / ``[tls]``
    tables configure (in that order, per name)."""
    in_file = _file_values(tables, base)

    def value(name: str) -> str | None:
        flag = get(name)
        if flag is not None:
            return str(flag)
        text = env.get(ENV_PREFIX + name.upper(), "").strip()
        return text or in_file.get(name)

    def where(name: str) -> str:
        if get(name) is not None:
            return "--" + name.replace("_", "-")
        if env.get(ENV_PREFIX + name.upper(), "").strip() or name not in in_file:
            return ENV_PREFIX + name.upper()
        table, key = FILE_KEYS[name]
        return f"{table}.{key} in the config file"

    given = {name: value(name) for name in FLAG_NAMES}
    oauth = None
    client_id = given["oauth_client_id"]
    secret_env, secret_file = given["oauth_client_secret_env"], given["oauth_client_secret_file"]
    if secret_env and secret_file:
        raise AuthError(
            f"{where('oauth_client_secret_env')} and {where('oauth_client_secret_file')}: give the secret one way, not "
            "both"
        )
    oauth_given = [n for n in FLAG_NAMES if n.startswith(("oauth", "oidc")) and given[n]]
    if oauth_given and not client_id:
        raise AuthError(f"{where(oauth_given[0])}: also give the OAuth2 client id (--oauth-client-id)")
    if client_id:
        secret = (
            SecretRef(env=secret_env)
            if secret_env
            else (SecretRef(file=Path(secret_file).expanduser()) if secret_file else None)
        )
        flow = given["oauth_flow"] or ""
        if flow and flow not in (CLIENT_CREDENTIALS, DEVICE):
            raise AuthError(f"{where('oauth_flow')}: expected {CLIENT_CREDENTIALS} or {DEVICE}, got {flow!r}")
        if flow == CLIENT_CREDENTIALS and secret is None:
            raise AuthError(
                f"{where('oauth_flow')}: client credentials need a client secret (--oauth-client-secret-env VAR)"
            )
        for name in ("oauth_token_url", "oauth_device_url", "oidc_issuer"):
            url = given[name]
            if url and not url.startswith(("http://", "https://")):
                raise AuthError(f"{where(name)}: expected an http(s) URL, got {url!r}")
        oauth = OAuthConfig(
            client_id=client_id,
            secret=secret,
            flow=flow,
            token_url=given["oauth_token_url"],
            device_url=given["oauth_device_url"],
            issuer=given["oidc_issuer"],
            scope=given["oauth_scope"],
        )
    tls = None
    pass_env, pass_file = given["tls_key_password_env"], given["tls_key_password_file"]
    if pass_env and pass_file:
        raise AuthError(
            f"{where('tls_key_password_env')} and {where('tls_key_password_file')}: give the passphrase one way, not "
            "both"
        )
    if (pass_env or pass_file) and not given["tls_cert"]:
        raise AuthError(
            f"{where('tls_key_password_env' if pass_env else 'tls_key_password_file')}: also give the client "
            "certificate (--tls-cert PATH)"
        )
    if given["tls_cert"] or given["tls_key"] or given["tls_ca"]:
        if given["tls_key"] and not given["tls_cert"]:
            raise AuthError(f"{where('tls_key')}: also give the client certificate (--tls-cert PATH)")
        paths = [given[n] for n in ("tls_cert", "tls_key", "tls_ca")]
        password = (
            SecretRef(env=pass_env)
            if pass_env
            else (SecretRef(file=Path(pass_file).expanduser()) if pass_file else None)
        )
        cert, key, ca = (Path(p).expanduser() if p else None for p in paths)
        tls = TLSConfig(cert, key, ca, password=password)
        tls.context()  # a wrong file is said now, once
    same_host = given["grpc_same_host"]
    grpc_same_host = False
    if same_host:
        text = same_host.strip().lower()
        if text not in ("1", "true", "yes", "on", "0", "false", "no", "off"):
            raise AuthError(f"{where('grpc_same_host')}: expected 1 or 0 (true / false), got {same_host!r}")
        grpc_same_host = text in ("1", "true", "yes", "on")
    if oauth is None and tls is None and not grpc_same_host:
        return None
    return Flows(oauth, tls, grpc_same_host)


def token_store() -> TokenStore:
    return TokenStore(default_data_dir() / TOKENS_FILE)


class BearerHook:
    """An httpx request hook, installed before the :class:`CredentialScope`: on a request to a home
    origin, make sure the scope's ``Authorization`` is a token that is still valid."""

    def __init__(self, session: OAuthSession, scope: CredentialScope) -> None:
        self.session = session
        self.scope = scope

    async def __call__(self, request: httpx.Request) -> None:
        if self.scope.allows(request.url):
            token = await self.session.token()
            self.scope.headers["Authorization"] = f"Bearer {token}"


async def oauth_session(flows: Flows, card: Mapping[str, Any], agent_url: str, timeout: float = 30.0) -> OAuthSession:
    assert flows.oauth is not None
    make_http = flows.token_http(timeout)
    async with make_http() as http:
        endpoints = await endpoints_for(flows.oauth, card, agent_url, http)
    return OAuthSession(flows.oauth, endpoints, token_store(), make_http)


async def attach(
    client: Any, flows: Flows, card: Mapping[str, Any], timeout: float = 30.0, prompt: Prompt | None = None
) -> OAuthSession:
    """Give ``client`` a valid bearer token (cached, refreshed or a client-credentials grant; with
    ``prompt``, a device-code login now, showing it the URL and code) and the hook that renews it.
    AuthError (one line) when there is none to be had."""
    session = await oauth_session(flows, card, client.url, timeout)
    token = await session.token(interactive=prompt is not None, prompt=prompt)
    scope: CredentialScope = client.scope
    scope.headers["Authorization"] = f"Bearer {token}"
    hooks = client.http.event_hooks
    hooks["request"] = [BearerHook(session, scope)] + [
        h for h in hooks.get("request", []) if not isinstance(h, BearerHook)
    ]
    client.http.event_hooks = hooks
    return session


async def connect(client: Any, flows: Flows, timeout: float = 30.0, prompt: Prompt | None = None) -> Any:
    """``client.connect()`` with OAuth2: the token first when the user named its endpoints (a card
    that wants auth can then be read), else after the (public) card names them. ``prompt``: sign
    in with the device code now when no token is cached (the app shows the URL and code)."""
    if flows.oauth is None:
        return await client.connect()
    if flows.oauth.token_url or flows.oauth.issuer:
        await attach(client, flows, {}, timeout, prompt)
        return await client.connect()
    caps = await client.connect()
    await attach(client, flows, caps.card, timeout, prompt)
    return caps
