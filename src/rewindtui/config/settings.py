"""Settings for the app and the headless commands, from flags > environment > a TOML file.

The file is ``config.toml`` in the user's config directory (platformdirs, app name ``rewindtui``),
or the path in ``--config`` / ``REWINDTUI_CONFIG``. Every key is optional::

    # which server: an A2A agent endpoint (+ its REST base) ...
    url = "http://localhost:8083/api/a2a/kagent/my-agent/"
    api = "http://localhost:8083/api"
    # ... or a kagent controller and an agent on it (url and api are derived from them)
    # kagent = "http://localhost:8083"
    # agent = "kagent/my-agent"
    # with neither, rewindtui starts its embedded server on data_dir with model
    user_id = "alice"
    dialect = "1.0"          # "0.3" | "1.0"; default: from the agent card
    theme = "textual-dark"
    data_dir = "~/rewindtui-data"   # relative paths are relative to this file
    model = "demo"           # or a LiteLLM id, e.g. "openai/gpt-4o-mini" (pip install 'rewindtui[models]')
    # model_base_url = "http://localhost:8000/v1"   an OpenAI-compatible endpoint
    # model_timeout = 300    seconds one model request may take
    # stall_timeout = 120    seconds a turn may go without news from the model
    # keep_server = 900      seconds the embedded server stays up after the last app quits
    #                        (the next start attaches to it at once; `rewindtui serve --stop` ends it)
    timeout = 30             # seconds to wait for a server (connect / request)

    binding = "auto"         # auto (the card's preferred one) | jsonrpc | http+json | grpc
    push = false             # ask for a push notification when each turn ends (rewindtui.client.push)

    [headers]                # sent to the configured server's origin only
    X-Tenant = "team-a"

    [auth]                   # one of: a bearer token, an API key, HTTP Basic; the secret is the
    bearer_env = "MY_TOKEN"  # name of an environment variable (*_env) or a file (*_file)
    # api_key_env = "MY_KEY"   with   api_key_header = "X-API-Key"
    # basic_user = "alice"     with   basic_password_env = "MY_PASSWORD"

    [rewind]                 # auto | a2a | rest | off
    default = "auto"
    "http://localhost:8083" = "off"   # keyed by server URL; the longest matching prefix wins

    [keymap]                 # binding id -> keys
    rewind = "r"
    fork = "ctrl+f"

Environment: ``REWINDTUI_URL``, ``REWINDTUI_API``, ``REWINDTUI_KAGENT``, ``REWINDTUI_AGENT``,
``REWINDTUI_USER_ID``, ``REWINDTUI_HEADERS`` (a JSON object, or ``K: V; K2: V2``),
``REWINDTUI_REWIND``, ``REWINDTUI_DIALECT``, ``REWINDTUI_THEME``, ``REWINDTUI_DATA_DIR``,
``REWINDTUI_MODEL``, ``REWINDTUI_CONFIG``, ``REWINDTUI_BINDING``, ``REWINDTUI_PUSH``, and the auth options as
``REWINDTUI_BEARER_ENV`` / ``_FILE``, ``REWINDTUI_API_KEY_ENV`` / ``_FILE`` (+ ``_HEADER``),
``REWINDTUI_BASIC_USER`` + ``REWINDTUI_BASIC_PASSWORD_ENV`` / ``_FILE``; ``REWINDTUI_DEBUG`` (tracebacks instead of one-line
errors, :func:`debug_enabled`).

Precedence is per setting, with two rules: the server (``url``/``api`` or ``kagent``/``agent``)
comes as a whole from the highest source that names one, so a flag ``--url`` is never paired with
the file's ``api`` for another server (an ``api`` from the same or a higher source is); headers are merged (a higher source replaces a header of
the same name). A rewind mode given by flag or environment applies to whatever server is used;
the file's ``[rewind]`` table is consulted otherwise. The auth option, like the server, comes
whole from the highest source that names one; its secret is read when the settings are loaded
(a missing variable or file is a SettingsError) and is never stored by rewindtui.

Any problem gives :class:`SettingsError`, whose ``str()`` is one line naming where the bad value
came from (flag, variable, or file and key) and why.
"""

