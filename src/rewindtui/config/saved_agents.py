"""Saved agents and named auth profiles, in the config file::

    [agents.prod]                      # `rewindtui agents add prod --url ... --auth-profile prod`
    url = "https://agents.example.com/a2a/"
    binding = "grpc"                   # optional: auto | jsonrpc | http+json | grpc
    dialect = "1.0"                    # optional
    auth_profile = "prod"              # optional: an [auth_profiles.NAME] table

    [auth_profiles.prod]               # the keys of [auth]: the secret is a variable or a file
    bearer_env = "PROD_TOKEN"
    origins = ["https://agents.example.com"]   # where its credentials may go

``--agent NAME`` (a name without ``/``; ``NS/NAME`` stays a kagent agent) uses a saved agent: its
URL, binding, dialect and its profile's auth, in place of the flags (:func:`flags_for_agent`).
A profile's credentials go only to the origins it lists, or to the URL of a saved agent that
names it; :func:`profile_flags` refuses any other URL (the MCP tools take a URL and a profile).

``agents add`` / ``remove`` rewrite the file's ``[agents.NAME]`` table only; the rest of the
file is kept as written (the result is read back and compared, and a file whose agents are
written another way is refused, not mangled).
"""

from __future__ import annotations

import json
import re
import tomllib
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rewindtui.client.auth import origin_text, same_origin
from rewindtui.config.auth_settings import AUTH_KEYS, PLAIN_SECRETS, auth_option
from rewindtui.config.values import ENV_PREFIX, SettingsError, check_binding, check_dialect, check_path, check_url

_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$")
AGENT_KEYS = ("url", "binding", "dialect", "auth_profile")


@dataclass(frozen=True)
class SavedAgent:
    name: str
    url: str
    binding: str | None = None
    dialect: str | None = None
    auth_profile: str | None = None

    def record(self) -> dict[str, Any]:
        return {k: v for k, v in {"name": self.name, **{k: getattr(self, k) for k in AGENT_KEYS}}.items() if v}


@dataclass(frozen=True)
class AuthProfile:
    name: str
    keys: dict[str, str]  # the [auth] keys (bearer_env ...): names of variables or files, no secret
    origins: tuple[str, ...]

    def record(self) -> dict[str, Any]:
        return {"name": self.name, **self.keys, "origins": list(self.origins)}


def check_name(value: str, what: str = "agent") -> str:
    if not isinstance(value, str) or not _NAME.match(value):
        raise SettingsError(f"{what} name {value!r}: use letters, digits, '.', '_' or '-' (at most 64, no '/')")
    return value


def config_path(flags: Any = None, env: Any = None) -> Path:
    import os

    from rewindtui.base.dirs import default_config_path

    env = os.environ if env is None else env
    given = getattr(flags, "config", None) if not isinstance(flags, dict) else flags.get("config")
    if given:
        return check_path(given, "--config")
    if env.get(ENV_PREFIX + "CONFIG", "").strip():
        return check_path(env[ENV_PREFIX + "CONFIG"], ENV_PREFIX + "CONFIG")
    return default_config_path()


def _data(path: Path) -> dict[str, Any]:
    try:
        with open(path, "rb") as fh:
            return tomllib.load(fh)
    except FileNotFoundError:
        return {}
    except tomllib.TOMLDecodeError as exc:
        raise SettingsError(f"{path}: not valid TOML: {exc}") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise SettingsError(f"{path}: cannot read: {exc}") from None


def _agent(path: Path, name: str, table: Any) -> SavedAgent:
    where = f"{path}: agents.{name}"
    if not isinstance(table, dict):
        raise SettingsError(f"{where}: expected a table ([agents.{name}] with url = ...)")
    unknown = sorted(set(table) - set(AGENT_KEYS))
    if unknown:
        raise SettingsError(f"{where}.{unknown[0]}: unknown key (known: {', '.join(AGENT_KEYS)})")
    binding = table.get("binding")
    dialect = table.get("dialect")
    profile = table.get("auth_profile")
    return SavedAgent(
        check_name(name),
        check_url(table.get("url"), f"{where}.url"),
        check_binding(binding, f"{where}.binding") if binding is not None else None,
        check_dialect(dialect, f"{where}.dialect").value if dialect is not None else None,
        check_name(profile, "auth profile") if profile is not None else None,
    )


