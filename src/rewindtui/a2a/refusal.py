"""A rewind refusal as the rewind contract words it (a failed status with a reason code).

``invalid_invocation`` means the turn is not (or no longer) an effective turn of the session: most
often another client rewound it first. The view then shows a turn the server no longer has, so the
client re-reads the session instead of keeping it. Older kagent-rewind add-ons put ``rewind refused:``
in front of their reason; the client says that itself, once.
"""

from __future__ import annotations

from rewindtui.a2a import contract, raw
from rewindtui.a2a.classify import StreamEvent

INVALID_INVOCATION = contract.CODE_INVALID_INVOCATION
_PREFIX = "rewind refused: "


def code_of(event: StreamEvent) -> str | None:
    """The refusal's reason code (status-update or task metadata), if any."""
    body = event.body if isinstance(event.body, dict) else {}
    for holder in (raw.metadata(body), raw.metadata(body.get("status"))):
        code = holder.get(contract.ERROR_CODE_KEY)
        if isinstance(code, str):
            return code
    return None


def turn_gone(event: StreamEvent) -> bool:
    """True when the refusal says the turn is no longer on the server."""
    return code_of(event) == INVALID_INVOCATION


def refusal_reason(text: str) -> str:
    """The server's reason without a leading ``rewind refused:`` (the client adds it once)."""
    while text.startswith(_PREFIX):
        text = text[len(_PREFIX) :]
    return text