from __future__ import annotations

import json
import os
import re
import tomllib
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from rewindtui.a2a import kagent as kagent_api
from rewindtui.a2a.card import GRPC, HTTP_JSON, JSONRPC, norm_binding
from rewindtui.a2a.dialect import Dialect
from rewindtui.base.dirs import default_config_path, default_data_dir
from rewindtui.client.a2a_client import REWIND_MODES, ServerConfig
from rewindtui.client.auth import API_KEY, BASIC, BEARER, DEFAULT_API_KEY_HEADER, AuthError, AuthOption, SecretRef
from rewindtui.client.transport import segment

ENV_PREFIX = "REWINDTUI_"
#: Set (to anything but 0/false/no/off) to get Python tracebacks instead of one-line errors.
DEBUG_VARIABLE = ENV_PREFIX + "DEBUG"
#: The client's local store of the sessions it used, in the data dir.
LOCAL_STORE_FILE = "sessions.db"

_HEADER_NAME = re.compile(r"^[!#$%&'*+.^_`|~0-9A-Za-z-]+$")
_AGENT = re.compile(r"^[^/\s]+/[^/\s]+$")
_FILE_KEYS = {
    "oauth",  # [oauth] and [tls]: read by rewindtui.client.auth_flows
    "tls",
    "url",
    "api",
    "kagent",
    "agent",
    "user_id",
    "headers",
    "rewind",
    "dialect",
    "keymap",
    "theme",
    "data_dir",
    "model",
    "model_base_url",
    "model_timeout",
    "stall_timeout",
    "keep_server",
    "timeout",
    "binding",
    "push",
    "auth",
    "kagent_version",
    "kagent_checkpoints",
}
#: The auth settings (file keys in ``[auth]``; flags ``--bearer-env`` ...; ``REWINDTUI_BEARER_ENV`` ...).
AUTH_KEYS = (
    "bearer_env",
    "bearer_file",
    "api_key_env",
    "api_key_file",
    "api_key_header",
    "basic_user",
    "basic_password_env",
    "basic_password_file",
)
_AUTH_KIND = {
    "bearer_env": BEARER,
    "bearer_file": BEARER,
    "api_key_env": API_KEY,
    "api_key_file": API_KEY,
    "api_key_header": API_KEY,
    "basic_user": BASIC,
    "basic_password_env": BASIC,
    "basic_password_file": BASIC,
}
#: Keys that would put a secret in plain text: refused, with where to put it instead.
_PLAIN_SECRETS = ("bearer", "token", "api_key", "password", "basic_password", "secret")


class SettingsError(Exception):
    """A bad flag, variable or config file; ``str()`` is one line saying where and why."""


def debug_enabled(env: Mapping[str, str] | None = None) -> bool:
    """``REWINDTUI_DEBUG`` is set: show tracebacks (read before the rest of the settings, so that
    even a failure to load them can be debugged)."""
    value = (os.environ if env is None else env).get(DEBUG_VARIABLE, "")
    return value.strip().lower() not in ("", "0", "false", "no", "off")