def load_agents(path: Path) -> dict[str, SavedAgent]:
    table = _data(path).get("agents", {})
    if not isinstance(table, dict):
        raise SettingsError(f"{path}: agents: expected tables [agents.NAME]")
    return {name: _agent(path, name, value) for name, value in table.items()}


def load_profiles(path: Path) -> dict[str, AuthProfile]:
    tables = _data(path).get("auth_profiles", {})
    if not isinstance(tables, dict):
        raise SettingsError(f"{path}: auth_profiles: expected tables [auth_profiles.NAME]")
    out: dict[str, AuthProfile] = {}
    for name, table in tables.items():
        where = f"{path}: auth_profiles.{name}"
        if not isinstance(table, dict):
            raise SettingsError(f"{where}: expected a table")
        for key in table:
            if key in PLAIN_SECRETS:
                raise SettingsError(
                    f"{where}.{key}: rewindtui does not read secrets from its config file; name a variable or a file"
                )
            if key not in (*AUTH_KEYS, "origins"):
                raise SettingsError(f"{where}.{key}: unknown key (known: {', '.join(AUTH_KEYS)}, origins)")
        auth_option(table.get, _where_in(where), base=path.parent)  # checked as [auth] is
        origins = table.get("origins", [])
        if not isinstance(origins, list):
            raise SettingsError(f"{where}.origins: expected a list of URLs")
        checked = tuple(origin_text(check_url(o, f"{where}.origins")) for o in origins)
        keys = {k: str(v) for k, v in table.items() if k in AUTH_KEYS}
        out[check_name(name, "auth profile")] = AuthProfile(name, keys, checked)
    return out


def _where_in(where: str) -> Callable[[str], str]:
    return lambda key: f"{where}.{key}"


def _auth_flags(profile: AuthProfile, base: Path) -> dict[str, Any]:
    flags: dict[str, Any] = {}
    for key, value in profile.keys.items():
        flags[key] = str((base / value).resolve()) if key.endswith("_file") and not Path(value).is_absolute() else value
    return flags


def profile_flags(path: Path, profile_name: str, url: str) -> dict[str, Any]:
    """The auth flags of profile ``profile_name`` for a request to ``url``: SettingsError when the
    profile is unknown or ``url``'s origin is not one it may go to (its ``origins``, or the URL of
    a saved agent that names it)."""
    profiles = load_profiles(path)
    profile = profiles.get(profile_name)
    if profile is None:
        known = ", ".join(sorted(profiles)) or "none"
        raise SettingsError(f"no auth profile {profile_name!r} in {path} (profiles: {known})")
    homes = [*profile.origins, *(a.url for a in load_agents(path).values() if a.auth_profile == profile_name)]
    if not any(same_origin(url, home) for home in homes):
        allowed = ", ".join(origin_text(h) for h in homes) or "none"
        raise SettingsError(
            f"auth profile {profile_name!r} may not be sent to {origin_text(url)}: its credentials go only to "
            f"{allowed} (add the origin to [auth_profiles.{profile_name}] origins if it is yours)"
        )
    return _auth_flags(profile, path.parent)


def flags_for_agent(path: Path, name: str) -> dict[str, Any]:
    """The settings flags a saved agent stands for: url, binding, dialect and its profile's auth."""
    agents = load_agents(path)
    agent = agents.get(name)
    if agent is None:
        known = ", ".join(sorted(agents)) or "none saved"
        raise SettingsError(
            f"no saved agent {name!r} in {path} (agents: {known}); `rewindtui agents add {name} --url URL` saves one, "
            "and a kagent agent is NAMESPACE/NAME with --kagent"
        )
    flags: dict[str, Any] = {"url": agent.url}
    if agent.binding:
        flags["binding"] = agent.binding
    if agent.dialect:
        flags["dialect"] = agent.dialect
    if agent.auth_profile:
        flags.update(profile_flags(path, agent.auth_profile, agent.url))
    return flags


