"""Nothing typed is lost: the composer's memory per session -- its prompt history (↑), its unsent
draft kept across restarts (the core's DraftStore), the draft set aside while an edit borrows
the composer, and texts a refused send puts back."""

from __future__ import annotations

from collections.abc import Callable

from rewindtui.chat.prompt_history import PromptHistory, PromptStore
from rewindtui.tui.drafts import DraftKeeper, DraftStash
from rewindtui.tui.widgets.composer import Composer


class ComposerMemory:
    def __init__(
        self,
        composer: Callable[[], Composer],
        key: Callable[[], tuple[str, str] | None],
        say: Callable[[str], None],
        *,
        prompts: PromptStore | None = None,
        drafts: DraftKeeper | None = None,
    ) -> None:
        self.composer = composer
        self.key = key  # (server, session) of the open session, None before it has an id
        self.say = say
        self.prompts = prompts
        self.drafts = drafts
        self.stash = DraftStash()  # the draft set aside while an edit uses the composer
        self._kept: str | None = None  # what keep_unsent last put in the composer
        self._loaded: tuple[str, str] | None = None  # the session whose kept draft was last looked at
        #: per session, the kept draft this app last read or wrote (another app on the data dir may keep one too)
        self._seen: dict[tuple[str, str], str] = {}
        self.loaded: Callable[[], None] | None = None  # after a session's memory was loaded

    def load(self) -> None:
        """The opened session's prompt history, and its kept draft when the composer is empty;
        then ``loaded`` (what else is kept per session: the queued messages)."""
        self._load()
        if self.loaded is not None:
            self.loaded()

    def _load(self) -> None:
        key = self.key()
        composer = self.composer()
        composer.prompts = self.prompts.load(*key) if self.prompts is not None and key is not None else PromptHistory()
        if self.drafts is None or key is None or composer.text or key == self._loaded:
            return  # the same session re-read (the live view, a reload): a draft cleared stays cleared
        self._loaded = key
        text = self._seen[key] = self.drafts.load(*key)
        if text:
            composer.set_draft(text)
            composer.history.clear()
            self.say("Your unsent draft of this session is back in the composer.")

    def remember_prompt(self, text: str) -> None:
        composer = self.composer()
        if not composer.prompts.add(text):
            return
        key = self.key()
        if self.prompts is not None and key is not None:
            try:
                self.prompts.append(*key, text)
            except OSError as exc:
                self.say(f"Prompt history not saved: {exc}")

    def keep_draft(self) -> bool:
        """Keep the composer's draft for this session (ctrl+q, a session switch); True if kept
        on disk. On a switch the composer then starts from the next session's draft."""
        key = self.key()
        composer = self.composer()
        text = composer.text if not self.stash.holding else self.stash.take()
        # the session is left: opening any session next (this one again too) is not a re-read, and
        # its kept draft is looked at (a new session, loaded before it had an id, set no key here)
        self._loaded = None
        if self.drafts is None or key is None:
            return False
        try:
            self._seen[key] = self.drafts.keep(*key, text, seen=self._seen.get(key, ""))
        except OSError as exc:
            self.say(f"Draft not kept: {exc}")
            return False
        if text:
            composer.clear_draft()
            composer.history.clear()
        return bool(text)

    def forget_kept_draft(self) -> None:
        """The draft kept on disk for this session is gone: what it held was sent (or cleared and
        the app quits with an empty composer). Else it would come back at the next start, and
        Enter would send it twice."""
        key = self.key()
        if self.drafts is None or key is None or self.stash.holding:
            return  # during an edit the kept draft is the one set aside: it comes back later
        try:
            self.drafts.keep(*key, "", seen=self._seen.get(key, ""))  # another app's kept draft stays
            self._seen[key] = ""
        except OSError as exc:
            self.say(f"Kept draft not removed: {exc}")

    def set_aside(self) -> bool:
        """An edit starts: the draft waits (True if there was one)."""
        text = self.composer().text
        if self.stash.holding:
            return False  # a second edit keeps the first draft, not the first edit's text
        self.stash.put(text)
        return bool(text)

    def restore_stash(self) -> None:
        """Put back the draft an edit set aside (before anything typed since)."""
        if self.stash.holding:
            text = self.stash.take()
            if text:
                self.keep_unsent(text)

    def keep_unsent(self, text: str) -> None:
        """Put a text that was not sent back in the composer: before anything typed since, after
        texts put back before it (several refused in a row keep their order)."""
        composer = self.composer()
        current = composer.text
        if not current:
            draft = text
        elif current == self._kept:
            draft = f"{current}\n{text}"
        else:
            draft = f"{text}\n{current}"
        composer.set_draft(draft)
        self._kept = draft