@dataclass
class Settings:
    url: str | None = None  # the A2A agent endpoint; None: start the embedded server
    api: str | None = None  # kagent-style REST base (…/api); None: from the agent card
    kagent: str | None = None  # controller base the url/api were derived from (for display)
    agent: str | None = None  # "NAMESPACE/NAME" on the kagent controller
    session: str | None = None  # session to open
    user_id: str | None = None
    headers: dict[str, str] = field(default_factory=dict)
    rewind: str | None = None  # mode forced by flag/environment, for any server
    rewind_default: str = "auto"  # the file's [rewind] default
    rewind_servers: dict[str, str] = field(default_factory=dict)  # server URL (prefix) -> mode
    dialect: Dialect | None = None  # None: from the agent card
    keymap: dict[str, str] = field(default_factory=dict)  # binding id -> keys
    theme: str | None = None
    data_dir: Path | None = None  # embedded server data; None: the default
    model: str | None = None  # embedded server model; None: the offline demo model
    model_base_url: str | None = None  # the embedded server's OpenAI-compatible model endpoint
    model_timeout: float | None = None  # seconds one model request may take; None: the server's default
    stall_timeout: float | None = None  # seconds a turn may go without news; None: the server's default
    keep_server: float | None = None  # seconds the embedded server outlives its last app; None: it stops with it
    timeout: float = 30.0
    config_file: Path | None = None  # the file that was read, if any
    debug: bool = False  # REWINDTUI_DEBUG: tracebacks instead of one-line errors
    binding: str | None = None  # JSONRPC | HTTP+JSON; None: the card's preferred one
    auth: AuthOption | None = None  # the named auth option (its secret is in credentials)
    credentials: dict[str, str] = field(default_factory=dict, repr=False)  # resolved auth headers
    push: bool = False  # REWINDTUI_PUSH / the file's push: a push notification for every turn
    flows: Any = None  # OAuth2 / mutual TLS (rewindtui.client.auth_flows.Flows), None: neither
    kagent_version: str = "auto"  # "auto": kagent 1.0 when the controller answers its gRPC API; "0.10" | "1"
    kagent_checkpoints: bool = True  # kagent 1.0: a checkpoint after each finished turn (rewind forks from them)

    @property
    def embedded(self) -> bool:
        """True when no server is named: the embedded server is to be started."""
        return self.url is None

    def resolved_data_dir(self) -> Path:
        return self.data_dir if self.data_dir is not None else default_data_dir()

    def rewind_mode_for(self, url: str | None) -> str:
        """The rewind mode for a server: forced > the longest matching ``[rewind]`` key > default."""
        if self.rewind:
            return self.rewind
        if url:
            target = _norm_url(url)
            best: tuple[int, str] | None = None
            for key, mode in self.rewind_servers.items():
                prefix = _norm_url(key)
                if target == prefix or target.startswith(prefix + "/"):
                    if best is None or len(prefix) > best[0]:
                        best = (len(prefix), mode)
            if best is not None:
                return best[1]
        return self.rewind_default

    def with_server(self, url: str, api: str | None) -> Settings:
        """These settings pointed at a server (e.g. the embedded one once it is running)."""
        return replace(self, url=url, api=api)

    def retargeted(self, *, url: str | None = None, kagent: str | None = None, agent: str | None = None) -> Settings:
        """These settings pointed at another agent (a URL, or an agent on a kagent controller),
        everything else kept: the app's connect screen corrects a mistyped address with it.
        SettingsError (one line) for a value that is not one."""
        if kagent is not None or agent is not None:
            server = _kagent_server(
                _check_url(kagent, "kagent controller"), _check_agent(agent, "agent"), api=None
            )
            return replace(self, **server)
        return replace(self, url=_check_url(url, "agent URL"), api=None, kagent=None, agent=None)

    def server_config(self, *, store_key: str | None = None) -> ServerConfig:
        """The client's configuration. ``store_key`` names the server in the local sessions store
        (default: its URL; the embedded server, whose port changes, is named by its data dir)."""
        if self.url is None:
            raise SettingsError("no server URL (give --url, or start the embedded server first)")
        fallbacks: tuple[str, ...] = ()
        if self.kagent and self.agent:
            namespace, name = (segment(x) for x in self.agent.split("/"))
            paths = [self.kagent + p.format(namespace=namespace, name=name) for p in kagent_api.A2A_PATHS]
            fallbacks = tuple(p for p in paths if p != self.url)
        return ServerConfig(
            url=self.url,
            api=self.api,
            dialect=self.dialect,
            rewind=self.rewind_mode_for(self.url),
            user_id=self.user_id,
            headers=dict(self.headers),
            timeout=self.timeout,
            agent_ref=self.agent if self.kagent else None,
            fallback_urls=fallbacks,
            local_store=self.resolved_data_dir() / LOCAL_STORE_FILE,
            local_store_key=store_key,
            binding=self.binding,
            auth=self.auth,
            credentials=dict(self.credentials),
            home_urls=(self.kagent,) if self.kagent else (),
        )

    def describe_server(self) -> str:
        if self.url is None:
            return "the embedded server"
        if self.kagent and self.agent:
            return f"agent {self.agent} on {self.kagent}"
        return self.url


