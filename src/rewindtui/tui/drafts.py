"""The screen's side of drafts: what it needs of a store (the core's
:class:`rewindtui.chat.drafts.DraftStore` keeps them per session across restarts), and the draft set
aside while an edit borrows the composer."""

from __future__ import annotations

from typing import Protocol


class DraftKeeper(Protocol):
    def load(self, server: str, session_id: str) -> str: ...

    def save(self, server: str, session_id: str, text: str) -> None: ...

    def keep(self, server: str, session_id: str, text: str, *, seen: str) -> str: ...


class DraftStash:
    """The composer's draft set aside while an edit uses the composer (one level: an edit)."""

    def __init__(self) -> None:
        self._text: str | None = None

    @property
    def holding(self) -> bool:
        return self._text is not None

    def put(self, text: str) -> None:
        if self._text is None:  # a second edit keeps the first draft, not the first edit's text
            self._text = text

    def take(self) -> str:
        text, self._text = self._text or "", None
        return text

    def peek(self) -> str:
        """The draft set aside ("" when none), left where it is."""
        return self._text or ""
