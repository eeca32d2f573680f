"""What each tool of the embedded agent does besides answering: the mark the server puts on each
of its function-call parts (``contract.TOOL_EFFECTS_KEY``), so a client's rewind preview can say
which calls in the turns that would go acted outside the agent -- what a rewind does not undo.

The marks are this agent's declaration about its own tools (``server/agent/agent.py``):

* ``get_weather`` changes only the session state (``weather_calls``), which ADK's rewind restores.
* ``delete_file`` stands for a tool that deletes a file. The demo records the name in the session
  state only (nothing on disk is touched), but it is marked as acting outside the agent, as a real
  delete would be, so the preview shows how such a call is listed.
* ``adk_request_confirmation`` (ADK's question to the user) changes nothing.

A tool not listed here gets no mark; a client says of it that it may have had effects.
"""

from __future__ import annotations

from rewindtui.a2a import contract
from rewindtui.a2a.metadata import REQUEST_CONFIRMATION

TOOL_EFFECTS: dict[str, str] = {
    "get_weather": contract.EFFECTS_SESSION,
    "delete_file": contract.EFFECTS_OUTSIDE,
    REQUEST_CONFIRMATION: contract.EFFECTS_SESSION,
}


def effects_of(tool: str | None) -> str | None:
    """The mark for a call of ``tool`` (None: this agent says nothing about it)."""
    return TOOL_EFFECTS.get(tool or "")
