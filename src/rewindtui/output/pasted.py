"""Big pastes, folded in the transcript: a user message over :data:`FOLD_LINES` lines shows its
first :data:`HEAD_LINES` lines and ``[pasted 5,000 lines]`` until the user opens it. Only the view
folds: the message is sent, stored and copied whole. Pure text logic (the app draws it)."""

from __future__ import annotations

from dataclasses import dataclass

#: a user message with more lines than this is folded
FOLD_LINES = 200
#: the lines of a folded message shown above its fold line
HEAD_LINES = 3


@dataclass(frozen=True)
class Fold:
    head: str  # the first lines, shown
    lines: int  # how many lines the whole message has

    @property
    def label(self) -> str:
        return f"[pasted {self.lines:,} lines]"


def fold(text: str, *, limit: int = FOLD_LINES, head: int = HEAD_LINES) -> Fold | None:
    """The fold of ``text`` when it is over ``limit`` lines (None: shown whole)."""
    if text.count("\n") < limit:  # at most ``limit`` lines: no need to split it
        return None
    lines = text.split("\n")
    if lines[-1] == "":  # a paste that ends with a newline: no line after it
        lines.pop()
    if len(lines) <= limit:
        return None
    return Fold("\n".join(lines[:head]), len(lines))
