"""Helpers shared by the fault tests."""

from __future__ import annotations

from rewindtui.model import Conversation, ItemKind


def view(conversation: Conversation) -> list[tuple[str, str, str, tuple[str, ...]]]:
    """What the user sees of the conversation's content (errors and notes left out)."""
    return [
        (item.kind.value, item.role, item.text, tuple(item.message_ids))
        for item in conversation.items
        if item.kind in (ItemKind.MESSAGE, ItemKind.ARTIFACT)
    ]
