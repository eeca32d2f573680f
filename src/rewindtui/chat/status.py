"""The turn's state in the app's words, from the conversation (the server's truth), never from
the last error a caller saw: a send the server refused changed nothing (the toast says why); a
turn that failed says so until the next turn starts; an answered question ends the waiting."""

from __future__ import annotations

from dataclasses import dataclass

from rewindtui.model import CANCELED, INTERRUPTED, Conversation

_WORDS = {
    "idle": "",
    "submitted": "sending…",
    "working": "the agent is working…",
    "completed": "",
    "failed": "turn failed",
    "rejected": "turn rejected",
    CANCELED: "stopped",
    INTERRUPTED: "interrupted",
    "auth-required": "the agent needs you to sign in",
}


@dataclass(frozen=True)
class TurnStatus:
    state: str  # the conversation's turn state (A2A's, or the client's own: interrupted)
    words: str  # what a status line says ("" for nothing to say)
    failed: bool  # the last turn failed or was rejected (on the server)
    waiting: bool  # a question waits for the user's answer
    running: bool  # a turn is in flight


def turn_status(conversation: Conversation, *, sending: bool = False) -> TurnStatus:
    state = conversation.turn_state
    waiting = conversation.pending_confirmation() is not None
    if waiting:
        words = "a question waits for your answer"
    elif state == "input-required":
        words = "the agent waits for your reply"
    else:
        words = _WORDS.get(state, state)
    running = sending or state in ("submitted", "working")
    return TurnStatus(state, words, state in ("failed", "rejected"), waiting, running)