def resolve_flags(flags: dict[str, Any], env: Any = None) -> dict[str, Any]:
    """``flags`` with ``agent`` (a saved agent's name: no ``/``, and no ``--kagent``) replaced by what
    the saved agent stands for; flags given on the command line win over the agent's. Unchanged
    otherwise."""
    name = flags.get("agent")
    if not isinstance(name, str) or "/" in name or flags.get("kagent"):
        return flags
    if flags.get("url"):
        raise SettingsError(f"--agent {name} and --url: give a saved agent or a URL, not both")
    saved = flags_for_agent(config_path(flags, env), check_name(name))
    out = {k: v for k, v in flags.items() if k != "agent"}
    if any(out.get(k) is not None for k in AUTH_KEYS):
        saved = {k: v for k, v in saved.items() if k not in AUTH_KEYS}  # the command line's auth wins
    for key, value in saved.items():
        if out.get(key) is None:
            out[key] = value
    return out


# -- writing ---------------------------------------------------------------------------------------
_HEADER = re.compile(r"^\s*\[\s*agents\s*\.\s*(\"[^\"]*\"|'[^']*'|[A-Za-z0-9_.-]+)\s*\]\s*(#.*)?$")
_ANY_TABLE = re.compile(r"^\s*\[")


def _without(text: str, name: str) -> str:
    lines = text.splitlines(keepends=True)
    out: list[str] = []
    skipping = False
    for line in lines:
        header = _HEADER.match(line)
        if header:
            skipping = header.group(1).strip("\"'") == name
        elif _ANY_TABLE.match(line):
            skipping = False
        if not skipping:
            out.append(line)
    return "".join(out)


def _write(path: Path, text: str, expected: dict[str, SavedAgent]) -> None:
    try:
        parsed = {n: _agent(path, n, t) for n, t in tomllib.loads(text).get("agents", {}).items()}
    except tomllib.TOMLDecodeError as exc:
        raise SettingsError(f"{path}: could not rewrite its [agents] tables safely ({exc}); edit it by hand") from None
    if parsed != expected:
        raise SettingsError(f"{path}: its agents are not written as [agents.NAME] tables; edit it by hand")
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(text, encoding="utf-8")
    tmp.replace(path)


def add_agent(path: Path, agent: SavedAgent, *, replace: bool = False) -> None:
    agents = load_agents(path)
    if agent.name in agents and not replace:
        raise SettingsError(f"a saved agent {agent.name!r} exists already in {path} (--replace to change it)")
    if agent.auth_profile and agent.auth_profile not in load_profiles(path):
        raise SettingsError(
            f"no auth profile {agent.auth_profile!r} in {path}: add an [auth_profiles.{agent.auth_profile}] table "
            '(bearer_env = "VAR" ...) first'
        )
    text = path.read_text(encoding="utf-8") if path.is_file() else ""
    text = _without(text, agent.name)
    if text and not text.endswith("\n"):
        text += "\n"
    block = [f"\n[agents.{json.dumps(agent.name)}]"]
    for key in AGENT_KEYS:
        value = getattr(agent, key)
        if value:
            block.append(f"{key} = {json.dumps(value)}")
    _write(path, text + "\n".join(block) + "\n", {**agents, agent.name: agent})


def remove_agent(path: Path, name: str) -> None:
    agents = load_agents(path)
    if name not in agents:
        raise SettingsError(f"no saved agent {name!r} in {path}")
    text = _without(path.read_text(encoding="utf-8"), name)
    _write(path, text, {n: a for n, a in agents.items() if n != name})
