"""Credentials that stay home.

* **Named auth options** (:class:`AuthOption`): a bearer token, an API key in a header of your
  choice, or HTTP Basic. The secret is never given on the command line or written in a config
  file: it is the name of an environment variable, or a file to read (:class:`SecretRef`).
* **Scoped** (:class:`CredentialScope`): credentials, configured headers and the user id go on
  requests to the origins the user configured (the agent URL, the REST base, the kagent
  controller), and are taken off every other request -- an agent card that names another host
  (its rewind extension's ``api``, an interface URL) or a redirect to one gets none of them. It is
  an httpx *request hook*, so it runs again on every redirect hop.
* **Redacted** (:func:`redact`): every secret we resolved, and every value of a header whose name
  says it is one, is replaced by ``***`` in errors (``ClientError`` redacts its message), in what
  the headless commands print, and in log records.

Pure standard library apart from the httpx request it inspects; no Textual.
"""

from __future__ import annotations

import base64
import logging
import os
import re
import threading
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx

BEARER, API_KEY, BASIC = "bearer", "api-key", "basic"
KINDS = (BEARER, API_KEY, BASIC)
DEFAULT_API_KEY_HEADER = "X-API-Key"
REDACTED = "***"
#: A secret shorter than this is not searched for in text (it would blank out common words).
_MIN_SECRET = 4
#: Header names whose values are secrets whatever they were configured as.
_SENSITIVE_HEADER = re.compile(r"authorization|cookie|api[-_]?key|token|secret|password|session", re.I)


class AuthError(ValueError):
    """A credential that cannot be used: ``str()`` says which setting and why, never the secret."""


# -- redaction -----------------------------------------------------------------------------------
_lock = threading.Lock()
_secrets: set[str] = set()
_pattern: re.Pattern[str] | None = None
_log_hook_installed = False


def register_secret(value: str | None) -> None:
    """Redact ``value`` from now on wherever :func:`redact` runs (errors, output, logs)."""
    global _pattern
    if not value or len(value) < _MIN_SECRET:
        return
    with _lock:
        if value in _secrets:
            return
        _secrets.add(value)
        ordered = sorted(_secrets, key=len, reverse=True)  # longest first: no half-redacted secret
        _pattern = re.compile("|".join(re.escape(s) for s in ordered))
    _install_log_redaction()


def redact(text: str) -> str:
    """``text`` with every registered secret replaced by ``***``."""
    pattern = _pattern
    if pattern is None or not isinstance(text, str):
        return text
    return pattern.sub(REDACTED, text)


def redact_value(value: Any) -> Any:
    """A JSON-able value with secrets redacted in every string inside it."""
    if isinstance(value, str):
        return redact(value)
    if isinstance(value, dict):
        return {redact(str(k)): redact_value(v) for k, v in value.items()}
    if isinstance(value, list):
        return [redact_value(v) for v in value]
    return value


def is_sensitive_header(name: str) -> bool:
    return bool(_SENSITIVE_HEADER.search(name))


def _install_log_redaction() -> None:
    """Every log record's message is redacted once it is made (whatever logger, whatever handler)."""
    global _log_hook_installed
    with _lock:
        if _log_hook_installed:
            return
        _log_hook_installed = True
    previous = logging.getLogRecordFactory()

    def factory(*args: Any, **kwargs: Any) -> logging.LogRecord:
        record = previous(*args, **kwargs)
        try:
            message = record.getMessage()
        except Exception:  # a record whose args don't format: leave it to the handler
            return record
        cleaned = redact(message)
        if cleaned != message:
            record.msg, record.args = cleaned, None
        return record

    logging.setLogRecordFactory(factory)


# -- secrets and auth options --------------------------------------------------------------------
@dataclass(frozen=True)
class SecretRef:
    """Where a secret is: an environment variable's name, or a file (its first line)."""

    env: str | None = None
    file: Path | None = None

    def describe(self) -> str:
        return f"${self.env}" if self.env else f"file {self.file}"

    def resolve(self, environ: Mapping[str, str] | None = None, where: str = "") -> str:
        """The secret's value (registered for redaction). AuthError if it is missing or empty."""
        prefix = f"{where}: " if where else ""
        if self.env:
            value = (os.environ if environ is None else environ).get(self.env)
            if value is None:
                raise AuthError(f"{prefix}the environment variable {self.env} is not set")
            value = value.strip()
            if not value:
                raise AuthError(f"{prefix}the environment variable {self.env} is empty")
        elif self.file is not None:
            try:
                text = self.file.expanduser().read_text(encoding="utf-8")
            except FileNotFoundError:
                raise AuthError(f"{prefix}secret file {self.file} not found") from None
            except (OSError, UnicodeDecodeError) as exc:
                raise AuthError(
                    f"{prefix}cannot read secret file {self.file}: {getattr(exc, 'strerror', None) or exc}"
                ) from None
            lines = text.splitlines()
            value = lines[0].strip() if lines else ""
            if not value:
                raise AuthError(f"{prefix}secret file {self.file} is empty")
        else:
            raise AuthError(f"{prefix}no secret given (name an environment variable or a file)")
        if "\r" in value or "\n" in value:
            raise AuthError(f"{prefix}the secret in {self.describe()} contains a line break")
        register_secret(value)
        return value


