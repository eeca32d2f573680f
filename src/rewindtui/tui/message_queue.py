"""Messages queued while a reply streams in (Enter during a reply), as coding agents' terminals do.

The queue belongs to the session it was typed in. It is sent in order, one turn each, when the
turn ends as completed; a turn that was stopped, failed or asks a question leaves the queue to the
user (the screen asks: send it, or take it back into the composer). It is kept on disk like a
draft (the core's :class:`~rewindtui.chat.drafts.DraftStore`, its own folder, a JSON list as the
text), so a restart brings it back. Nothing queued is dropped: every way out puts the texts back
in the composer.
"""

from __future__ import annotations

import json
from collections.abc import Callable

from rewindtui.tui.drafts import DraftKeeper

#: what :meth:`MessageQueue.load` remembers for a session that has no id yet
NEW = "new session"
#: at most this many messages wait (a stuck Enter key does not queue a thousand turns)
MAX_QUEUED = 20


class MessageQueue:
    def __init__(
        self,
        key: Callable[[], tuple[str, str] | None],
        *,
        store: DraftKeeper | None = None,
        changed: Callable[[], None] = lambda: None,
        say: Callable[[str], None] = lambda text: None,
    ) -> None:
        self.key = key  # (server, session) of the open session
        self.store = store
        self.changed = changed
        self.say = say
        self.texts: list[str] = []
        #: the session whose kept queue was read (NEW: a new session of this app, no id yet)
        self._loaded: tuple[str, str] | str | None = None

    def __len__(self) -> int:
        return len(self.texts)

    def __bool__(self) -> bool:
        return bool(self.texts)

    def add(self, text: str) -> bool:
        """Queue ``text`` (False when the queue is full: the caller keeps it in the composer)."""
        if len(self.texts) >= MAX_QUEUED:
            return False
        self.texts.append(text)
        self._saved()
        return True

    def pop_first(self) -> str | None:
        """The next message to send (None when none)."""
        if not self.texts:
            return None
        text = self.texts.pop(0)
        self._saved()
        return text

    def take_last(self) -> str | None:
        """The last queued message, out of the queue (to edit or drop it)."""
        if not self.texts:
            return None
        text = self.texts.pop()
        self._saved()
        return text

    def take_all(self) -> list[str]:
        texts, self.texts = self.texts, []
        self._saved()
        return texts

    def load(self) -> bool:
        """The opened session's queue as it was kept (after a restart); True if it was read now.
        The session this queue was loaded for, shown again (the live view following another
        client, a reload, a reconnect), is not read again: the queue in memory is this app's,
        and the file may hold another app's on the same data dir and session."""
        key = self.key()
        if key is None:
            self._loaded = NEW  # a session without an id yet: what is queued stays as it is
            return False
        if key == self._loaded or self._loaded is NEW:
            self._loaded = key  # shown again, or this app's new session got its id: nothing to read
            return False
        self._loaded = key
        self.texts = _parse(self.store.load(*key)) if self.store is not None else []
        self.changed()
        return True

    def forget(self) -> None:
        """Another session opens: the next one shown is read from disk (this one again too)."""
        self._loaded = None

    def _saved(self) -> None:
        key = self.key()
        if self.store is not None and key is not None:
            try:
                self.store.save(*key, json.dumps(self.texts, ensure_ascii=False) if self.texts else "")
            except OSError as exc:
                self.say(f"Queued messages not kept on disk: {exc}")
        self.changed()


def _parse(text: str) -> list[str]:
    """A kept queue; anything damaged reads as no queue (the texts are in the file still)."""
    try:
        data = json.loads(text) if text else []
    except ValueError:
        return []
    if not isinstance(data, list):
        return []
    return [t for t in data if isinstance(t, str) and t][:MAX_QUEUED]
