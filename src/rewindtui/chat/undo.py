"""The one undo, read from the server: which rewind of a session can be undone now, and how to
say it.

The server keeps every rewind as a task (``contract.EFFECTIVE_HISTORY_KEY``; a redo -- the undo of
a rewind -- also carries ``contract.REDO_OF_KEY``) and every rewound task with the rewind that took
it away (``contract.REWOUND_BY_TASK_KEY``). So what can be undone survives a restart:

* the session's last rewind, when nothing came after it but undos of later rewinds (the server's
  own "last rewind", ``SessionLog.last_rewind``): undoing it brings its turns back;
* an edit-and-resend: a rewind followed by exactly the one turn that the edit sent (its user
  message carries :data:`EDIT_OF_KEY`, set by this client). Undoing it brings the rewound turns
  back; the edited turn becomes a rewound branch (shown with the rewound turns): nothing is lost.

A plain send after a rewind ends the rewind's undo (the server's redo refuses it too); a send is
never undone. Pure: task dicts in, an :class:`UndoPoint` out.

Two steps are the app's own, kept by the chat per session beside what the server says (each with
the session's turns as they were right after it, so a step is taken only on the state it was made
on -- another client's change in between refuses it):

* a restore of a rewound branch (F4): its undo rewinds again before the turns that came back
  (:class:`UndoPoint` of kind ``"restore"``);
* what the undo undid: a :class:`RedoPoint` -- the same rewind again, or the same restore again.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from rewindtui.a2a import contract, raw
from rewindtui.chat.outcome import plural

#: Message metadata this client puts on the new turn of an edit-and-resend: the invocation the
#: edit replaced. Servers keep a message's metadata; ours stores it with the message.
EDIT_OF_KEY = "rewindtui_edit_of"
#: How many of a session's newest tasks (rewound ones included) are read to find the undo.
UNDO_PAGE = 100


@dataclass(frozen=True)
class UndoPoint:
    session_id: str
    rewind_task_id: str  # the rewind whose undo (a redo of it) this is
    kind: str  # "rewind" | "edit" | "restore"
    turns: int | None  # the turns it took away (restore: brought back; None: more than the page read shows)
    #: restore: the first turn that came back (its undo rewinds before it)
    before: str = ""
    #: restore: the session's turn invocations right after it (the undo acts only on that state)
    fingerprint: tuple[str, ...] = ()

    @property
    def label(self) -> str:
        count = "its turns" if self.turns is None else plural(self.turns, "turn")
        if self.kind == "restore":
            return f"undo the restore of {count}"
        if self.kind == "edit":
            return f"undo the edit ({count} back; the edited turn kept as a rewound branch)"
        if self.turns is None:
            return "undo the last rewind"
        return f"undo the rewind of {count}"


def _rewound(task: dict[str, Any]) -> bool:
    return raw.metadata(task).get(contract.REWOUND_KEY) is True


def _is_rewind(task: dict[str, Any]) -> bool:
    return raw.metadata(task).get(contract.EFFECTIVE_HISTORY_KEY) is True


def _is_redo(task: dict[str, Any]) -> bool:
    return _is_rewind(task) and bool(raw.metadata(task).get(contract.REDO_OF_KEY))


def _edited(turn: dict[str, Any]) -> bool:
    return any(
        raw.metadata(m).get(EDIT_OF_KEY) for m in raw.history(turn) if isinstance(m, dict) and raw.role(m) == "user"
    )


def history_read(tasks: Sequence[Any]) -> str | None:
    """The id of the one task whose messages :func:`undo_point` reads (is the turn after a rewind
    an edit's?): the newest current task that is no redo, when it is a turn; None when that is a
    rewind (or there is none). The others' histories it never reads."""
    for task in reversed([t for t in tasks if isinstance(t, dict) and not _rewound(t)]):
        if _is_redo(task):
            continue  # an undo's Task: the turn before it counts (undo_point walks past it too)
        return None if _is_rewind(task) else raw.text_or_none(task.get("id"))
    return None


def undo_point(session_id: str, tasks: Sequence[Any], *, whole: bool = True) -> UndoPoint | None:
    """What the one undo would undo in this session, from its tasks (oldest first; rewound ones
    included or not; ``whole``: the list starts at the session's first task, else it is its
    newest page). How many turns a rewind took: as its Task says (``contract.REWOUND_TURNS_KEY``),
    else counted from the rewound tasks listed, else unknown (None)."""
    listed = [t for t in tasks if isinstance(t, dict)]
    current = [t for t in listed if not _rewound(t)]
    after: list[dict[str, Any]] = []  # turns after the rewind, newest first
    for task in reversed(current):
        if not _is_rewind(task):
            after.append(task)
            if len(after) > 1:
                return None
            continue
        if raw.metadata(task).get(contract.FORK_TASK_FORKED_FROM_KEY):
            return None  # where a fork began: a copy of another session's turns, no rewind of this one
        if _is_redo(task):
            if after:
                return None  # a turn came after an undo: nothing to undo
            continue
        if after and not _edited(after[0]):
            return None  # a plain send after the rewind: the rewind is done with
        rewind_id = raw.text_or_none(task.get("id"))
        if rewind_id is None:
            return None
        said = raw.metadata(task).get(contract.REWOUND_TURNS_KEY)
        if isinstance(said, int | float) and not isinstance(said, bool):
            turns: int | None = int(said)  # the server says (A2A 1.0 metadata numbers are floats)
        elif any(_rewound(t) for t in listed):  # else count the rewound tasks listed, if any are
            gone = [
                t
                for t in listed
                if not _is_rewind(t) and raw.metadata(t).get(contract.REWOUND_BY_TASK_KEY) == rewind_id
            ]
            turns = len(gone) if whole or listed[0] not in gone else None
        else:
            turns = None
        return UndoPoint(session_id, rewind_id, "edit" if after else "rewind", turns)
    return None


@dataclass(frozen=True)
class RedoPoint:
    """What the one undo undid, to do again: the same rewind (``kind`` "rewind": rewind before
    ``before`` again) or the same restore (``kind`` "restore": the server's redo of the rewind
    ``rewind_task_id`` that the undo made). ``fingerprint``: the session's turn invocations right
    after the undo; on any other state the redo is refused (nothing acts on a stale view)."""

    session_id: str
    kind: str  # "rewind" | "restore"
    turns: int
    fingerprint: tuple[str, ...]
    before: str = ""
    rewind_task_id: str = ""

    @property
    def label(self) -> str:
        return f"redo the {self.kind} of {plural(self.turns, 'turn')}"
