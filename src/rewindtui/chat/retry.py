"""Retry of a failed turn: which message to send again, and where it was taken (pure, no I/O).

A turn that failed (the model refused the key, ran out of quota, timed out ...) keeps the user's
message in the view. Retrying it is a rewind-and-send of that turn: the failed turn goes to the
session's rewound branches and its message is sent again as one clean turn, so the model sees it
once. ``send --retry`` does this; the app binds it to ``/retry``
(both through :meth:`rewindtui.chat.Chat.retry`). The message goes again whole: its text and the
files and data parts it carried.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from rewindtui.a2a import raw
from rewindtui.a2a.parts import part_bytes, part_info
from rewindtui.client.attachments import DEFAULT_MEDIA_TYPE, Attachment, DataAttachment, FileAttachment

#: turn states a retry applies to
RETRYABLE_STATES = ("failed",)


@dataclass(frozen=True)
class RetryTarget:
    text: str
    #: the failed turn's invocation (rewind before it); None: the server never took the message
    invocation_id: str | None
    message_id: str | None
    #: the failed turn's task
    task_id: str | None = None
    #: False: the view does not say the turn failed, only that it ended with an error line (a
    #: session read back from the server): ask the server for the task's state first
    certain: bool = True
    #: the files and data parts the failed message carried, to send again with its text
    attachments: tuple[Attachment, ...] = ()


def attachments_of(message: Any) -> tuple[Attachment, ...]:
    """A sent message's file and data parts as attachments again (text parts are its text; a part
    that is neither is left out, as the composer could not have sent it)."""
    out: list[Attachment] = []
    for p in raw.parts(message):
        info = part_info(p)
        if info.kind == "data":
            out.append(DataAttachment(info.data))
        elif info.kind == "file":
            data = part_bytes(p) if info.inline else None
            if data is None and not info.url:
                continue
            name = info.name or "attachment"
            out.append(FileAttachment(name, info.media_type or DEFAULT_MEDIA_TYPE, data=data, url=info.url or None))
    return tuple(out)


def retry_target(conversation: Any) -> RetryTarget | None:
    """The last turn's user message if that turn failed (or, read back from the server, ended
    with an error line); None if there is nothing to retry."""
    items = conversation.items
    certain = conversation.turn_state in RETRYABLE_STATES
    if not certain and not (conversation.turn_state == "idle" and items and items[-1].kind.value == "error"):
        return None
    for item in reversed(items):
        if item.role == "user":
            attachments = attachments_of(getattr(item, "raw", None))
            if not item.text.strip() and not attachments:
                return None
            if not certain and item.task_id != items[-1].task_id:
                return None
            message_id = item.message_ids[0] if item.message_ids else None
            return RetryTarget(item.text, item.invocation_id or None, message_id, item.task_id, certain, attachments)
    return None
