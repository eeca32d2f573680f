"""An A2A agent that wants a bearer token from the test OAuth server: a2a-sdk's own
``DefaultRequestHandler`` + ``create_jsonrpc_routes`` (the echo executor of
``tests/a2a_servers/a2a_servers.py``) behind an ASGI check that lets the agent card through and
asks the :class:`~oauth_server.AuthServer` about every other request's token (401 otherwise).
Its card names the OAuth server in its security schemes (an ``oauth2`` scheme with the
client-credentials and device-code flows, and an ``openIdConnect`` scheme), and says it has an
extended card (a2a-sdk serves it to ``GetExtendedAgentCard``, here only with a valid token).
Every request is recorded (path, Authorization header)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from a2a.server.request_handlers import DefaultRequestHandler
from a2a.server.routes import create_agent_card_routes, create_jsonrpc_routes
from a2a.server.tasks.inmemory_task_store import InMemoryTaskStore
from a2a.types import a2a_pb2 as pb
from starlette.applications import Starlette

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "a2a_servers"))
from a2a_servers import EchoExecutor, card

CARD_PATH = "/.well-known/agent-card.json"


def protected_card(url: str, issuer: str, *, oidc: bool = True, flows: bool = True) -> pb.AgentCard:
    agent_card = card(url, only_03=False)
    agent_card.name = "protected-echo"
    agent_card.capabilities.extended_agent_card = True
    if flows:
        client = agent_card.security_schemes["oauth"].oauth2_security_scheme.flows.client_credentials
        client.token_url = issuer + "/token"
        client.scopes["agent"] = "use the agent"
        device = agent_card.security_schemes["oauth"].oauth2_security_scheme.flows.device_code
        device.token_url = issuer + "/token"
        device.device_authorization_url = issuer + "/device_authorization"
        device.scopes["agent"] = "use the agent"
    if oidc:
        agent_card.security_schemes["oidc"].open_id_connect_security_scheme.open_id_connect_url = (
            issuer + "/.well-known/openid-configuration"
        )
    return agent_card


def extended_card(public: pb.AgentCard) -> pb.AgentCard:
    extended = pb.AgentCard()
    extended.CopyFrom(public)
    extended.description = "the extended card: for signed-in users only"
    extended.skills.append(
        pb.AgentSkill(id="secret-skill", name="secret skill", description="only for members", tags=["x"])
    )
    return extended


class Guard:
    """ASGI: the card is public; anything else needs a token ``valid(token)`` accepts."""

    def __init__(self, app: Any, valid: Any) -> None:
        self.app, self.valid = app, valid
        self.seen: list[tuple[str, str | None]] = []

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            return await self.app(scope, receive, send)
        headers = {k.decode().lower(): v.decode() for k, v in scope["headers"]}
        auth = headers.get("authorization")
        self.seen.append((scope["path"], auth))
        if scope["path"] != CARD_PATH:
            token = auth[7:] if auth and auth.startswith("Bearer ") else ""
            if not self.valid(token):
                await send(
                    {
                        "type": "http.response.start",
                        "status": 401,
                        "headers": [(b"content-type", b"application/json"), (b"www-authenticate", b"Bearer")],
                    }
                )
                await send({"type": "http.response.body", "body": b'{"error": "invalid_token"}'})
                return None
        return await self.app(scope, receive, send)


def protected_app(url: str, issuer: str, valid: Any, agent_card: pb.AgentCard | None = None, **kw: Any) -> Guard:
    agent_card = agent_card or protected_card(url, issuer, **kw)
    handler = DefaultRequestHandler(
        agent_executor=EchoExecutor(),
        task_store=InMemoryTaskStore(),
        agent_card=agent_card,
        extended_agent_card=extended_card(agent_card),
    )
    (rpc,) = create_jsonrpc_routes(handler, "/", enable_v0_3_compat=True)
    return Guard(Starlette(routes=[rpc, *create_agent_card_routes(agent_card)]), valid)
