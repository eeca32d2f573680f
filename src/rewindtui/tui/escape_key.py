"""Esc backs out exactly one level: a reply streaming stops; a preview or an edit is left;
otherwise Esc Esc clears the draft (kept: ctrl+z brings it back) or, on an empty composer,
shows the preview of the last turn. The Escs that follow in the same burst after a level was
left do nothing more, so Esc x5 never leaves a preview armed.

Time is the ``clock`` it is given (``time.monotonic``) and the ``window`` two presses must fall in:
tests give it a clock they move themselves, so that a double Esc does not depend on how fast a
loaded machine delivers two keys."""

from __future__ import annotations

import time
from collections.abc import Callable

from rewindtui.tui.host import ScreenHost

#: Two presses of Escape within this many seconds make an Esc Esc.
DOUBLE_ESCAPE_SECONDS = 0.6
#: when no press counts as recent
_LONG_AGO = float("-inf")


class EscapeKey:
    def __init__(
        self,
        host: ScreenHost,
        *,
        stop_reply: Callable[[], bool],
        leave_preview: Callable[[], None],
        enter_preview: Callable[[], object],
        restore_stash: Callable[[], None],
        later: Callable[[float, Callable[[], None]], object],
        cleared: Callable[[], None] = lambda: None,
        clock: Callable[[], float] = time.monotonic,
        window: float = DOUBLE_ESCAPE_SECONDS,
    ) -> None:
        self.host = host
        self.stop_reply = stop_reply
        self.leave_preview = leave_preview
        self.enter_preview = enter_preview
        self.restore_stash = restore_stash
        self.later = later
        self.cleared = cleared  # the draft kept on disk goes too (it must not come back later)
        self.clock = clock
        self.window = window
        self.last = _LONG_AGO  # when the last press that counts was
        self.burst = False  # a level was left: the rest of this burst re-arms nothing
        #: the draft Esc Esc cleared last (the composer's ctrl+z brings it back)
        self.cleared_draft = ""

    def press(self) -> None:
        host = self.host
        now = self.clock()
        burst = self.burst and now - self.last <= self.window
        if self.stop_reply():
            self.last = _LONG_AGO
            return
        if self.back_out():
            self.last = now
            return
        if burst:
            self.last = now
            return
        self.burst = False
        if now - self.last > self.window:
            self.last = now
            draft = bool(host.composer.text)
            host.banner.show_hint("Esc again clears the draft" if draft else "Esc again: choose a turn to rewind to")
            self.later(self.window, self._end_hint)
            return
        self.last = _LONG_AGO
        if host.banner.kind == "hint":
            host.banner.hide()
        if host.composer.text:
            self.cleared_draft = host.composer.clear_draft()  # kept: ctrl+z brings it back
            self.cleared()
            host.notify("Draft cleared; ctrl+z brings it back.", timeout=3)
        else:
            self.enter_preview()

    def back_out(self) -> bool:
        """Leave the preview or cancel an edit (nothing changes on the server). True if it did."""
        host = self.host
        chat = host.chat
        if host.rewind_mode:
            self.leave_preview()
            self.burst = True
            return True
        if chat is not None and chat.edit is not None and not host.ops.running("rewind"):
            chat.cancel_edit()
            host.composer.clear_draft()
            host.banner.hide()
            self.burst = True
            self.restore_stash()
            host.refresh_status()
            host.notify("Edit cancelled; the conversation and your draft are back as they were.")
            return True
        return False

    def left_by_its_own_key(self) -> None:
        """The preview was left by the transcript's own Esc: the same burst rule."""
        self.burst = True
        self.last = self.clock()

    def _end_hint(self) -> None:
        banner = self.host.banner
        if banner.kind == "hint" and self.clock() - self.last >= self.window:
            banner.hide()