# -- parsing helpers ---------------------------------------------------------------------------
def _norm_url(url: str) -> str:
    return url.strip().rstrip("/")


def _check_url(value: Any, where: str) -> str:
    if not isinstance(value, str) or not value.strip():
        raise SettingsError(f"{where}: expected a URL, got {value!r}")
    text = value.strip()
    if not re.match(r"^https?://[^/\s]+", text):
        raise SettingsError(f"{where}: not an http(s) URL: {text!r}")
    return text


def _check_str(value: Any, where: str) -> str:
    if not isinstance(value, str) or not value.strip():
        raise SettingsError(f"{where}: expected a non-empty string, got {value!r}")
    return value.strip()


def _check_seconds(value: Any, where: str) -> float:
    try:
        seconds = float(value) if not isinstance(value, bool) else 0.0
    except (TypeError, ValueError):
        seconds = 0.0
    if not seconds > 0:
        raise SettingsError(f"{where}: expected a positive number of seconds, got {value!r}")
    return seconds


def _check_mode(value: Any, where: str) -> str:
    mode = value.strip().lower() if isinstance(value, str) else value
    if mode not in REWIND_MODES:
        raise SettingsError(f"{where}: rewind mode must be one of {', '.join(REWIND_MODES)}, got {value!r}")
    return mode


def _check_dialect(value: Any, where: str) -> Dialect:
    dialect = Dialect.parse(str(value)) if isinstance(value, (str, int, float)) else None
    if dialect is None:
        raise SettingsError(f"{where}: dialect must be 0.3 or 1.0, got {value!r}")
    return dialect


def _check_binding(value: Any, where: str) -> str:
    binding = norm_binding(value) if isinstance(value, str) else ""
    if isinstance(value, str) and value.strip().lower() == "auto":
        return "auto"
    if binding not in (JSONRPC, HTTP_JSON, GRPC):
        raise SettingsError(f"{where}: binding must be auto, jsonrpc, http+json or grpc, got {value!r}")
    return binding


def _check_push(value: Any, where: str) -> bool:
    text = str(value).strip().lower() if isinstance(value, (str, bool)) else ""
    if text in ("1", "true", "yes", "on"):
        return True
    if text in ("0", "false", "no", "off"):
        return False
    raise SettingsError(f"{where}: push must be true or false, got {value!r}")
def _check_kagent_version(value: Any, where: str) -> str:
    text = str(value).strip().lower()
    text = {"1.0": "1", "0.10.x": "0.10", "0": "0.10"}.get(text, text)
    if text not in ("auto", "0.10", "1"):
        raise SettingsError(f"{where}: kagent_version must be auto, 0.10 or 1, got {value!r}")
    return text


def _check_onoff(value: Any, where: str) -> bool:
    if isinstance(value, bool):
        return value
    text = str(value).strip().lower()
    if text not in ("true", "false", "on", "off", "1", "0", "yes", "no"):
        raise SettingsError(f"{where}: expected true or false, got {value!r}")
    return text in ("true", "on", "1", "yes")


def _check_agent(value: Any, where: str) -> str:
    text = _check_str(value, where)
    if not _AGENT.match(text):
        raise SettingsError(f"{where}: expected NAMESPACE/NAME, got {text!r}")
    return text


def _check_header(name: Any, value: Any, where: str) -> tuple[str, str]:
    if not isinstance(name, str) or not _HEADER_NAME.match(name.strip()):
        raise SettingsError(f"{where}: not a valid header name: {name!r}")
    if not isinstance(value, (str, int, float)) or isinstance(value, bool):
        raise SettingsError(f"{where}: header {name.strip()} must be a string, got {value!r}")
    text = str(value).strip()
    if "\r" in text or "\n" in text:
        raise SettingsError(f"{where}: header {name.strip()} contains a line break")
    return name.strip(), text


def parse_header(text: str, where: str = "--header") -> tuple[str, str]:
    """``"Name: value"`` (or ``Name=value``) -> (name, value)."""
    sep = text.find(":")
    if sep <= 0:
        sep = text.find("=")
    if sep <= 0:
        raise SettingsError(f"{where}: expected NAME: VALUE, got {text!r}")
    return _check_header(text[:sep], text[sep + 1 :], where)


