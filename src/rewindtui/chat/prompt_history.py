"""The prompts a user sent, per session, for recall with ↑ as in a shell.

Pure logic plus a small file store; no Textual. A :class:`PromptHistory` holds one session's
prompts (oldest first) and a browsing position; :class:`PromptStore` loads and appends them under
a directory, one JSON-lines file per (server, session), so they survive restarts and rewinds (a
rewound prompt is exactly the one a user may want back).
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

#: Prompts kept per session (the oldest are dropped).
LIMIT = 500


class PromptHistory:
    """One session's prompts and where the user is while browsing them.

    ``older(current)`` / ``newer(current)`` move through the prompts; ``current`` is what the
    composer holds, kept as the draft to come back to when browsing past the newest prompt.
    """

    def __init__(self, prompts: list[str] | None = None) -> None:
        self.prompts: list[str] = list(prompts or [])[-LIMIT:]
        self._index: int | None = None  # position while browsing; None: not browsing
        self._draft = ""

    @property
    def browsing(self) -> bool:
        return self._index is not None

    def showing(self, text: str) -> bool:
        """True if ``text`` is the prompt being shown while browsing (unchanged by the user)."""
        return self._index is not None and self._index < len(self.prompts) and self.prompts[self._index] == text

    def add(self, text: str) -> bool:
        """Record a sent prompt (not twice in a row). Returns True if it was added."""
        self.reset()
        if not text.strip() or (self.prompts and self.prompts[-1] == text):
            return False
        self.prompts.append(text)
        del self.prompts[:-LIMIT]
        return True

    def older(self, current: str) -> str | None:
        """The prompt before the one shown (the newest when not browsing), or None at the start."""
        if not self.prompts:
            return None
        if self._index is None:
            self._draft = current
            self._index = len(self.prompts)
        if self._index == 0:
            return None
        self._index -= 1
        return self.prompts[self._index]

    def newer(self) -> str | None:
        """The prompt after the one shown; past the newest, the draft the user started from."""
        if self._index is None:
            return None
        self._index += 1
        if self._index >= len(self.prompts):
            draft = self._draft
            self.reset()
            return draft
        return self.prompts[self._index]

    def reset(self) -> None:
        self._index = None
        self._draft = ""


class PromptStore:
    """Prompt histories on disk under ``directory`` (created on the first write)."""

    def __init__(self, directory: Path) -> None:
        self.directory = directory

    def _path(self, server: str, session_id: str) -> Path:
        digest = hashlib.sha256(f"{server}\n{session_id}".encode()).hexdigest()[:32]
        return self.directory / f"{digest}.jsonl"

    def load(self, server: str, session_id: str) -> PromptHistory:
        """The session's history; an unreadable or missing file gives an empty one."""
        prompts: list[str] = []
        try:
            with self._path(server, session_id).open(encoding="utf-8") as lines:
                for line in lines:
                    try:
                        value = json.loads(line)
                    except ValueError:
                        continue  # a torn last line from a crash: skip it
                    if isinstance(value, str):
                        prompts.append(value)
        except OSError:
            pass
        if len(prompts) > 2 * LIMIT:
            self._rewrite(server, session_id, prompts[-LIMIT:])
        return PromptHistory(prompts)

    def _rewrite(self, server: str, session_id: str, prompts: list[str]) -> None:
        """Keep the file short: replace it with its newest prompts (atomically)."""
        path = self._path(server, session_id)
        temporary = path.with_suffix(".tmp")
        try:
            temporary.write_text("".join(json.dumps(p, ensure_ascii=False) + "\n" for p in prompts), encoding="utf-8")
            temporary.replace(path)
        except OSError:
            pass

    def append(self, server: str, session_id: str, text: str) -> None:
        """Append one prompt. Raises OSError if the directory cannot be written."""
        self.directory.mkdir(parents=True, exist_ok=True)
        path = self._path(server, session_id)
        with path.open("a", encoding="utf-8") as out:
            out.write(json.dumps(text, ensure_ascii=False) + "\n")
