"""The server's switches, read once at its entry points (``serve.main``, ``EmbeddedServer``).

Nothing below the entry points reads the environment: they build one :class:`ServerOptions`
(``ServerOptions.from_env()``) and hand it down. Standard library only (``spawn`` reads the
names).
"""

from __future__ import annotations

import ipaddress
import os
import secrets
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from rewindtui.server.agent.model_options import ModelOptions

#: ADK sessions kept loaded in memory (0 turns the cache off).
SESSION_CACHE_ENV = "REWINDTUI_SESSION_CACHE"
#: "0": rewind Tasks are rendered by a2a-sdk too (no fast path).
FAST_REWIND_ENV = "REWINDTUI_FAST_REWIND"
#: "0": the frames of an A2A 1.0 streaming turn are rendered by a2a-sdk too (no fast path).
FAST_STREAM_ENV = "REWINDTUI_FAST_STREAM"
#: The bearer token clients must send (``Authorization: Bearer …``). A spawned server gets a
#: random one this way (never on its command line).
TOKEN_ENV = "REWINDTUI_SERVER_TOKEN"
#: Address ranges push notifications may go to besides public ones (``loopback``, ``private``,
#: ``link-local``, CIDRs; comma separated). See :mod:`rewindtui.server.http.push_screen`.
PUSH_ALLOW_ENV = "REWINDTUI_PUSH_ALLOW"
#: Fault injection for tests: ``NAME=PATH`` makes the server stop at checkpoint NAME, write PATH,
#: and wait there forever (a test then kills it with SIGKILL). See :mod:`rewindtui.server.service.faults`.
PAUSE_ENV = "REWINDTUI_TEST_PAUSE_AT"
#: ``postgresql+asyncpg://…``: everything the server keeps lives in that database (a team server,
#: docs/team-server.md); unset, in SQLite files in the data directory.
DATABASE_URL_ENV = "REWINDTUI_DATABASE_URL"

DEFAULT_SESSION_CACHE = 64
DEFAULT_BUSY_TIMEOUT_MS = 2000


@dataclass(frozen=True)
class ServerOptions:
    session_cache: int = DEFAULT_SESSION_CACHE
    fast_rewind: bool = True
    fast_stream: bool = True
    #: required from every client when set; always set when binding anything but loopback
    token: str | None = None
    #: extra ``Host`` names accepted besides loopback and the bound address
    allowed_hosts: tuple[str, ...] = ()
    #: how long a store write waits for another process's lock before giving up
    busy_timeout_ms: int = DEFAULT_BUSY_TIMEOUT_MS
    #: fault injection: checkpoint name -> marker file (tests only)
    pause_at: Mapping[str, str] = field(default_factory=dict)
    #: a real model's endpoint, timeouts and retries
    model: ModelOptions = field(default_factory=ModelOptions)
    #: non-public ranges push notifications may go to (None: not set; the app's own server on
    #: loopback then allows ``loopback``, where its receiver listens; ``rewindtui serve`` none)
    push_allow: tuple[str, ...] | None = None
    #: the team database (``postgresql+asyncpg://…``); None: SQLite in the data directory
    database_url: str | None = None
    #: every request carries a user's own token (``rewindtui team token``), which says who it is
    users: bool = False

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None, **overrides: Any) -> ServerOptions:
        env = os.environ if env is None else env
        try:
            cache = max(0, int(env.get(SESSION_CACHE_ENV, str(DEFAULT_SESSION_CACHE))))
        except ValueError:
            cache = DEFAULT_SESSION_CACHE
        pause: dict[str, str] = {}
        raw_pause = env.get(PAUSE_ENV, "")
        if "=" in raw_pause:
            name, path = raw_pause.split("=", 1)
            pause[name.strip()] = path
        options = cls(
            session_cache=cache,
            fast_rewind=env.get(FAST_REWIND_ENV, "1") != "0",
            fast_stream=env.get(FAST_STREAM_ENV, "1") != "0",
            token=env.get(TOKEN_ENV) or None,
            pause_at=pause,
            push_allow=tuple(e.strip() for e in env[PUSH_ALLOW_ENV].split(",") if e.strip())
            if PUSH_ALLOW_ENV in env
            else None,
            database_url=normalized_database_url(env.get(DATABASE_URL_ENV) or None),
        )
        return replace(options, **overrides) if overrides else options

    def for_bind(self, host: str) -> tuple[ServerOptions, bool]:
        """These options for a server bound to ``host``: beyond loopback a token is required, so one
        is made up if none was given (with ``users``, each user's own token is required instead).
        Returns the options and whether the token was made up."""
        if self.token is None and not is_loopback(host) and not self.users:
            return replace(self, token=secrets.token_urlsafe(32)), True
        return self, False


def normalized_database_url(url: str | None) -> str | None:
    """``url`` with the driver this server uses: ``postgresql://`` and ``postgres://`` become
    ``postgresql+asyncpg://`` (anything else is left for :func:`database_url_problem` to judge)."""
    if url is None:
        return None
    url = url.strip()
    for prefix in ("postgresql://", "postgres://"):
        if url.startswith(prefix):
            return "postgresql+asyncpg://" + url[len(prefix) :]
    return url


def database_url_problem(url: str | None) -> str | None:
    """Why ``url`` cannot be the server's database, in one sentence; None when it can."""
    if url is None:
        return None
    if not url.startswith("postgresql+asyncpg://"):
        scheme = url.split(":", 1)[0] if ":" in url else url[:20]
        return (
            f"--database-url takes a PostgreSQL URL (postgresql+asyncpg://USER:PASSWORD@HOST/DB), not {scheme!r}; "
            "without it the server keeps SQLite files in --data-dir"
        )
    return None


LOOPBACK_NAMES = frozenset({"localhost", "127.0.0.1", "::1"})


def is_loopback(host: str) -> bool:
    host = host.strip("[]").lower()
    if host in LOOPBACK_NAMES or host.endswith(".localhost"):
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False