def parse_headers(text: str, where: str = ENV_PREFIX + "HEADERS") -> dict[str, str]:
    """A JSON object, or ``K: V; K2: V2`` (``;`` or newline separated)."""
    text = text.strip()
    if not text:
        return {}
    if text.startswith("{"):
        try:
            data = json.loads(text)
        except ValueError as exc:
            raise SettingsError(f"{where}: not valid JSON: {exc}") from None
        if not isinstance(data, dict):
            raise SettingsError(f"{where}: expected a JSON object of headers")
        return dict(_check_header(k, v, where) for k, v in data.items())
    out: dict[str, str] = {}
    for piece in re.split(r"[;\n]", text):
        if piece.strip():
            name, value = parse_header(piece.strip(), where)
            out[name] = value
    return out


def _merge_headers(into: dict[str, str], new: Mapping[str, str]) -> None:
    """Add headers, a new one replacing any of the same name (case-insensitively)."""
    for name, value in new.items():
        for old in [k for k in into if k.lower() == name.lower()]:
            del into[old]
        into[name] = value


def _path(value: Any, where: str, base: Path | None = None) -> Path:
    path = Path(_check_str(value, where)).expanduser()
    if base is not None and not path.is_absolute():
        path = base / path
    return path


# -- sources -----------------------------------------------------------------------------------
@dataclass
class _Layer:
    """The settings one source gives, already checked; absent keys were not given."""

    name: str  # "flags" | "environment" | the file path
    values: dict[str, Any] = field(default_factory=dict)
    where: dict[str, str] = field(default_factory=dict)  # key -> how to name it in an error

    def set(self, key: str, value: Any, where: str) -> None:
        self.values[key] = value
        self.where[key] = where


def _get(flags: Any, name: str) -> Any:
    if flags is None:
        return None
    if isinstance(flags, Mapping):
        return flags.get(name)
    return getattr(flags, name, None)


FLAG, ENV, FILE = "flag", "env", "file"
_ALL = frozenset({FLAG, ENV, FILE})
#: The plain settings: each one's check, and the sources that may give it. (``data_dir``,
#: ``headers``, ``timeout``, the file's ``[rewind]`` and ``[keymap]`` tables are read apart.)
_CHECKS: dict[str, tuple[Callable[[Any, str], Any], frozenset[str]]] = {
    "url": (_check_url, _ALL),
    "api": (_check_url, _ALL),
    "kagent": (_check_url, _ALL),
    "agent": (_check_agent, _ALL),
    "session": (_check_str, frozenset({FLAG})),
    "user_id": (_check_str, _ALL),
    "rewind": (_check_mode, frozenset({FLAG, ENV})),  # the file's rewind is a table, read apart
    "dialect": (_check_dialect, _ALL),
    "theme": (_check_str, _ALL),
    "model": (_check_str, _ALL),
    "model_base_url": (_check_url, _ALL),
    "model_timeout": (_check_seconds, _ALL),
    "stall_timeout": (_check_seconds, _ALL),
    "keep_server": (_check_seconds, _ALL),
    "binding": (_check_binding, _ALL),
    "push": (_check_push, frozenset({ENV, FILE})),
    "kagent_version": (_check_kagent_version, _ALL),
    "kagent_checkpoints": (_check_onoff, _ALL),
}


