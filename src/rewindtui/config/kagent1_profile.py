"""Which kagent: a controller that answers kagent 1.0's gRPC API (its conversations service, over
gRPC-Web on the HTTP port) gets the kagent 1.0 profile; otherwise the 0.10 REST API is used.
``kagent_version = "1"`` (or ``"0.10"``) in the settings skips the question."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from rewindtui.client.transports.http import segment
from rewindtui.config.settings import Settings
from rewindtui.kagent1.client import Kagent1Client
from rewindtui.kagent1.controller import Kagent1Controller
from rewindtui.kagent1.forks import FILE as FORKS_FILE
from rewindtui.kagent1.grpcweb import GrpcError

#: answers that say "this is not kagent 1.0's API" (a 0.10 router's 404, a plain HTTP server)
_NOT_GRPC = ("UNIMPLEMENTED", "UNKNOWN", "UNAVAILABLE")


async def answers_kagent1(controller: Kagent1Controller, agent: str) -> bool:
    """True when the controller speaks kagent 1.0's AgentInstanceService."""
    try:
        await controller.list_instances(agent, limit=1)
    except GrpcError as exc:
        return exc.code not in _NOT_GRPC
    return True


def a2a_url(kagent: str, agent: str) -> str:
    """kagent 1.0's A2A 1.0 route of an agent: ``POST /agents/{ns}/{name}``."""
    namespace, _, name = agent.partition("/")
    return f"{kagent.rstrip('/')}/agents/{segment(namespace)}/{segment(name)}"


async def kagent1_client(
    settings: Settings,
    store_key: str | None = None,
    http: Any = None,
    *,
    share_token: str | None = None,
    read_only: bool | None = None,
) -> Kagent1Client | None:
    """The kagent 1.0 profile's client for these settings, or None when it does not apply (no
    kagent controller named, ``kagent_version = "0.10"``, or -- ``auto`` -- the controller does not
    answer kagent 1.0's API). With ``share_token`` (default: the settings' ``kagent_share``, from
    ``--share``), the session is opened from a share: read-only unless ``read_only`` is False (by
    default: unless ``kagent_share_writable``), since kagent's share carries no permission its
    reader can see."""
    share_token = share_token or settings.kagent_share
    if read_only is None:
        read_only = not settings.kagent_share_writable
    config = settings.server_config(store_key=store_key)
    if not (settings.kagent and settings.agent) or settings.kagent_version == "0.10":
        return None
    controller = Kagent1Controller(
        settings.kagent, user_id=settings.user_id, headers={**settings.headers, **settings.credentials}, share_token=share_token
    )
    if settings.kagent_version != "1" and not await answers_kagent1(controller, settings.agent):
        await controller.aclose()
        return None
    headers = dict(config.headers)
    if share_token:
        headers["Authorization"] = f"Bearer {share_token}"
    config = replace(config, url=a2a_url(settings.kagent, settings.agent), api=None, fallback_urls=(), headers=headers)
    reason = "this session was opened from a read-only share: it can be read, not written to" if share_token and read_only else ""
    return Kagent1Client(
        config,
        controller,
        settings.agent,
        checkpoints=settings.kagent_checkpoints,
        read_only_reason=reason,
        forks_file=settings.resolved_data_dir() / FORKS_FILE,
        http=http,
    )
