"""Tool calls waiting for the user's approval (ADK's tool confirmation), as kagent-adk 0.10.4
handles them (``kagent/adk/_agent_executor.py``):

* a tool calls ``tool_context.request_confirmation(...)``; ADK yields an
  ``adk_request_confirmation`` function call (a long-running tool call) and then the tool's
  response carrying ``actions.requested_tool_confirmations``. The turn stops there, before another
  model call (``_handle_request``: "Stop here, before another model call"), and ends
  ``input-required`` with the question as its status message;
* the user answers with the waiting task's ``taskId`` and a ``{"decision_type": "approve" |
  "reject"}`` data part; the answer becomes one ``adk_request_confirmation`` function response per
  pending question (``_find_pending_confirmations``, ``_process_hitl_decision``), and ADK resumes
  the same invocation with it.
"""

from __future__ import annotations

from typing import Any

from google.adk.tools.tool_confirmation import ToolConfirmation
from google.genai import types

from rewindtui.a2a.metadata import REQUEST_CONFIRMATION


def asks_for_confirmation(event: Any) -> bool:
    """The event is the confirmation question (a long-running ``adk_request_confirmation`` call)."""
    ids = event.long_running_tool_ids or set()
    return any(call.name == REQUEST_CONFIRMATION and call.id in ids for call in event.get_function_calls())


def pending(events: list[Any]) -> dict[str, dict[str, Any] | None]:
    """The latest questions not answered yet: their call id -> the payload the tool gave
    (kagent-adk's ``_find_pending_confirmations``: scan back to the last questions asked)."""
    asked: dict[str, dict[str, Any] | None] = {}
    answered: set[str] = set()
    for event in reversed(events):
        for response in event.get_function_responses():
            if response.name == REQUEST_CONFIRMATION and response.id:
                answered.add(response.id)
        for call in event.get_function_calls():
            if call.name == REQUEST_CONFIRMATION and call.id:
                confirmation = (call.args or {}).get("toolConfirmation")
                payload = confirmation.get("payload") if isinstance(confirmation, dict) else None
                asked[call.id] = dict(payload) if isinstance(payload, dict) else None
        if asked:
            break
    return {call_id: payload for call_id, payload in asked.items() if call_id not in answered}


def answer(events: list[Any], approve: bool) -> types.Content | None:
    """The user's answer to every pending question as ADK's new message (None: none is pending)."""
    questions = pending(events)
    if not questions:
        return None
    parts = [
        types.Part(
            function_response=types.FunctionResponse(
                name=REQUEST_CONFIRMATION,
                id=call_id,
                response={"response": ToolConfirmation(confirmed=approve, payload=payload).model_dump_json()},
            )
        )
        for call_id, payload in questions.items()
    ]
    return types.Content(role="user", parts=parts)
