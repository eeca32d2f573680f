"""The auth settings (``[auth]`` in the file, ``--bearer-env`` ..., ``REWINDTUI_BEARER_ENV`` ...):
one option from one source, its secret named (a variable or a file), never written in the file."""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

from rewindtui.client.auth import API_KEY, BASIC, BEARER, DEFAULT_API_KEY_HEADER, AuthOption, SecretRef
from rewindtui.config.values import SettingsError, check_header, check_path, check_str

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
PLAIN_SECRETS = ("bearer", "token", "api_key", "password", "basic_password", "secret")


def auth_option(get: Callable[[str], Any], where: Callable[[str], str], base: Path | None = None) -> AuthOption | None:
    """The auth option one source names (None: none), checked: one kind, its secret from one place."""
    given = {key: get(key) for key in AUTH_KEYS if get(key) is not None}
    if not given:
        return None
    for key, value in given.items():
        check_str(value, where(key))
    kinds = sorted({_AUTH_KIND[k] for k in given})
    if len(kinds) > 1:
        raise SettingsError(
            f"{', '.join(where(k) for k in given)}: give one auth option (a bearer token, an API key or HTTP Basic), "
            "not several"
        )
    kind = kinds[0]
    prefix = {BEARER: "bearer", API_KEY: "api_key", BASIC: "basic_password"}[kind]
    env, file = given.get(prefix + "_env"), given.get(prefix + "_file")
    if env and file:
        raise SettingsError(
            f"{where(prefix + '_env')} and {where(prefix + '_file')}: give the secret one way, not both"
        )
    if not env and not file:
        raise SettingsError(
            f"{where(next(iter(given)))}: also give where its secret is ({where(prefix + '_env')} VAR or "
            f"{where(prefix + '_file')} PATH)"
        )
    if env and not re.match(r"^[A-Za-z_][A-Za-z0-9_]*$", env.strip()):
        raise SettingsError(f"{where(prefix + '_env')}: expected the name of an environment variable, got {env!r}")
    secret = SecretRef(env=env.strip()) if env else SecretRef(file=check_path(file, where(prefix + "_file"), base))
    username = given.get("basic_user")
    if kind == BASIC and not username:
        raise SettingsError(
            f"{where(prefix + ('_env' if env else '_file'))}: HTTP Basic needs a user name too ({where('basic_user')})"
        )
    header = given.get("api_key_header") or DEFAULT_API_KEY_HEADER
    if kind == API_KEY:
        header = check_header(header, "x", where("api_key_header"))[0]
    return AuthOption(
        kind,
        secret,
        header=header,
        username=username.strip() if username else None,
        where=where(prefix + ("_env" if env else "_file")),
    )
