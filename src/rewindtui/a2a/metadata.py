"""ADK / kagent metadata keys: read ``adk_<key>`` first, then ``kagent_<key>``."""

from __future__ import annotations

from typing import Any

from rewindtui.a2a import contract, raw

INVOCATION_ID = "invocation_id"
AUTHOR = "author"
PARTIAL = "partial"
APP_NAME = "app_name"
SESSION_ID = "session_id"
USER_ID = "user_id"
USAGE = "usage_metadata"
TYPE = "type"

#: The metadata key of the seeds' rewind control message (see ``contract``).
REWIND_KEY = contract.REWIND_METADATA_KEY
#: kagent's system event; it has an invocation id but is never a rewind target.
HEADER_UPDATE = contract.HEADER_UPDATE_INVOCATION

#: ADK's human-in-the-loop call: a tool waits for the user's approval (the turn ends input-required).
REQUEST_CONFIRMATION = "adk_request_confirmation"

FUNCTION_CALL = "function_call"
FUNCTION_RESPONSE = "function_response"


def value(meta: Any, key: str) -> Any:
    """``meta['adk_'+key]`` if present and not None, else ``meta['kagent_'+key]``."""
    if not isinstance(meta, dict):
        return None
    found = meta.get("adk_" + key)
    if found is None:
        found = meta.get("kagent_" + key)
    return found


def invocation_id(message: Any, task_metadata: Any = None) -> str | None:
    """A message's invocation id; a message without one takes its task's."""
    found = value(raw.metadata(message), INVOCATION_ID)
    if not isinstance(found, str) or not found:
        found = value(task_metadata, INVOCATION_ID)
    return found if isinstance(found, str) and found else None


def rewind_target(invocation: str | None) -> str | None:
    """The invocation id if it may be rewound to; ``header_update`` and empty ids never are."""
    if not invocation or invocation == HEADER_UPDATE:
        return None
    return invocation


def author(message: Any) -> str | None:
    found = value(raw.metadata(message), AUTHOR)
    return found if isinstance(found, str) and found else None


def is_partial(obj: Any) -> bool:
    """True for a streaming delta (``adk_partial`` / ``kagent_adk_partial`` true)."""
    meta = raw.metadata(obj)
    found = meta.get("adk_partial")
    if found is None:
        found = meta.get("kagent_adk_partial")
    return found is True


def tool_type(part: Any) -> str | None:
    """``function_call`` / ``function_response`` for such data parts (``kagent_type`` or ``adk_type``)."""
    if raw.part_kind(part) != "data":
        return None
    found = value(raw.metadata(part), TYPE)
    if isinstance(found, str) and found in (FUNCTION_CALL, FUNCTION_RESPONSE):
        return found
    return None
