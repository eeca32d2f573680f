"""What a server offers, as this client will use it: :class:`ServerConfig` (what the user
configured) and :class:`Capabilities` (what the agent card says: binding, dialect, rewind, fork,
redo, the REST API), read by :func:`capabilities_from_card`."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx

from rewindtui.a2a import contract
from rewindtui.a2a.card import JSONRPC, Choice, NoUsableInterface, choose_interface
from rewindtui.a2a.dialect import Dialect
from rewindtui.client.auth import AuthOption, origin_of
from rewindtui.client.errors import Unsupported

#: The agent-card extension by which a server says it implements rewind and fork.
REWIND_EXTENSION = contract.EXTENSION_URI
REWIND_MODES = ("a2a", "rest", "off", "auto")


@dataclass
class ServerConfig:
    url: str  # the A2A agent endpoint
    api: str | None = None  # kagent-style REST base, e.g. http://host:8083/api
    dialect: Dialect | None = None  # None: from the agent card
    rewind: str = "auto"  # auto | a2a | rest | off
    user_id: str | None = None
    headers: dict[str, str] = field(default_factory=dict)
    timeout: float = 30.0
    #: kagent's ``namespace/name`` of the agent: sessions are created with it and listed per agent
    agent_ref: str | None = None
    #: other A2A endpoints to try, in order, when the agent card is not found at ``url``
    fallback_urls: tuple[str, ...] = ()
    #: the local sessions store (SQLite) remembering this user's sessions on this server ...
    local_store: Path | None = None
    #: ... under this server name (default: ``url``; the embedded server's port changes each run)
    local_store_key: str | None = None
    #: the binding to use (``JSONRPC`` / ``HTTP+JSON``); None: the card's preferred one we speak
    binding: str | None = None
    #: the named auth option (for messages; its headers are in ``credentials``)
    auth: AuthOption | None = None
    #: credential headers (resolved), sent like ``headers``: to the configured origins only
    credentials: dict[str, str] = field(default_factory=dict)
    #: more origins that are home (besides ``url``, ``api`` and ``fallback_urls``)
    home_urls: tuple[str, ...] = ()
    #: set when the card named a REST API on an origin the user did not configure (not used)
    refused_api: str = ""

    def home(self) -> list[str]:
        """The URLs whose origins the user configured: credentials and headers go there only."""
        return [u for u in (self.url, self.api, *self.fallback_urls, *self.home_urls) if u]


@dataclass
class Capabilities:
    name: str
    dialect: Dialect
    rewind_modes: tuple[str, ...]  # what will be used: "a2a", "rest" (none: no rewind)
    fork: bool
    api: str | None
    description: str = ""
    card: dict[str, Any] = field(default_factory=dict)
    #: the control message's metadata key, as the card's extension names it
    metadata_key: str = contract.REWIND_METADATA_KEY
    #: the card advertises our rewind extension (so the server promises the contract's flags)
    advertised: bool = False
    #: the user turned rewind off for this server in the settings
    rewind_off: bool = False
    #: the card says the agent streams (``capabilities.streaming``)
    streaming: bool = True
    #: a kagent agent (``--kagent`` / ``--agent``): its missing features have a known fix
    kagent_agent: str | None = None
    #: ``POST {api}/sessions/{id}/redo`` exists (undo a rewind), as the card's extension says
    redo: bool = False
    #: the binding (``JSONRPC`` / ``HTTP+JSON``) and endpoint URL in use, from the card
    binding: str = JSONRPC
    endpoint: str = ""
    choice: Choice | None = None
    #: the session's newest task id is a cheap revision (``GET {api}/sessions/{id}/tasks?limit=1``)
    newest_task: bool = False
    #: the card was answered while the agent was still starting (the first turn waits for it)
    starting: bool = False

    @property
    def can_rewind(self) -> bool:
        return bool(self.rewind_modes)

    @property
    def rewind_mode(self) -> str | None:
        """The mode rewind will use: the A2A control message when offered (one round trip,
        and the stream carries the effective history), else REST."""
        for mode in ("a2a", "rest"):
            if mode in self.rewind_modes:
                return mode
        return None

    def why_no_rewind(self) -> str:
        if self.rewind_off:
            return "rewind is off for this server in your settings"
        if self.advertised:
            return f"{self.name} offers rewind only over REST, and no REST API is configured (give --api)"
        if self.kagent_agent:
            return (
                f"this kagent agent ({self.kagent_agent}) does not support rewind: "
                'enable the rewind add-on on it (see the README, "Rewind on your kagent agents")'
            )
        return f"{self.name} does not support rewind (its agent card does not advertise it)"

    def why_no_fork(self) -> str:
        if self.rewind_off:
            return "rewind and fork are off for this server in your settings"
        if not self.advertised:
            return self.why_no_rewind().replace("support rewind", "support fork")
        return f"{self.name} does not offer fork (it needs the server's REST API: POST /sessions/{{id}}/fork)"

    def why_no_redo(self) -> str:
        if self.rewind_off:
            return "rewind and redo are off for this server in your settings"
        if not self.advertised:
            return self.why_no_rewind().replace("support rewind", "support redo")
        return (
            f"{self.name} does not offer redo: its agent card does not advertise it "
            "(it needs the server's REST API: POST /sessions/{id}/redo)"
        )


def _home_api(value: Any, config: ServerConfig, card_url: str) -> str | None:
    """The REST base an agent card's rewind extension names, when it is on an origin the user
    configured (a relative one is joined to the card's URL). Another origin is never used: the
    user id (``?user_id=``) and the configured headers would go to a host the user did not name."""
    if not isinstance(value, str) or not value.strip():
        return None
    try:
        url = str(httpx.URL(card_url).join(value.strip()))
        home = {origin_of(u) for u in config.home()}
        if origin_of(url) in home:
            return url
    except (httpx.InvalidURL, ValueError, TypeError):
        pass
    config.refused_api = value
    return None


def _rewind_extension(caps: dict[str, Any]) -> tuple[bool, dict[str, Any]]:
    """Whether the card's capabilities advertise the rewind extension, and its params."""
    extension: dict[str, Any] = {}
    advertised = False
    for ext in caps.get("extensions") or ():
        if isinstance(ext, dict) and ext.get("uri") == REWIND_EXTENSION:
            advertised = True
            params = ext.get("params")
            extension = params if isinstance(params, dict) and params else {contract.PARAM_REWIND: [contract.MODE_A2A]}
    return advertised, extension


def card_says_starting(card: dict[str, Any]) -> bool:
    """The card was answered while the agent was still starting (the embedded server's front):
    what it lists may grow (its gRPC port) once the agent is up."""
    caps = card.get("capabilities")
    return isinstance(caps, dict) and _rewind_extension(caps)[1].get(contract.PARAM_STARTING) is True


def capabilities_from_card(card: dict[str, Any], config: ServerConfig, card_url: str | None = None) -> Capabilities:
    """What the card says, as this client will use it. Unsupported when it offers no binding
    this client speaks (e.g. gRPC only)."""
    card_url = card_url or config.url
    try:
        choice = choose_interface(card, card_url, binding=config.binding, dialect=config.dialect)
    except NoUsableInterface as exc:
        raise Unsupported(str(exc)) from None
    caps = card.get("capabilities")
    if not isinstance(caps, dict):
        caps = {}
    advertised, extension = _rewind_extension(caps)
    offered = extension.get(contract.PARAM_REWIND) or []
    if isinstance(offered, str):
        offered = [offered]
    api_param = extension.get(contract.PARAM_API)
    api = config.api or _home_api(api_param, config, card_url)
    modes = tuple(m for m in contract.MODES if m in offered)
    if config.rewind == "off":
        modes = ()
    elif config.rewind in ("a2a", "rest"):
        modes = (config.rewind,)
    if "rest" in modes and not api:
        modes = tuple(m for m in modes if m != "rest")
    fork = bool(extension.get(contract.PARAM_FORK)) and bool(api) and config.rewind != "off"
    # redo over REST, or (no REST API: the kagent-rewind add-on) the A2A control message
    redo = bool(extension.get(contract.PARAM_REDO)) and (bool(api) or "a2a" in modes) and config.rewind != "off"
    key = extension.get(contract.PARAM_METADATA_KEY)
    streaming = caps.get("streaming")
    return Capabilities(
        name=str(card.get("name") or "agent"),
        dialect=choice.dialect,
        rewind_modes=modes,
        fork=fork,
        api=api,
        description=str(card.get("description") or ""),
        card=card,
        metadata_key=key if isinstance(key, str) and key else contract.REWIND_METADATA_KEY,
        advertised=advertised,
        rewind_off=config.rewind == "off",
        streaming=streaming is not False,
        kagent_agent=config.agent_ref,
        redo=redo,
        binding=choice.binding,
        endpoint=choice.url,
        choice=choice,
        newest_task=bool(extension.get(contract.PARAM_NEWEST_TASK)) and bool(api),
        starting=extension.get(contract.PARAM_STARTING) is True,
    )
