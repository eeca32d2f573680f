"""The agent card as plain JSON, for the server's front (:mod:`rewindtui.server.http.front`).

The full app renders its card with a2a-sdk's server half (:mod:`rewindtui.server.http.card`),
whose import takes about a second; the front answers the card before that is loaded, so it
renders the same JSON here from the standard library alone. ``tests/server/test_front_card.py``
holds the two renderings equal (with and without a token), so a change to one that the other
does not follow fails there.
"""

from __future__ import annotations

from importlib import metadata as importlib_metadata
from typing import Any

from rewindtui.a2a import contract

#: the card's words, for both renderings (``card.build_agent_card`` takes them from here)
EXTENSION_DESCRIPTION = (
    "Rewind a session to before an invocation (ADK Runner.rewind_async), over A2A "
    "(message metadata key) or REST, undo a rewind (redo, REST), and fork a session; the result is a Task whose "
    "history is the effective history, with the original messageIds."
)
TOKEN_DESCRIPTION = "the token the server was started with (REWINDTUI_SERVER_TOKEN)"
#: a server with users (``serve --users``): each user's own token
USERS_TOKEN_DESCRIPTION = "your own token (rewindtui team token NAME makes one)"
BEARER_SCHEME = "bearer"


def version() -> str:
    try:
        return importlib_metadata.version("rewindtui")
    except importlib_metadata.PackageNotFoundError:  # pragma: no cover - running from a source tree
        return "0.0.0"


def plain_agent_card(
    *, agent_url: str, api_url: str, name: str, model: str, needs_token: bool = False, users: bool = False
) -> dict[str, Any]:
    """The card's JSON as ``card.agent_card_json(card.build_agent_card(...))`` renders it."""
    card: dict[str, Any] = {
        "name": name,
        "description": f"rewindtui's local agent (model: {model}); rewind and fork supported",
        "supportedInterfaces": [
            {"url": agent_url, "protocolBinding": "JSONRPC", "protocolVersion": "1.0"},
            {"url": agent_url, "protocolBinding": "JSONRPC", "protocolVersion": "0.3.0"},
            {"url": agent_url.rstrip("/"), "protocolBinding": "HTTP+JSON", "protocolVersion": "1.0"},
        ],
        "version": version(),
        "capabilities": {
            "streaming": True,
            "pushNotifications": True,
            "extensions": [
                {
                    "uri": contract.EXTENSION_URI,
                    "description": EXTENSION_DESCRIPTION,
                    "params": {
                        contract.PARAM_API: api_url,
                        contract.PARAM_FORK: True,
                        contract.PARAM_REDO: True,
                        contract.PARAM_REWIND: list(contract.MODES),
                        contract.PARAM_METADATA_KEY: contract.REWIND_METADATA_KEY,
                        contract.PARAM_NEWEST_TASK: True,
                        contract.PARAM_STATE: True,
                    },
                    "required": False,
                }
            ],
        },
    }
    described = USERS_TOKEN_DESCRIPTION if users else TOKEN_DESCRIPTION
    if needs_token or users:
        card["securitySchemes"] = {
            BEARER_SCHEME: {
                "httpAuthSecurityScheme": {"description": described, "scheme": "Bearer"},
                # the 0.3 compat fields a2a-sdk adds beside the 1.0 ones
                "description": described,
                "scheme": "Bearer",
                "type": "http",
            }
        }
        card["securityRequirements"] = [{"schemes": {BEARER_SCHEME: {}}}]
    card["defaultInputModes"] = ["text"]
    card["defaultOutputModes"] = ["text"]
    card["skills"] = [
        {
            "id": "chat",
            "name": "chat",
            "description": "Answers what you say; 'weather in <City>' calls the get_weather tool",
            "tags": ["chat", "weather", "rewind"],
            "examples": ["hello", "what is the weather in Tokyo?"],
        }
    ]
    # A2A 0.3 compat fields (a2a-sdk's agent_card_to_dict adds them for 0.3 clients)
    card["preferredTransport"] = "JSONRPC"
    card["protocolVersion"] = "0.3.0"
    if needs_token or users:
        card["security"] = [{BEARER_SCHEME: []}]
    card["url"] = agent_url
    return card
