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
    # card_keys = "keys.json"                        a JWKS whose keys may sign agent cards
    # card_issuers = ["https://keys.example.com/"]   key set URLs or origins trusted to sign them

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
``REWINDTUI_BASIC_USER`` + ``REWINDTUI_BASIC_PASSWORD_ENV`` / ``_FILE``; ``REWINDTUI_DEBUG`` (tracebacks
instead of one-line errors, :func:`debug_enabled`).

Precedence is per setting, with two rules: the server (``url``/``api`` or ``kagent``/``agent``)
comes as a whole from the highest source that names one, so a flag ``--url`` is never paired with
the file's ``api`` for another server (an ``api`` from the same or a higher source is); headers are
merged (a higher source replaces a header of
the same name). A rewind mode given by flag or environment applies to whatever server is used;
the file's ``[rewind]`` table is consulted otherwise. The auth option, like the server, comes
whole from the highest source that names one; its secret is read when the settings are loaded
(a missing variable or file is a SettingsError) and is never stored by rewindtui.

Any problem gives :class:`SettingsError`, whose ``str()`` is one line naming where the bad value
came from (flag, variable, or file and key) and why.

Here: the settings (:class:`Settings`), which source may give each (``_CHECKS``, ``_FILE_KEYS``) and
:func:`load_settings`, which puts the sources together. A value's check is in
:mod:`rewindtui.config.values`, reading each source in :mod:`rewindtui.config.sources`, the auth
option in :mod:`rewindtui.config.auth_settings`. A new plain setting is a field on :class:`Settings`,
a line in ``_CHECKS`` (and ``_FILE_KEYS`` if the file may give it) and a line in :func:`load_settings`.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from rewindtui.a2a import kagent as kagent_api
from rewindtui.a2a.dialect import Dialect
from rewindtui.base.dirs import default_config_path, default_data_dir
from rewindtui.client.a2a_client import ServerConfig
from rewindtui.client.auth import AuthError, AuthOption
from rewindtui.client.transports.http import segment
from rewindtui.config.auth_settings import AUTH_KEYS
from rewindtui.config.sources import (
    ENV,
    FILE,
    FLAG,
    flag_value,
    kagent_server,
    read_env,
    read_file,
    read_flags,
    server_of,
)
from rewindtui.config.values import (
    ENV_PREFIX,
    SettingsError,
    check_agent,
    check_binding,
    check_dialect,
    check_kagent_version,
    check_mode,
    check_onoff,
    check_path,
    check_push,
    check_seconds,
    check_str,
    check_url,
    check_url_list,
    merge_headers,
    norm_url,
    parse_header,
    parse_headers,
)

__all__ = [
    "AUTH_KEYS",
    "DEBUG_VARIABLE",
    "ENV_PREFIX",
    "LOCAL_STORE_FILE",
    "Settings",
    "SettingsError",
    "debug_enabled",
    "load_settings",
    "parse_header",
    "parse_headers",
]

#: Set (to anything but 0/false/no/off) to get Python tracebacks instead of one-line errors.
DEBUG_VARIABLE = ENV_PREFIX + "DEBUG"
#: The client's local store of the sessions it used, in the data dir.
LOCAL_STORE_FILE = "sessions.db"

#: The keys the config file may have (the tables among them are read in config/sources.py).
_FILE_KEYS = {
    "server",  # [server]: read by `rewindtui serve` only (rewindtui.server.process.serve: database_url)
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
    "kagent_share",
    "kagent_share_writable",
    "card_keys",
    "card_issuers",
    "agents",  # [agents.NAME] and [auth_profiles.NAME]: rewindtui.config.saved_agents
    "auth_profiles",
}
#: Every source may give it.
_ALL = frozenset({FLAG, ENV, FILE})
#: The plain settings: each one's check, and the sources that may give it. (``data_dir``,
#: ``headers``, ``timeout``, the file's ``[rewind]`` and ``[keymap]`` tables are read apart.)
_CHECKS: dict[str, tuple[Callable[[Any, str], Any], frozenset[str]]] = {
    "url": (check_url, _ALL),
    "api": (check_url, _ALL),
    "kagent": (check_url, _ALL),
    "agent": (check_agent, _ALL),
    "session": (check_str, frozenset({FLAG})),
    "user_id": (check_str, _ALL),
    "rewind": (check_mode, frozenset({FLAG, ENV})),  # the file's rewind is a table, read apart
    "dialect": (check_dialect, _ALL),
    "theme": (check_str, _ALL),
    "model": (check_str, _ALL),
    "model_base_url": (check_url, _ALL),
    "model_timeout": (check_seconds, _ALL),
    "stall_timeout": (check_seconds, _ALL),
    "keep_server": (check_seconds, _ALL),
    "binding": (check_binding, _ALL),
    "push": (check_push, frozenset({ENV, FILE})),
    "kagent_version": (check_kagent_version, _ALL),
    "kagent_checkpoints": (check_onoff, _ALL),
    "kagent_share": (check_str, _ALL),
    "kagent_share_writable": (check_onoff, _ALL),
    # whom a signed agent card may be "verified" by (rewindtui.client.card_signature)
    "card_keys": (check_str, _ALL),  # a JWKS file
    "card_issuers": (check_url_list, frozenset({ENV, FILE})),  # key set URLs or origins
}


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
    kagent_share: str | None = None  # kagent 1.0: open the session from this share token (--share)
    kagent_share_writable: bool = False  # kagent 1.0: the share lets its reader send (else read-only)
    card_keys: str | None = None  # a JWKS file whose keys may sign agent cards ("verified")
    card_issuers: tuple[str, ...] = ()  # pinned key set URLs / origins whose keys may sign agent cards

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
            target = norm_url(url)
            best: tuple[int, str] | None = None
            for key, mode in self.rewind_servers.items():
                prefix = norm_url(key)
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
            server = kagent_server(check_url(kagent, "kagent controller"), check_agent(agent, "agent"), api=None)
            return replace(self, **server)
        return replace(self, url=check_url(url, "agent URL"), api=None, kagent=None, agent=None)

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


def load_settings(flags: Any = None, env: Mapping[str, str] | None = None) -> Settings:
    """Settings from ``flags`` (an argparse namespace or a mapping; None/absent = not given),
    the environment and the config file."""
    env = os.environ if env is None else env
    flag_layer = read_flags(flags, _CHECKS)
    env_layer = read_env(env, _CHECKS)
    config = flag_value(flags, "config")
    explicit = True
    if config is not None:
        path = check_path(config, "--config")
    elif env.get(ENV_PREFIX + "CONFIG", "").strip():
        path = check_path(env[ENV_PREFIX + "CONFIG"], ENV_PREFIX + "CONFIG")
    else:
        path, explicit = default_config_path(), False
    file_layer = read_file(path, explicit, _CHECKS, _FILE_KEYS)
    layers = [flag_layer, env_layer, file_layer]

    def pick(key: str, default: Any = None) -> Any:
        for layer in layers:
            if key in layer.values:
                return layer.values[key]
        return default

    headers: dict[str, str] = {}
    for layer in reversed(layers):
        merge_headers(headers, layer.values.get("headers", {}))
    server = server_of(layers)
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
        flows = load_flows(lambda key: flag_value(flags, key), env, file_layer.values.get("flow_tables"), path.parent)
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
        kagent_share=pick("kagent_share"),
        kagent_share_writable=pick("kagent_share_writable", False),
        card_keys=pick("card_keys"),
        card_issuers=pick("card_issuers", ()),
    )
