"""A stored row whose text cannot be decoded does not make its session unreadable.

SQLite hands back TEXT as bytes; a few garbled bytes inside one stored message (``PRAGMA
integrity_check`` still says ok) made Python's sqlite3 raise "Could not decode to UTF-8 column
'body'" for the whole query, and so a bare HTTP 500 for the whole session. The store's
connections decode with :func:`decode_text` instead: valid UTF-8 as usual, anything else as a
:class:`BadText` (the text with U+FFFD in place of the bad bytes, and the reason). A message body
that is a BadText is answered as :func:`placeholder` -- a message saying it could not be read and
why -- and logged with its row id; everything else in the session reads as stored.
"""

from __future__ import annotations

import json
import logging
import re
from typing import Any

log = logging.getLogger(__name__)

_MESSAGE_ID = re.compile(r'"messageId"\s*:\s*"([^"\\]{1,200})"')


class BadText(str):
    """Text from the database that was not valid UTF-8 (decoded with replacement characters)."""

    reason: str = ""


def decode_text(raw: bytes) -> str:
    """The store's ``text_factory``: UTF-8, or a BadText saying where it is not."""
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        text = BadText(raw.decode("utf-8", "replace"))
        text.reason = f"its stored text is not valid UTF-8 (at byte {exc.start} of {len(raw)})"
        return text


def checked_body(body: Any, seq: Any, *, v1: bool) -> str:
    """A message body as stored, or a placeholder message when it cannot be decoded (logged)."""
    if not isinstance(body, BadText):
        return str(body)
    log.warning("stored message %s cannot be read: %s; answered as a placeholder", seq, body.reason)
    return placeholder(body, seq, body.reason, v1=v1)


def placeholder(garbled: str, seq: Any, reason: str, *, v1: bool) -> str:
    """A message (0.3 JSON, or 1.0 with ``v1``) standing in for an unreadable stored one: its
    messageId when it can still be found, role agent, one text part with the reason."""
    found = _MESSAGE_ID.search(garbled)
    message_id = found.group(1) if found else f"unreadable-{seq}"
    text = f"(this message could not be read from the store: {reason}; stored message #{seq})"
    if v1:
        message: dict[str, Any] = {"messageId": message_id, "role": "ROLE_AGENT", "parts": [{"text": text}]}
    else:
        message = {"kind": "message", "messageId": message_id, "role": "agent", "parts": [{"kind": "text", "text": text}]}
    message["metadata"] = {"rewindtui_unreadable": True}
    return json.dumps(message, ensure_ascii=False)
