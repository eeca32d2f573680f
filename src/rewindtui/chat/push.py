"""Push notifications, the chat's side: a turn whose stream was cut, finished from its notification.

The client layer receives notifications (:mod:`rewindtui.client.push`: the loopback receiver,
:class:`~rewindtui.client.push.SendPush`); putting a notified task into the conversation is the
chat's, as re-reading the task would.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from rewindtui.a2a.classify import EventKind, StreamEvent
from rewindtui.a2a.dialect import norm_state
from rewindtui.client.push import PushReceiver, SendPush

if TYPE_CHECKING:
    from rewindtui.chat.base import ChatBase


def turn_task_id(chat: ChatBase) -> str | None:
    """The task of the chat's last sent message (its user item carries it once the server said it)."""
    message_id = chat.last_message_id
    for item in reversed(chat.conversation.items):
        if item.task_id and (message_id is None or message_id in item.message_ids):
            return str(item.task_id)
    found = chat.interrupted_task_id
    return str(found) if found else None


def show_notified(chat: ChatBase, task: dict[str, Any]) -> str:
    """Put a notified task into ``chat``'s view (as re-reading it would); the turn's state."""
    conversation = chat.conversation
    conversation.apply(StreamEvent(EventKind.TASK, task))
    state = norm_state((task.get("status") or {}).get("state"))
    conversation.turn_state = state
    return state


async def finish_from_push(chat: ChatBase, receiver: PushReceiver, task_id: str, timeout: float | None) -> str:
    """Wait for the notification of ``task_id`` and show the task in ``chat``'s view; the turn's
    state. TimeoutError when no notification came in time."""
    return show_notified(chat, await receiver.wait_for(task_id, timeout))


async def finish_send(chat: ChatBase, push: SendPush) -> str | None:
    """After ``TurnInterrupted`` in ``rewindtui send --push``: the turn's state from its
    notification, shown in ``chat`` (None: no receiver of ours, or no task id to wait for).
    PushTimeout when none came."""
    task_id = turn_task_id(chat)
    if task_id is None:
        return None
    task = await push.notified(task_id)
    return None if task is None else show_notified(chat, task)
