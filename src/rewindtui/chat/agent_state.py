"""``/state``: the agent's session state where the server exposes it, and what a rewind to a
chosen turn would change in it, in words (the embedded server answers both; ADK computes the
change). Pure words here, and the one read (``client.state_api``)."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from rewindtui.base.textsafe import sanitize_line
from rewindtui.client.state_api import SessionState, session_state

__all__ = ["NOT_OFFERED", "SessionState", "change_lines", "read_state", "value_text"]

NOT_OFFERED = "The agent's state is not offered by this server."
#: the longest value shown on one line
VALUE_WIDTH = 70


async def read_state(client: Any, session_id: str) -> SessionState | None:
    """The state of ``session_id`` (None: not offered by this server)."""
    return await session_state(client, session_id)


def value_text(value: Any, width: int = VALUE_WIDTH) -> str:
    """A value on one line, at most ``width`` characters."""
    try:
        text = json.dumps(value, ensure_ascii=False, default=str)
    except (TypeError, ValueError):
        text = repr(value)
    text = sanitize_line(text)
    return text if len(text) <= width else text[: width - 1] + "…"


def change_lines(state: Mapping[str, Any], delta: Mapping[str, Any]) -> list[str]:
    """What applying ``delta`` (ADK's rewind state delta) to ``state`` changes, one line a key,
    sorted by key; an empty list when nothing changes."""
    lines = []
    for key in sorted(delta):
        new = delta[key]
        name = sanitize_line(str(key))
        if new is None:
            # ADK's rewind writes None for a key set after the point: the key stays, as null
            if state.get(key) is not None:
                lines.append(f"{name}: {value_text(state[key])} → null (set after that point)")
        elif key not in state:
            lines.append(f"{name}: not set → {value_text(new)}")
        elif state[key] != new:
            lines.append(f"{name}: {value_text(state[key])} → {value_text(new)}")
    return lines
