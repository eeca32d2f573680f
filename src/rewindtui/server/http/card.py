"""The agent card, rendered the a2a-sdk way (1.0 fields plus 0.3 compat fields).

A client picks its binding and dialect from the card: ``supportedInterfaces``
lists the JSON-RPC endpoint twice, ``protocolVersion: "1.0"`` first (send
``A2A-Version: 1.0`` and ``SendStreamingMessage``) and ``"0.3.0"`` second,
then the HTTP+JSON binding (A2A 1.0: ``POST {url}/message:stream`` ...) at the
same URL; 0.3-only clients read the top-level ``url``/``preferredTransport``/
``protocolVersion`` (``0.3.0``) and speak ``message/stream``.

Rewind and fork support is advertised as an A2A extension in
``capabilities.extensions``::

    {"uri": "urn:rewindtui:ext:rewind:v1",
     "params": {"rewind": ["a2a", "rest"], "fork": true, "redo": true, "api": "<base>/api",
                "metadata_key": "kagent_rewind_before_invocation_id"}}

``rewind: ["a2a", "rest"]`` -- a message whose ``metadata`` carries
``metadata_key`` rewinds (the A2A control message), and ``POST
{api}/sessions/{id}/rewind`` does the same over REST; ``fork`` -- ``POST
{api}/sessions/{id}/fork`` exists; ``redo`` -- ``POST {api}/sessions/{id}/redo`` undoes a rewind.
"""

from __future__ import annotations

from typing import Any

from a2a.server.request_handlers.response_helpers import agent_card_to_dict
from a2a.types import a2a_pb2 as pb

from rewindtui.a2a import contract
from rewindtui.server.http.front_card import (
    BEARER_SCHEME,
    EXTENSION_DESCRIPTION,
    TOKEN_DESCRIPTION,
    USERS_TOKEN_DESCRIPTION,
    version,
)
from rewindtui.server.shared.wire import REWIND_EXTENSION_URI, REWIND_KEY


def build_agent_card(
    *, agent_url: str, api_url: str, name: str, model: str, needs_token: bool = False, users: bool = False
) -> pb.AgentCard:
    """The card; ``needs_token`` declares the bearer token every request (but this card) needs,
    ``users`` (``serve --users``) each user's own bearer token."""
    extension = pb.AgentExtension(
        uri=REWIND_EXTENSION_URI,
        description=EXTENSION_DESCRIPTION,
        required=False,
    )
    extension.params.update(
        {
            contract.PARAM_REWIND: list(contract.MODES),
            contract.PARAM_FORK: True,
            contract.PARAM_REDO: True,
            contract.PARAM_API: api_url,
            contract.PARAM_METADATA_KEY: REWIND_KEY,
            contract.PARAM_NEWEST_TASK: True,
            contract.PARAM_STATE: True,
        }
    )
    card = pb.AgentCard(
        name=name,
        description=f"rewindtui's local agent (model: {model}); rewind and fork supported",
        version=version(),
        supported_interfaces=[
            pb.AgentInterface(url=agent_url, protocol_binding="JSONRPC", protocol_version="1.0"),
            pb.AgentInterface(url=agent_url, protocol_binding="JSONRPC", protocol_version="0.3.0"),
            # the HTTP+JSON routes hang under it ("{url}/message:send"): its URL without the trailing slash,
            # so a plain join of URL and route (as the A2A TCK makes) gives no "//"
            pb.AgentInterface(url=agent_url.rstrip("/"), protocol_binding="HTTP+JSON", protocol_version="1.0"),
        ],
        capabilities=pb.AgentCapabilities(streaming=True, push_notifications=True, extensions=[extension]),
        default_input_modes=["text"],
        default_output_modes=["text"],
        skills=[
            pb.AgentSkill(
                id="chat",
                name="chat",
                description="Answers what you say; 'weather in <City>' calls the get_weather tool",
                tags=["chat", "weather", "rewind"],
                examples=["hello", "what is the weather in Tokyo?"],
            )
        ],
    )
    if needs_token or users:
        card.security_schemes[BEARER_SCHEME].http_auth_security_scheme.scheme = "Bearer"
        card.security_schemes[BEARER_SCHEME].http_auth_security_scheme.description = (
            USERS_TOKEN_DESCRIPTION if users else TOKEN_DESCRIPTION
        )
        card.security_requirements.add().schemes[BEARER_SCHEME].SetInParent()
    return card


def grpc_interface(url: str) -> pb.AgentInterface:
    """The gRPC binding's entry in ``supportedInterfaces`` (after the HTTP ones: clients that speak
    several keep using HTTP unless told otherwise)."""
    return pb.AgentInterface(url=url, protocol_binding="GRPC", protocol_version="1.0")


def agent_card_json(card: pb.AgentCard) -> dict[str, Any]:
    """The card as served: 1.0 JSON merged with the 0.3 compat fields (a2a-sdk's rendering)."""
    return agent_card_to_dict(card)
