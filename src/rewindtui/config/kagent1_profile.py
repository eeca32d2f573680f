"""Which kagent, said in words, never guessed silently.

With ``kagent_version = "auto"`` (the default) the controller is asked, in this order:

1. kagent 1.0's current API: ``kagent.api.v1alpha1.SessionService/ListSessions`` over gRPC-Web
   (sessions.proto@1e2422ff). Any gRPC answer -- a page, or a refusal such as UNAUTHENTICATED --
   means the service is there: the kagent 1.0 profile.
2. When that service is not there (UNIMPLEMENTED, or a plain HTTP 404): the older 1.0 generation,
   ``AgentInstanceService/ListAgentInstances`` (agent_instances.proto@50d7a125). If it answers, the
   controller is a kagent 1.0 from before the cutover (docs/protobuf-api.md@3855fe51) and the
   connection stops with a sentence saying so: rewindtui speaks only the current API.
3. kagent 0.10's REST API: ``GET /api/sessions`` answering 0.10's JSON envelope
   (``{"error": ..., "data"|"message": ...}``, go/core/internal/httpserver/handlers, release/v0.10.x
   03e950f6e). It gets the 0.10 profile, and :class:`Detection` says why.
4. Anything else: the connection stops with one sentence naming what was asked and what came back.

``kagent_version = "1"`` or ``"0.10"`` skips the questions (the detection says it was told).
``rewindtui card`` prints the detection and which kagent features work there.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any

import httpx

from rewindtui.base.tls import default_context
from rewindtui.client.transports.http import segment
from rewindtui.config.settings import Settings
from rewindtui.kagent1.client import Kagent1Client
from rewindtui.kagent1.controller import PACKAGE, Kagent1Controller
from rewindtui.kagent1.forks import FILE as FORKS_FILE
from rewindtui.kagent1.gen import kagent1_pb2 as pb
from rewindtui.kagent1.grpcweb import GrpcError

KNOWN = "rewindtui knows kagent 0.10 (REST) and 1.0 (SessionService, kagent @1e2422ff)"
#: what says "this service is not here" (gorilla's 404 comes back as UNIMPLEMENTED; a non-gRPC
#: answer as UNKNOWN)
_NOT_SERVED = ("UNIMPLEMENTED", "UNKNOWN")
#: the A2A extension kagent's own UI asks for on every A2A call (ui/src/lib/a2aClient.ts@ae5a948e,
#: ui/src/types/index.ts: HITL_EXTENSION_URI), in the header a2a-go reads (A2A-Extensions)
HITL_EXTENSION_URI = "https://kagent.dev/extensions/hitl/v1"
EXTENSIONS_HEADER = "A2A-Extensions"
SHARE_HEADER = "X-Share-Token"  # ui/src/lib/a2aClient.ts@ae5a948e; a2agateway/http.go@3667edfe


@dataclass
class Detection:
    """What the controller turned out to be: ``api`` is ``"1.0"`` or ``"0.10"``; ``said`` is the
    sentence; ``features`` maps each kagent feature to what works there."""

    api: str
    said: str
    features: dict[str, str] = field(default_factory=dict)

    def lines(self) -> list[str]:
        return [f"kagent: {self.said}", *(f"  {name}: {what}" for name, what in self.features.items())]

    def record(self) -> dict[str, Any]:
        return {"kagent": {"api": self.api, "detected": self.said, "features": dict(self.features)}}


def features_1_0(checkpoints_on: bool) -> dict[str, str]:
    unverified = "unverified: no readable kagent file gives CheckpointService's field numbers (docs/kagent.md)"
    return {
        "sessions": "yes (SessionService: list, create, rename, suspend/resume, delete)",
        "history": "yes (A2A ListTasks by session)",
        "checkpoints": f"yes, after each finished turn; {unverified}"
        if checkpoints_on
        else f"only those taken elsewhere (kagent_checkpoints is off); {unverified}",
        "fork": "from any checkpoint; unverified (as checkpoints)",
        "rewind": "as a fork from the checkpoint before the turn; unverified (as checkpoints)",
        "shares": "yes (SessionService: create, list, revoke; opened with X-Share-Token)",
    }


FEATURES_0_10 = {
    "sessions": "yes (REST /api/sessions)",
    "history": "yes (REST /api/sessions/{id}/tasks)",
    "checkpoints": "no (kagent 0.10 has none)",
    "fork": "only with the kagent-rewind add-on on the agent",
    "rewind": "only with the kagent-rewind add-on on the agent",
    "shares": "no (not in kagent 0.10's API)",
}


def _said(exc: GrpcError) -> str:
    return f"{exc.code}: {exc.message}" if exc.message else exc.code


async def _rest_0_10(settings: Settings, http: Any) -> tuple[bool, str]:
    """(whether kagent 0.10's REST sessions answer, what came back in words)."""
    url = f"{(settings.kagent or '').rstrip('/')}/api/sessions"
    own = http is None
    client = http or httpx.AsyncClient(timeout=httpx.Timeout(15.0), verify=default_context())
    try:
        response = await client.get(
            url, params={"user_id": settings.user_id}, headers={**settings.headers, **settings.credentials}
        )
    except httpx.HTTPError as exc:
        return False, f"GET /api/sessions: {type(exc).__name__}"
    finally:
        if own:
            await client.aclose()
    try:
        body = response.json()
    except ValueError:
        body = None
    if isinstance(body, dict) and "error" in body and ("data" in body or "message" in body):
        return True, f"GET /api/sessions: HTTP {response.status_code} with kagent 0.10's envelope"
    return False, f"GET /api/sessions: HTTP {response.status_code}, not kagent 0.10's envelope"


async def detect(settings: Settings, controller: Kagent1Controller, http: Any = None) -> Detection:
    """Ask the controller which kagent it is (see the module's text); raises
    :class:`~rewindtui.config.connection.ConnectProblem` with one sentence when it is none that
    rewindtui knows."""
    from rewindtui.config.connection import CONTROLLER, KAGENT_API, ConnectProblem

    base, agent = settings.kagent or "", settings.agent or ""
    if settings.kagent_version == "1":
        return Detection(
            "1.0",
            "kagent 1.0 (SessionService), as kagent_version says (not asked)",
            features_1_0(settings.kagent_checkpoints),
        )
    if settings.kagent_version == "0.10":
        return Detection("0.10", "kagent 0.10 (REST), as kagent_version says (not asked)", dict(FEATURES_0_10))
    service = f"{PACKAGE}.SessionService"
    try:
        await controller.list_sessions(agent, limit=1)
    except GrpcError as exc:
        if exc.code == "UNAVAILABLE":  # nothing answered at all: neither kagent, said as such
            raise ConnectProblem(
                f"cannot reach the kagent controller at {base} ({exc.message})",
                CONTROLLER,
                base,
                hint="is it running (e.g. kubectl port-forward svc/kagent-controller 8083)? check --kagent",
            ) from None
        if exc.code not in _NOT_SERVED:
            # the service is there and said no (who we are, say): it is kagent 1.0; the refusal
            # comes back on the first real call, in its own words
            return Detection(
                "1.0",
                f"kagent 1.0 ({service} answered {exc.code}; kagent @1e2422ff)",
                features_1_0(settings.kagent_checkpoints),
            )
        first = exc
    else:
        return Detection("1.0", f"kagent 1.0 ({service}, kagent @1e2422ff)", features_1_0(settings.kagent_checkpoints))
    try:  # the generation before the cutover: an empty request is a valid ListAgentInstancesRequest
        await controller.call(
            f"{PACKAGE}.AgentInstanceService", "ListAgentInstances", pb.ListSessionsRequest(), pb.ListSessionsResponse
        )
    except GrpcError as exc:
        old_answers = exc.code not in _NOT_SERVED
    else:
        old_answers = True
    if old_answers:
        raise ConnectProblem(
            f"this kagent controller offers {PACKAGE}.AgentInstanceService, kagent 1.0's API before its cutover to "
            f"SessionService (kagent docs/protobuf-api.md @3855fe51), and not {service} ({_said(first)}); {KNOWN}",
            KAGENT_API,
            base,
        )
    rest, rest_said = await _rest_0_10(settings, http)
    if rest:
        return Detection(
            "0.10", f"kagent 0.10 (REST: {rest_said}); it does not offer {service} ({first.code})", dict(FEATURES_0_10)
        )
    raise ConnectProblem(
        f"this kagent controller does not offer {service} ({_said(first)}) nor kagent 0.10's REST sessions "
        f"({rest_said}); {KNOWN}",
        KAGENT_API,
        base,
    )


def a2a_url(kagent: str, agent: str) -> str:
    """kagent 1.0's A2A route of an agent: ``POST /agents/{ns}/{name}`` (docs/protobuf-api.md@3855fe51;
    over gRPC the A2A ``tenant`` is ``ns/name``)."""
    namespace, _, name = agent.partition("/")
    return f"{kagent.rstrip('/')}/agents/{segment(namespace)}/{segment(name)}"


async def kagent_profile(
    settings: Settings,
    store_key: str | None = None,
    http: Any = None,
    *,
    share_token: str | None = None,
    read_only: bool | None = None,
) -> tuple[Kagent1Client | None, Detection | None]:
    """The kagent 1.0 client for these settings (None: the 0.10 profile, or no kagent named) and
    what was detected (None: no kagent controller named). With ``share_token`` (default: the
    settings' ``kagent_share``, from ``--share``), the session is opened from a share: read-only
    unless ``read_only`` is False (by default: unless ``kagent_share_writable``), since kagent's
    share carries no permission its reader can see."""
    share_token = share_token or settings.kagent_share
    if read_only is None:
        read_only = not settings.kagent_share_writable
    if not (settings.kagent and settings.agent):
        return None, None
    config = settings.server_config(store_key=store_key)
    controller = Kagent1Controller(
        settings.kagent,
        user_id=settings.user_id,
        headers={**settings.headers, **settings.credentials},
        share_token=share_token,
    )
    try:
        detection = await detect(settings, controller, http)
    except BaseException:
        await controller.aclose()
        raise
    if detection.api != "1.0":
        await controller.aclose()
        return None, detection
    headers = {**config.headers, EXTENSIONS_HEADER: HITL_EXTENSION_URI}
    if share_token:
        headers[SHARE_HEADER] = share_token  # beside the user's own credentials, never as one
    config = replace(config, url=a2a_url(settings.kagent, settings.agent), api=None, fallback_urls=(), headers=headers)
    reason = (
        "this session was opened from a read-only share: it can be read, not written to"
        if share_token and read_only
        else ""
    )
    client = Kagent1Client(
        config,
        controller,
        settings.agent,
        checkpoints=settings.kagent_checkpoints,
        read_only_reason=reason,
        forks_file=settings.resolved_data_dir() / FORKS_FILE,
        http=http,
    )
    return client, detection


async def kagent1_client(
    settings: Settings,
    store_key: str | None = None,
    http: Any = None,
    *,
    share_token: str | None = None,
    read_only: bool | None = None,
) -> Kagent1Client | None:
    """:func:`kagent_profile`'s client alone."""
    client, _ = await kagent_profile(settings, store_key, http, share_token=share_token, read_only=read_only)
    return client