@dataclass(frozen=True)
class AuthOption:
    """One named way to authenticate; the secret stays where :attr:`secret` points."""

    kind: str  # bearer | api-key | basic
    secret: SecretRef
    header: str = DEFAULT_API_KEY_HEADER  # api-key: the header that carries it
    username: str | None = None  # basic
    where: str = ""  # the setting that gave it, for errors

    def describe(self) -> str:
        """What is configured, in words, without the secret."""
        if self.kind == BEARER:
            return f"bearer token from {self.secret.describe()}"
        if self.kind == API_KEY:
            return f"API key in header {self.header} from {self.secret.describe()}"
        return f"HTTP Basic as {self.username} (password from {self.secret.describe()})"

    def headers(self, environ: Mapping[str, str] | None = None) -> dict[str, str]:
        """The request headers this option adds (the secret resolved now)."""
        secret = self.secret.resolve(environ, self.where)
        if self.kind == BEARER:
            return {"Authorization": f"Bearer {secret}"}
        if self.kind == API_KEY:
            return {self.header: secret}
        token = base64.b64encode(f"{self.username}:{secret}".encode()).decode("ascii")
        register_secret(token)
        return {"Authorization": f"Basic {token}"}

    def record(self) -> dict[str, Any]:
        """A JSON-able description (no secret)."""
        out: dict[str, Any] = {"type": self.kind}
        if self.kind == API_KEY:
            out["header"] = self.header
        if self.kind == BASIC:
            out["username"] = self.username
        out["secret_from"] = self.secret.describe()
        return out


# -- origins -------------------------------------------------------------------------------------
Origin = tuple[str, str, int | None]


def origin_of(url: str | httpx.URL) -> Origin:
    """(scheme, host, port) with the scheme's default port filled in."""
    u = url if isinstance(url, httpx.URL) else httpx.URL(url)
    return (u.scheme, u.host, u.port or {"http": 80, "https": 443}.get(u.scheme))


def origin_text(url: str | httpx.URL) -> str:
    scheme, host, port = origin_of(url)
    return f"{scheme}://{host}" + (f":{port}" if port else "")


def same_origin(a: str | httpx.URL, b: str | httpx.URL) -> bool:
    return origin_of(a) == origin_of(b)


@dataclass
class CredentialScope:
    """An httpx request hook: ``headers`` on requests to ``origins``; on any other request those
    headers (and ``Authorization``) are removed, so nothing configured leaves home, redirects
    included. Register with ``client.event_hooks["request"].append(scope)`` (see :meth:`install`)."""

    origins: set[Origin] = field(default_factory=set)
    headers: dict[str, str] = field(default_factory=dict)
    #: the user allowed (``REWINDTUI_GRPC_SAME_HOST``) a card's gRPC endpoint on the host of a
    #: configured origin, another port, to get these headers (see ``transports.grpc.credentials_allowed``)
    grpc_same_host: bool = False

    @classmethod
    def for_urls(cls, urls: Iterable[str | None], headers: Mapping[str, str]) -> CredentialScope:
        scope = cls(headers=dict(headers))
        for url in urls:
            if url:
                scope.origins.add(origin_of(url))
        for name, value in headers.items():
            if is_sensitive_header(name):
                register_secret(value)
                if " " in value:  # "Bearer abc": the token alone too
                    register_secret(value.split(" ", 1)[1].strip())
        return scope

    def add(self, url: str, headers: Mapping[str, str]) -> None:
        """More headers for one more origin (e.g. the embedded server's token)."""
        self.origins.add(origin_of(url))
        for name, value in headers.items():
            register_secret(value.split(" ", 1)[1].strip() if " " in value else value)
            self.headers[name] = value

    def allows(self, url: str | httpx.URL) -> bool:
        return origin_of(url) in self.origins

    async def __call__(self, request: httpx.Request) -> None:
        self.apply(request)

    def apply(self, request: httpx.Request) -> None:
        if self.allows(request.url):
            for name, value in self.headers.items():
                request.headers[name] = value
            return
        for name in [*self.headers, "Authorization"]:
            if name in request.headers:
                del request.headers[name]

    def install(self, http: httpx.AsyncClient) -> None:
        hooks = http.event_hooks
        hooks["request"] = [h for h in hooks.get("request", []) if not isinstance(h, CredentialScope)] + [self]
        http.event_hooks = hooks