def _auth_option(get: Callable[[str], Any], where: Callable[[str], str], base: Path | None = None) -> AuthOption | None:
    """The auth option one source names (None: none), checked: one kind, its secret from one place."""
    given = {key: get(key) for key in AUTH_KEYS if get(key) is not None}
    if not given:
        return None
    for key, value in given.items():
        _check_str(value, where(key))
    kinds = sorted({_AUTH_KIND[k] for k in given})
    if len(kinds) > 1:
        raise SettingsError(
            f"{', '.join(where(k) for k in given)}: give one auth option (a bearer token, an API key or HTTP Basic), not several"
        )
    kind = kinds[0]
    prefix = {BEARER: "bearer", API_KEY: "api_key", BASIC: "basic_password"}[kind]
    env, file = given.get(prefix + "_env"), given.get(prefix + "_file")
    if env and file:
        raise SettingsError(f"{where(prefix + '_env')} and {where(prefix + '_file')}: give the secret one way, not both")
    if not env and not file:
        raise SettingsError(f"{where(next(iter(given)))}: also give where its secret is ({where(prefix + '_env')} VAR or {where(prefix + '_file')} PATH)")
    if env and not re.match(r"^[A-Za-z_][A-Za-z0-9_]*$", env.strip()):
        raise SettingsError(f"{where(prefix + '_env')}: expected the name of an environment variable, got {env!r}")
    secret = SecretRef(env=env.strip()) if env else SecretRef(file=_path(file, where(prefix + "_file"), base))
    username = given.get("basic_user")
    if kind == BASIC and not username:
        raise SettingsError(f"{where(prefix + ('_env' if env else '_file'))}: HTTP Basic needs a user name too ({where('basic_user')})")
    header = given.get("api_key_header") or DEFAULT_API_KEY_HEADER
    if kind == API_KEY:
        header = _check_header(header, "x", where("api_key_header"))[0]
    return AuthOption(
        kind,
        secret,
        header=header,
        username=username.strip() if username else None,
        where=where(prefix + ("_env" if env else "_file")),
    )


def _checked(source: str, get: Callable[[str], Any], where: Callable[[str], str], layer: _Layer) -> None:
    """Check every plain setting ``source`` may give and ``get`` finds, into ``layer``."""
    for key, (check, sources) in _CHECKS.items():
        if source in sources:
            value = get(key)
            if value is not None:
                layer.set(key, check(value, where(key)), where(key))


def _flag_layer(flags: Any) -> _Layer:
    layer = _Layer("flags")
    _checked(FLAG, lambda key: _get(flags, key), lambda key: "--" + key.replace("_", "-"), layer)
    data_dir = _get(flags, "data_dir")
    if data_dir is not None:
        layer.set("data_dir", _path(data_dir, "--data-dir").absolute(), "--data-dir")
    headers: dict[str, str] = {}
    for text in _get(flags, "header") or ():
        _merge_headers(headers, dict([parse_header(text)]))
    if headers:
        layer.set("headers", headers, "--header")
    auth = _auth_option(lambda key: _get(flags, key), lambda key: "--" + key.replace("_", "-"))
    if auth is not None:
        layer.set("auth", auth, auth.where)
    return layer


def _env_layer(env: Mapping[str, str]) -> _Layer:
    layer = _Layer("environment")

    def get(key: str) -> str | None:
        value = env.get(ENV_PREFIX + key.upper())
        return value if value is not None and value.strip() else None

    _checked(ENV, get, lambda key: ENV_PREFIX + key.upper(), layer)
    name = ENV_PREFIX + "DATA_DIR"
    if env.get(name, "").strip():
        layer.set("data_dir", _path(env[name], name).absolute(), name)
    name = ENV_PREFIX + "HEADERS"
    if env.get(name, "").strip():
        layer.set("headers", parse_headers(env[name], name), name)
    auth = _auth_option(get, lambda key: ENV_PREFIX + key.upper())
    if auth is not None:
        layer.set("auth", auth, auth.where)
    return layer


