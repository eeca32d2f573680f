"""``/compact``: the turns so far summarized into one turn, undoably.

How: the agent is asked for a summary (one ordinary turn, so the summary is the model's own
words -- not ADK's event compaction, which rewindtui does not drive), then the session is rewound
to before its first turn and the summary sent in its place, as one rewind-and-send (an edit of
the first turn). The original turns and the summary request stay on the server as a rewound
branch: the one undo (ctrl+z) brings them back, F4 shows them. It needs a server that can
rewind-and-send (the embedded server, the kagent add-on); elsewhere it is not offered.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from rewindtui.chat.permissions import Action
from rewindtui.client.errors import ClientError
from rewindtui.model import ItemKind

if TYPE_CHECKING:
    from rewindtui.chat.core import Chat

#: what the agent is asked
PROMPT = (
    "Summarize our conversation so far in a few sentences: what was asked, what was done, and "
    "what is still open. Answer with the summary only."
)
#: how the summary turn begins (the rest is the agent's answer to PROMPT)
LEAD = "Summary of the conversation before this point (written by the agent for /compact):"


class CompactFailed(ClientError):
    """The agent gave no summary: nothing was rewound (its answer stays as a turn)."""


@dataclass(frozen=True)
class Compacted:
    turns: int  # how many turns the summary replaced
    summary: str


def why_not_compact(chat: Chat) -> str:
    """'' when ``/compact`` can run now, else why not (in the app's words)."""
    caps = chat.client.capabilities
    if caps is None or not caps.can_rewind or caps.rewind_off:
        return "Compacting is not offered by this server: it needs a server that can rewind."
    reason = chat.why_not(Action.EDIT)
    if reason:
        return f"Cannot compact now: {reason.rstrip('.')}."
    if len(chat.conversation.turn_invocations()) < 2:
        return "Nothing to compact: there are fewer than two turns."
    return ""


def summary_of(chat: Chat, before: int) -> str:
    """The agent's text after item ``before`` (the answer to PROMPT), '' when there is none."""
    items = chat.conversation.items[before:]
    texts = [it.text.strip() for it in items if it.role == "agent" and it.kind is ItemKind.MESSAGE and it.text.strip()]
    return "\n\n".join(texts)


async def compact(chat: Chat) -> Compacted:
    """Ask for the summary, then rewind to before the first turn and send it in their place."""
    turns = chat.conversation.turn_invocations()
    before = len(chat.conversation.items)
    await chat.send(PROMPT)
    summary = summary_of(chat, before)
    if chat.conversation.turn_state != "completed" or not summary:
        raise CompactFailed("the agent gave no summary, so nothing was compacted (its answer stays as a turn)")
    await chat.rewind(turns[0], f"{LEAD}\n\n{summary}")
    return Compacted(len(turns), summary)
