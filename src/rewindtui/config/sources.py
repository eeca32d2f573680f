"""Where settings come from: the command line's flags, the ``REWINDTUI_*`` environment and the TOML
config file, each read into one checked :class:`Layer`; and which server the layers name, as a whole
(:func:`server_of`). :func:`rewindtui.config.settings.load_settings` puts the layers together."""

from __future__ import annotations

import tomllib
from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rewindtui.client.transports.http import segment
from rewindtui.config.auth_settings import AUTH_KEYS, PLAIN_SECRETS, auth_option
from rewindtui.config.values import (
    ENV_PREFIX,
    SettingsError,
    check_header,
    check_mode,
    check_path,
    check_url,
    merge_headers,
    norm_url,
    parse_header,
    parse_headers,
)


@dataclass
class Layer:
    """The settings one source gives, already checked; absent keys were not given."""

    name: str  # "flags" | "environment" | the file path
    values: dict[str, Any] = field(default_factory=dict)
    where: dict[str, str] = field(default_factory=dict)  # key -> how to name it in an error

    def set(self, key: str, value: Any, where: str) -> None:
        self.values[key] = value
        self.where[key] = where


def flag_value(flags: Any, name: str) -> Any:
    if flags is None:
        return None
    if isinstance(flags, Mapping):
        return flags.get(name)
    return getattr(flags, name, None)


FLAG, ENV, FILE = "flag", "env", "file"
#: Each plain setting's check, and the sources (FLAG, ENV, FILE) that may give it.
Checks = Mapping[str, tuple[Callable[[Any, str], Any], frozenset[str]]]


def _checked(checks: Checks, source: str, get: Callable[[str], Any], where: Callable[[str], str], layer: Layer) -> None:
    """Check every plain setting ``source`` may give and ``get`` finds, into ``layer``."""
    for key, (check, sources) in checks.items():
        if source in sources:
            value = get(key)
            if value is not None:
                layer.set(key, check(value, where(key)), where(key))


def read_flags(flags: Any, checks: Checks) -> Layer:
    """What the command line's flags give."""
    layer = Layer("flags")
    _checked(checks, FLAG, lambda key: flag_value(flags, key), lambda key: "--" + key.replace("_", "-"), layer)
    data_dir = flag_value(flags, "data_dir")
    if data_dir is not None:
        layer.set("data_dir", check_path(data_dir, "--data-dir").absolute(), "--data-dir")
    headers: dict[str, str] = {}
    for text in flag_value(flags, "header") or ():
        merge_headers(headers, dict([parse_header(text)]))
    if headers:
        layer.set("headers", headers, "--header")
    auth = auth_option(lambda key: flag_value(flags, key), lambda key: "--" + key.replace("_", "-"))
    if auth is not None:
        layer.set("auth", auth, auth.where)
    return layer


def read_env(env: Mapping[str, str], checks: Checks) -> Layer:
    """What the ``REWINDTUI_*`` environment variables give."""
    layer = Layer("environment")

    def get(key: str) -> str | None:
        value = env.get(ENV_PREFIX + key.upper())
        return value if value is not None and value.strip() else None

    _checked(checks, ENV, get, lambda key: ENV_PREFIX + key.upper(), layer)
    name = ENV_PREFIX + "DATA_DIR"
    if env.get(name, "").strip():
        layer.set("data_dir", check_path(env[name], name).absolute(), name)
    name = ENV_PREFIX + "HEADERS"
    if env.get(name, "").strip():
        layer.set("headers", parse_headers(env[name], name), name)
    auth = auth_option(get, lambda key: ENV_PREFIX + key.upper())
    if auth is not None:
        layer.set("auth", auth, auth.where)
    return layer


def read_file(path: Path, explicit: bool, checks: Checks, file_keys: Collection[str]) -> Layer:
    """What the TOML config file at ``path`` gives (nothing when it is absent and not ``explicit``);
    a key not in ``file_keys`` is refused."""
    layer = Layer(str(path))
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

    unknown = sorted(set(data) - set(file_keys))
    if unknown:
        raise SettingsError(f"{path}: unknown setting {unknown[0]!r} (known: {', '.join(sorted(file_keys))})")
    _checked(checks, FILE, data.get, where, layer)
    if "data_dir" in data:
        layer.set("data_dir", check_path(data["data_dir"], where("data_dir"), base=path.parent), where("data_dir"))
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
        layer.set("headers", dict(check_header(k, v, where("headers")) for k, v in headers.items()), where("headers"))
    if "auth" in data:
        table = data["auth"]
        if not isinstance(table, dict):
            raise SettingsError(f'{where("auth")}: expected a table ([auth] with bearer_env = "VAR" ...)')
        for key in table:
            if key in PLAIN_SECRETS:
                raise SettingsError(
                    f"{where('auth.' + key)}: rewindtui does not read secrets from its config file; "
                    f'name an environment variable ({key.split("_")[0]}_env = "VAR") or a file (..._file = "PATH")'
                )
            if key not in AUTH_KEYS:
                raise SettingsError(f"{where('auth.' + key)}: unknown auth setting (known: {', '.join(AUTH_KEYS)})")
        auth = auth_option(table.get, lambda key: where("auth." + key), base=path.parent)
        if auth is not None:
            layer.set("auth", auth, auth.where)
    if "rewind" in data:
        rewind = data["rewind"]
        if isinstance(rewind, str):
            layer.set("rewind_default", check_mode(rewind, where("rewind")), where("rewind"))
        elif isinstance(rewind, dict):
            servers: dict[str, str] = {}
            for key, mode in rewind.items():
                w = where(f"rewind.{key}")
                if key == "default":
                    layer.set("rewind_default", check_mode(mode, w), w)
                else:
                    servers[check_url(key, w)] = check_mode(mode, w)
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
                raise SettingsError(f'{where("keymap." + binding)}: expected keys like "ctrl+r", got {keys!r}')
        layer.set("keymap", out, where("keymap"))
    return layer


def server_of(layers: list[Layer]) -> dict[str, Any]:
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
        raise SettingsError(
            f"{layer.where['url']} and {layer.where[other]}: give either a URL or a kagent agent, not both"
        )
    if kagent_rank is not None and (url_rank is None or kagent_rank < url_rank):
        kagent, kagent_where = first("kagent")
        agent, agent_where = first("agent")
        if kagent is None:
            raise SettingsError(f"{agent_where}: needs a kagent controller too (--kagent http://HOST:8083)")
        if agent is None:
            raise SettingsError(f"{kagent_where}: needs an agent too (--agent NAMESPACE/NAME)")
        api, _ = first("api", upto=kagent_rank)
        return kagent_server(kagent, agent, api)
    url, _ = first("url")
    api, _ = first("api", upto=url_rank)
    return {"url": url, "api": api}


def kagent_server(kagent: str, agent: str, api: str | None) -> dict[str, Any]:
    """url/api/kagent/agent for an agent (``NAMESPACE/NAME``) on a kagent controller."""
    base = norm_url(kagent)
    if base.endswith("/api"):
        base = base[: -len("/api")]
    namespace, name = (segment(x) for x in agent.split("/"))  # escaped: "../x" stays in its place
    return {
        "url": f"{base}/api/a2a/{namespace}/{name}/",
        "api": api or f"{base}/api",
        "kagent": base,
        "agent": agent,
    }