def _file_layer(path: Path, explicit: bool) -> _Layer:
    layer = _Layer(str(path))
    try:
        with open(path, "rb") as fh:
            data = tomllib.load(fh)
    except FileNotFoundError:
        if explicit:
            raise SettingsError(f"config file {path} not found") from None
        return layer
    except tomllib.TOMLDecodeError as exc:
        raise SettingsError(f"{path}: not valid TOML: {exc}") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise SettingsError(f"{path}: cannot read: {getattr(exc, 'strerror', None) or exc}") from None

    def where(key: str) -> str:
        return f"{path}: {key}"

    unknown = sorted(set(data) - _FILE_KEYS)
    if unknown:
        raise SettingsError(f"{path}: unknown setting {unknown[0]!r} (known: {', '.join(sorted(_FILE_KEYS))})")
    _checked(FILE, data.get, where, layer)
    if "data_dir" in data:
        layer.set("data_dir", _path(data["data_dir"], where("data_dir"), base=path.parent), where("data_dir"))
    if "timeout" in data:
        timeout = data["timeout"]
        if isinstance(timeout, bool) or not isinstance(timeout, (int, float)) or timeout <= 0:
            raise SettingsError(f"{where('timeout')}: expected a positive number of seconds, got {timeout!r}")
        layer.set("timeout", float(timeout), where("timeout"))
    if "oauth" in data or "tls" in data:
        layer.set("flow_tables", {k: data[k] for k in ("oauth", "tls") if k in data}, str(path))
    if "headers" in data:
        headers = data["headers"]
        if not isinstance(headers, dict):
            raise SettingsError(f"{where('headers')}: expected a table of NAME = VALUE")
        layer.set("headers", dict(_check_header(k, v, where("headers")) for k, v in headers.items()), where("headers"))
    if "auth" in data:
        table = data["auth"]
        if not isinstance(table, dict):
            raise SettingsError(f"{where('auth')}: expected a table ([auth] with bearer_env = \"VAR\" ...)")
        for key in table:
            if key in _PLAIN_SECRETS:
                raise SettingsError(
                    f"{where('auth.' + key)}: rewindtui does not read secrets from its config file; "
                    f"name an environment variable ({key.split('_')[0]}_env = \"VAR\") or a file (..._file = \"PATH\")"
                )
            if key not in AUTH_KEYS:
                raise SettingsError(f"{where('auth.' + key)}: unknown auth setting (known: {', '.join(AUTH_KEYS)})")
        auth = _auth_option(table.get, lambda key: where("auth." + key), base=path.parent)
        if auth is not None:
            layer.set("auth", auth, auth.where)
    if "rewind" in data:
        rewind = data["rewind"]
        if isinstance(rewind, str):
            layer.set("rewind_default", _check_mode(rewind, where("rewind")), where("rewind"))
        elif isinstance(rewind, dict):
            servers: dict[str, str] = {}
            for key, mode in rewind.items():
                w = where(f"rewind.{key}")
                if key == "default":
                    layer.set("rewind_default", _check_mode(mode, w), w)
                else:
                    servers[_check_url(key, w)] = _check_mode(mode, w)
            layer.set("rewind_servers", servers, where("rewind"))
        else:
            raise SettingsError(f"{where('rewind')}: expected a mode or a table of server URL = mode")
    if "keymap" in data:
        keymap = data["keymap"]
        if not isinstance(keymap, dict):
            raise SettingsError(f"{where('keymap')}: expected a table of binding id = keys")
        out: dict[str, str] = {}
        for binding, keys in keymap.items():
            if isinstance(keys, list) and keys and all(isinstance(k, str) and k.strip() for k in keys):
                out[binding] = ",".join(k.strip() for k in keys)
            elif isinstance(keys, str) and keys.strip():
                out[binding] = keys.strip()
            else:
                raise SettingsError(f"{where('keymap.' + binding)}: expected keys like \"ctrl+r\", got {keys!r}")
        layer.set("keymap", out, where("keymap"))
    return layer


def _server(layers: list[_Layer]) -> dict[str, Any]:
    """url/api/kagent/agent as a whole from the highest layer naming a server."""

    def rank(*keys: str) -> int | None:
        for i, layer in enumerate(layers):
            if any(k in layer.values for k in keys):
                return i
        return None

    def first(key: str, upto: int | None = None) -> tuple[Any, str | None]:
        for i, layer in enumerate(layers):
            if upto is not None and i > upto:
                break
            if key in layer.values:
                return layer.values[key], layer.where[key]
        return None, None

    url_rank = rank("url")
    kagent_rank = rank("kagent", "agent")
    if url_rank is None and kagent_rank is None:
        api, _ = first("api")
        return {"api": api}
    if url_rank is not None and url_rank == kagent_rank:
        layer = layers[url_rank]
        other = "kagent" if "kagent" in layer.values else "agent"
        raise SettingsError(f"{layer.where['url']} and {layer.where[other]}: give either a URL or a kagent agent, not both")
    if kagent_rank is not None and (url_rank is None or kagent_rank < url_rank):
        kagent, kagent_where = first("kagent")
        agent, agent_where = first("agent")
        if kagent is None:
            raise SettingsError(f"{agent_where}: needs a kagent controller too (--kagent http://HOST:8083)")
        if agent is None:
            raise SettingsError(f"{kagent_where}: needs an agent too (--agent NAMESPACE/NAME)")
        api, _ = first("api", upto=kagent_rank)
        return _kagent_server(kagent, agent, api)
    url, _ = first("url")
    api, _ = first("api", upto=url_rank)
    return {"url": url, "api": api}


