"""ctrl+c as coding agents' terminals use it (Claude Code, Codex), and ctrl+d on an empty composer.

ctrl+c does the first of these that applies, one level a press:

* a reply is streaming in: stop it (what came stays, marked stopped; the draft stays too);
* a rewind preview or an edit is open: leave it (nothing changes on the server);
* the composer holds a draft: clear it (ctrl+z brings it back);
* the composer is empty: say "ctrl+c again to quit", and quit on a second press within
  :data:`QUIT_WINDOW_SECONDS`.

ctrl+d quits on an empty composer (elsewhere the composer deletes the character after the cursor).
Time is the ``clock`` it is given: tests move it themselves, nothing sleeps.
"""

from __future__ import annotations

import time
from collections.abc import Callable

from rewindtui.tui.host import ScreenHost

#: A second ctrl+c on an empty composer within this many seconds quits.
QUIT_WINDOW_SECONDS = 3.0
_LONG_AGO = float("-inf")
#: seconds a ctrl+c pressed right after Enter waits for the screen to take the text (then it stops
#: the send: it is pressed once there is something to stop), at most SUBMIT_WAITS times in a row
SUBMIT_WAIT = 0.01
SUBMIT_WAITS = 50
QUIT_HINT = "ctrl+c again to quit (ctrl+d quits too); the conversation stays on the server"


class InterruptKey:
    def __init__(
        self,
        host: ScreenHost,
        *,
        stop_reply: Callable[[], bool],
        back_out: Callable[[], bool],
        quit: Callable[[], object],
        later: Callable[[float, Callable[[], None]], object],
        cleared: Callable[[], None] = lambda: None,
        clock: Callable[[], float] = time.monotonic,
        window: float = QUIT_WINDOW_SECONDS,
    ) -> None:
        self.host = host
        self.stop_reply = stop_reply
        self.back_out = back_out
        self.quit = quit
        self.later = later
        self.cleared = cleared  # the draft kept on disk goes too (it must not come back later)
        self.clock = clock
        self.window = window
        self.armed = _LONG_AGO  # when ctrl+c last asked "again to quit"
        self._waits = 0  # for the text of an Enter just pressed, in a row (bounded: never stuck)

    def press(self) -> str:
        """Do what ctrl+c does now; returns what it did ("stop", "back", "clear", "arm", "quit"),
        or "wait" right after Enter (it runs again once the screen has taken the text)."""
        host = self.host
        if host.composer.submitting and self._waits < SUBMIT_WAITS:
            self._waits += 1  # Enter's text is on its way to the screen: act once it is there
            self.later(SUBMIT_WAIT, self._press_again)
            return "wait"
        self._waits = 0
        now = self.clock()
        if self.stop_reply():
            self.armed = _LONG_AGO
            return "stop"
        if self.back_out():
            self.armed = _LONG_AGO
            return "back"
        if host.composer.text:
            host.composer.clear_draft()  # an edit of the composer: ctrl+z brings the text back
            self.cleared()
            self.armed = _LONG_AGO
            host.notify("Draft cleared; ctrl+z brings it back.", timeout=3)
            return "clear"
        if now - self.armed <= self.window:
            self.armed = _LONG_AGO
            self.quit()
            return "quit"
        self.armed = now
        host.banner.show_hint(QUIT_HINT)
        self.later(self.window, self._end_hint)
        return "arm"

    def _press_again(self) -> None:
        self.press()

    @property
    def arming(self) -> bool:
        """A second ctrl+c now would quit."""
        return self.clock() - self.armed <= self.window

    def _end_hint(self) -> None:
        banner = self.host.banner
        if banner.kind == "hint" and not self.arming:
            banner.hide()

    def end_of_input(self) -> bool:
        """ctrl+d: quit when the composer is empty (True), else nothing here (the composer deletes)."""
        if self.host.composer.text:
            return False
        self.quit()
        return True
