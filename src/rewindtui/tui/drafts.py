"""Drafts: what the user typed and did not send, kept per session across restarts, and the draft
set aside while an edit borrows the composer.

ADAPTER (until the core's ``DraftStore`` lands; see docs/chat-core.md): :class:`DraftFiles` keeps
one file per (server, session) under the data dir, written atomically. Replace it by the core's
store once that exists; the screen only uses ``load`` and ``save``.
"""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Protocol


class DraftKeeper(Protocol):
    def load(self, server: str, session_id: str) -> str: ...

    def save(self, server: str, session_id: str, text: str) -> None: ...


class DraftFiles:
    """Drafts on disk under ``directory`` (created on the first write); an empty draft removes its file."""

    def __init__(self, directory: Path) -> None:
        self.directory = directory

    def _path(self, server: str, session_id: str) -> Path:
        digest = hashlib.sha256(f"{server}\n{session_id}".encode()).hexdigest()[:32]
        return self.directory / f"{digest}.txt"

    def load(self, server: str, session_id: str) -> str:
        try:
            return self._path(server, session_id).read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            return ""

    def save(self, server: str, session_id: str, text: str) -> None:
        """Keep ``text`` (raises OSError when the directory cannot be written)."""
        path = self._path(server, session_id)
        if not text:
            path.unlink(missing_ok=True)
            return
        self.directory.mkdir(parents=True, exist_ok=True)
        temporary = path.with_suffix(".tmp")
        temporary.write_text(text, encoding="utf-8")
        temporary.replace(path)


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