def _kagent_server(kagent: str, agent: str, api: str | None) -> dict[str, Any]:
    """url/api/kagent/agent for an agent (``NAMESPACE/NAME``) on a kagent controller."""
    base = _norm_url(kagent)
    if base.endswith("/api"):
        base = base[: -len("/api")]
    namespace, name = (segment(x) for x in agent.split("/"))  # escaped: "../x" stays in its place
    return {
        "url": f"{base}/api/a2a/{namespace}/{name}/",
        "api": api or f"{base}/api",
        "kagent": base,
        "agent": agent,
    }


def load_settings(flags: Any = None, env: Mapping[str, str] | None = None) -> Settings:
    """Settings from ``flags`` (an argparse namespace or a mapping; None/absent = not given),
    the environment and the config file."""
    env = os.environ if env is None else env
    flag_layer = _flag_layer(flags)
    env_layer = _env_layer(env)
    config = _get(flags, "config")
    explicit = True
    if config is not None:
        path = _path(config, "--config")
    elif env.get(ENV_PREFIX + "CONFIG", "").strip():
        path = _path(env[ENV_PREFIX + "CONFIG"], ENV_PREFIX + "CONFIG")
    else:
        path, explicit = default_config_path(), False
    file_layer = _file_layer(path, explicit)
    layers = [flag_layer, env_layer, file_layer]

    def pick(key: str, default: Any = None) -> Any:
        for layer in layers:
            if key in layer.values:
                return layer.values[key]
        return default

    headers: dict[str, str] = {}
    for layer in reversed(layers):
        _merge_headers(headers, layer.values.get("headers", {}))
    server = _server(layers)
    auth: AuthOption | None = pick("auth")
    credentials: dict[str, str] = {}
    if auth is not None:
        try:
            credentials = auth.headers(env)
        except AuthError as exc:
            raise SettingsError(str(exc)) from None
    binding = pick("binding")
    from rewindtui.client.auth_flows import load_flows

    try:
        flows = load_flows(lambda key: _get(flags, key), env, file_layer.values.get("flow_tables"), path.parent)
    except AuthError as exc:
        raise SettingsError(str(exc)) from None
    if flows is not None and flows.oauth is not None and auth is not None:
        raise SettingsError(f"{auth.where} and --oauth-client-id: give one way to authenticate, not both")
    return Settings(
        url=server.get("url"),
        api=server.get("api"),
        kagent=server.get("kagent"),
        agent=server.get("agent"),
        session=pick("session"),
        user_id=pick("user_id"),
        headers=headers,
        rewind=pick("rewind"),  # only flags and the environment give a forced mode
        rewind_default=file_layer.values.get("rewind_default", "auto"),
        rewind_servers=dict(file_layer.values.get("rewind_servers", {})),
        dialect=pick("dialect"),
        keymap=dict(file_layer.values.get("keymap", {})),
        theme=pick("theme"),
        data_dir=pick("data_dir"),
        model=pick("model"),
        model_base_url=pick("model_base_url"),
        model_timeout=pick("model_timeout"),
        stall_timeout=pick("stall_timeout"),
        keep_server=pick("keep_server"),
        timeout=pick("timeout", 30.0),
        config_file=path if path.is_file() else None,
        debug=debug_enabled(env),
        binding=None if binding in (None, "auto") else binding,
        auth=auth,
        credentials=credentials,
        push=bool(pick("push", False)),
        flows=flows,
        kagent_version=pick("kagent_version", "auto"),
        kagent_checkpoints=pick("kagent_checkpoints", True),
    )
