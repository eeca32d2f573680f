"""The agent's session state over REST (``GET {api}/sessions/{id}/state``, ``contract.REST_STATE``),
on a server whose card's rewind extension says it has the route (``params.state``; the embedded
server does). Any other server: not offered, and no request is made."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from rewindtui.a2a import contract
from rewindtui.client.errors import MalformedFrame
from rewindtui.client.transports.http import segment

if TYPE_CHECKING:
    from rewindtui.client.a2a_client import A2AClient


@dataclass(frozen=True)
class SessionState:
    """The state now, and per turn (its invocation id) the delta a rewind to before it applies."""

    state: dict[str, Any]
    rewind_changes: dict[str, dict[str, Any]]


def offers_state(card: Any) -> bool:
    """The card's rewind extension has ``params.state`` true."""
    extensions = (card.get("capabilities") or {}).get("extensions") if isinstance(card, dict) else None
    for ext in extensions if isinstance(extensions, list) else ():
        if isinstance(ext, dict) and ext.get("uri") == contract.EXTENSION_URI:
            params = ext.get("params")
            return isinstance(params, dict) and params.get(contract.PARAM_STATE) is True
    return False


async def session_state(client: A2AClient, session_id: str) -> SessionState | None:
    """The session's state (None: this server does not offer it)."""
    caps = await client.connect()
    if not offers_state(caps.card) or not client.has_api:
        return None
    data = await client._api("GET", contract.REST_STATE.format(id=segment(session_id)))
    state = data.get(contract.STATE_FIELD) if isinstance(data, dict) else None
    changes = data.get(contract.REWIND_CHANGES_FIELD) if isinstance(data, dict) else None
    if (
        not isinstance(state, dict)
        or not isinstance(changes, dict)
        or not all(isinstance(v, dict) for v in changes.values())
    ):
        raise MalformedFrame("the session state answer is not {state: {...}, rewind_changes: {...}}")
    return SessionState(state, changes)
