"""What a rewind-like operation did, in the app's words: one type for rewind, edit, fork, redo,
restore and undo."""

from __future__ import annotations

from dataclasses import dataclass

from rewindtui.chat.permissions import Action
from rewindtui.client.a2a_client import Session


def plural(count: int, word: str) -> str:
    return f"{count} {word}{'' if count == 1 else 's'}"


@dataclass(frozen=True)
class Outcome:
    action: Action
    session_id: str | None
    #: what happened, one sentence in the app's words ("Rewound 2 turns.")
    said: str
    #: turns taken out of the conversation (they are kept on the server as rewound turns)
    turns_gone: int = 0
    #: turns that came back
    turns_back: int = 0
    #: what the one undo would undo now (None: nothing); see Chat.undo_label()
    undo_label: str | None = None
    #: fork: the new session (opened)
    session: Session | None = None
    #: something went half way (e.g. a restore brought the whole branch back but could not
    #: rewind its later turns again): said to the user as a warning
    warning: str = ""

    # a fork's outcome reads like the Session it made (callers written before Outcome)
    @property
    def id(self) -> str:
        return self.session.id if self.session is not None else (self.session_id or "")

    @property
    def name(self) -> str:
        return self.session.name if self.session is not None else ""
