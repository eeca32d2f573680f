"""Drafts: what the user typed and did not send, kept per (server, session) across restarts, and
the draft set aside (stashed) while an edit borrows the composer.

Pure logic plus a small file store, as :mod:`rewindtui.chat.prompt_history`: one JSON file per
(server, session) under a directory (by default ``<user data dir>/drafts``), written atomically
(a crash leaves the old draft or the new one, never half of one). A new session that has no id
yet keeps its draft under the session id ``""``. Nothing here knows about terminals.
"""

from __future__ import annotations

import hashlib
import json
import os
from dataclasses import dataclass
from pathlib import Path

from rewindtui.base.dirs import default_data_dir

#: The session key of a new session (no id yet).
NEW_SESSION = ""


def default_drafts_dir() -> Path:
    return default_data_dir() / "drafts"


@dataclass(frozen=True)
class Draft:
    """A session's draft: the composer's text, and the text stashed while an edit runs."""

    text: str = ""
    stashed: str = ""

    @property
    def empty(self) -> bool:
        return not self.text and not self.stashed


class DraftStore:
    """Drafts on disk under ``directory`` (created on the first write). An empty draft removes its
    file. Read errors give an empty draft; write errors raise OSError (the caller says so)."""

    def __init__(self, directory: Path | None = None) -> None:
        self.directory = directory if directory is not None else default_drafts_dir()

    def _path(self, server: str, session_id: str | None) -> Path:
        digest = hashlib.sha256(f"{server}\n{session_id or NEW_SESSION}".encode()).hexdigest()[:32]
        return self.directory / f"{digest}.json"

    # -- the whole draft -----------------------------------------------------------------------
    def get(self, server: str, session_id: str | None) -> Draft:
        try:
            data = json.loads(self._path(server, session_id).read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return Draft()
        if not isinstance(data, dict):
            return Draft()
        text, stashed = data.get("text"), data.get("stashed")
        return Draft(text if isinstance(text, str) else "", stashed if isinstance(stashed, str) else "")

    def put(self, server: str, session_id: str | None, draft: Draft) -> None:
        path = self._path(server, session_id)
        if draft.empty:
            try:
                path.unlink()
            except FileNotFoundError:
                pass
            return
        self.directory.mkdir(parents=True, exist_ok=True)
        temporary = path.with_name(f"{path.name}.{os.getpid()}.tmp")
        temporary.write_text(
            json.dumps({"text": draft.text, "stashed": draft.stashed}, ensure_ascii=False), encoding="utf-8"
        )
        temporary.replace(path)

    # -- the composer's text (what the app's screen uses) ----------------------------------
    def load(self, server: str, session_id: str | None) -> str:
        """The session's draft text ("" when none)."""
        return self.get(server, session_id).text

    def save(self, server: str, session_id: str | None, text: str) -> None:
        """Keep ``text`` as the session's draft ("" forgets it); a stash is kept."""
        self.put(server, session_id, Draft(text, self.get(server, session_id).stashed))

    def keep(self, server: str, session_id: str | None, text: str, *, seen: str) -> str:
        """Keep ``text`` as the session's draft ("" forgets it) where the file holds ``seen``, the
        draft this app last read or kept there. Two apps on one data dir share the file: when it
        holds another draft -- the other app kept one for this session since -- that one stays,
        first, and ``text`` goes after it (nothing typed is lost; a sent draft forgets only its
        own). A stash is kept. The draft now kept is returned."""
        held = self.get(server, session_id)
        kept = text
        if held.text and held.text not in (seen, text):
            kept = f"{held.text}\n{text}" if text else held.text
        self.put(server, session_id, Draft(kept, held.stashed))
        return kept

    def move(self, server: str, from_session: str | None, to_session: str) -> None:
        """A new session got its id: its draft (and stash) go with it."""
        draft = self.get(server, from_session)
        if not draft.empty:
            self.put(server, to_session, draft)
            self.put(server, from_session, Draft())

    # -- the stash (an edit borrows the composer) -----------------------------------------------
    def stash(self, server: str, session_id: str | None, text: str) -> None:
        """An edit starts: set the composer's ``text`` aside (kept on disk too). A second stash
        while one is held keeps both, the older first, so nothing typed is lost."""
        held = self.get(server, session_id)
        stashed = f"{held.stashed}\n{text}" if held.stashed and text else (held.stashed or text)
        self.put(server, session_id, Draft("", stashed))

    def stashed(self, server: str, session_id: str | None) -> str:
        return self.get(server, session_id).stashed

    def unstash(self, server: str, session_id: str | None) -> str:
        """The edit ended (cancelled or sent): the stashed text, removed from the stash."""
        held = self.get(server, session_id)
        self.put(server, session_id, Draft(held.text, ""))
        return held.stashed
