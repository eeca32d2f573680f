"""The live view: while the app is idle, it follows what another client does to the open session
(a turn, a rewind, a redo, an answer) without a key, and says what changed in one line; and it
notices that the embedded server it started died, says so, starts it again and reconnects,
with the draft left as it was.

What the server offers, cheapest first: A2A has no subscription to a session, and push
notifications (:mod:`rewindtui.tui.push_notices`) are only sent for this app's own turns, so
another client's change is found by a check on a timer -- one small request
(:class:`rewindtui.chat.live.LiveWatch`: the session's newest task and its state).

Bounded and backing off: a local tick each second (no request) decides whether a check is due.
The first check comes :data:`FIRST` seconds after the app is idle; each check that finds nothing
doubles the wait, up to :data:`LONGEST`; a change found, typing in the composer, or the app's own
work resets it. Never two checks at once. No check runs while a turn or a rewind of ours is in
flight, a session opens, a rewind point is being chosen (the preview) or a turn is being edited,
or another screen is on top (a dialog, the picker): the view must not move under a user choosing
where to rewind. The change is applied once they leave.

The embedded server's health is the child process's (:meth:`AppConnector.server_stopped
<rewindtui.config.connection.AppConnector.server_stopped>`, a local check each tick): once it
died, the app says so, waits for the request in flight to fail, reconnects (a fresh embedded
server on the same data dir) and reopens the session; the composer is not touched. A server that
keeps dying (:data:`RESTARTS` times in :data:`RESTART_WINDOW` seconds) is not restarted again: the
app says so and leaves it to the user (Reconnect in the command palette).
"""

from __future__ import annotations

import logging
import time
from typing import TYPE_CHECKING, Any

from textual.css.query import NoMatches
from textual.timer import Timer

from rewindtui.chat.live import Followed, LiveWatch, can_follow
from rewindtui.client.a2a_client import ClientError
from rewindtui.config.connection import AppConnector

if TYPE_CHECKING:
    from rewindtui.tui.app import RewindApp

log = logging.getLogger(__name__)

#: seconds between the local ticks (no request: is a check due, is the server alive)
TICK = 1.0
#: seconds to the first check once idle, and the longest wait between checks
FIRST, LONGEST = 2.0, 10.0
TITLE = "Live view"
#: at most this many restarts of the embedded server in this many seconds
RESTARTS, RESTART_WINDOW = 3, 300.0


class LiveView:
    """One per app; started with the chat screen, stopped with the app."""

    def __init__(self, app: RewindApp, *, clock: Any = time.monotonic) -> None:
        self.app = app
        self.clock = clock
        self.wait = FIRST
        self.due = clock() + FIRST
        self.checking = False
        self.restarting = False
        #: what the live view said, in order (the toasts' texts), for tests and the log
        self.said: list[str] = []
        self._watch: LiveWatch | None = None
        self._draft: str | None = None
        self._busy_seen = False
        self._timer: Timer | None = None
        #: when the embedded server was restarted (the last few), and the connection given up on
        self._restarts: list[float] = []
        self._given_up: Any = None

    def start(self) -> None:
        self._timer = self.app.set_interval(TICK, self.tick, name="live-view")

    def stop(self) -> None:
        if self._timer is not None:
            self._timer.stop()
            self._timer = None

    # -- the tick ------------------------------------------------------------------------------
    def _paused(self) -> bool:
        """Whether the view must not move now (or cannot be checked)."""
        app = self.app
        chat = app.chat
        if chat is None or app.connecting or not app.is_screen_installed("chat"):
            return True
        screen = app.chat_screen
        return (
            app.screen is not screen  # a dialog or the picker on top
            or screen.busy
            or screen.rewind_mode
            or chat.edit is not None
            or chat.sending
            or chat.rewinding
        )

    def reset(self) -> None:
        """Something happened (a change, the user typed, our own work): check again soon."""
        self.wait = FIRST
        self.due = min(self.due, self.clock() + FIRST)

    def tick(self) -> None:
        app = self.app
        stopped = self._server_stopped()
        if stopped and not self.restarting:
            self._server_died(stopped)
            return
        if self.restarting or self._paused():
            self._busy_seen = True
            return
        if self._busy_seen:  # back to idle: whatever changed meanwhile is looked at soon
            self._busy_seen = False
            self.reset()
        try:
            draft = app.chat_screen.composer.text
        except NoMatches:
            return  # the screen is being taken down (the app quits)
        if draft != self._draft:
            self._draft = draft
            self.reset()
        if self.checking or self.clock() < self.due:
            return
        chat = app.chat
        if chat is None or not can_follow(chat):
            return
        self.checking = True
        app.run_worker(self._check(), group="live-check", exit_on_error=False)

    # -- following another client --------------------------------------------------------------
    async def _check(self) -> None:
        app = self.app
        chat = app.chat
        try:
            if chat is None:
                return
            if self._watch is None or self._watch.chat is not chat:
                self._watch = LiveWatch(chat)
            try:
                followed = await self._watch.check(ready=lambda: not self._paused() and app.chat is chat)
            except ClientError as exc:
                log.info("live view: the session could not be re-read: %s", exc)
                followed = None
            if followed is None:
                self.wait = min(self.wait * 2, LONGEST)
            else:
                self.wait = FIRST
                self.followed(followed)
            self.due = self.clock() + self.wait
        finally:
            self.checking = False

    def followed(self, followed: Followed) -> None:
        """The session was re-read after another client's change: show it, say what changed."""
        app = self.app
        if app.chat is not None and not self._paused():
            # what became of this app's last action ("not sent", "failed") is no longer the turn shown
            app.chat_screen.ops.outcome = None
            if app.chat.session_id == followed.session_id:
                app.chat_screen.show_conversation()  # older turns to load, a running turn to follow
            app.chat_screen.refresh_status()
        self._say(followed.said)

    # -- the embedded server -------------------------------------------------------------------
    def _server_stopped(self) -> str:
        connector = self.app.connector
        if not isinstance(connector, AppConnector) or self.app.chat is None:
            return ""
        return connector.server_stopped()

    def _server_died(self, stopped: str) -> None:
        """Say so once per connection; restart it, at most :data:`RESTARTS` times in
        :data:`RESTART_WINDOW` seconds (a server that keeps dying is left to the user)."""
        connector = self.app.connector
        connection = connector.connection if isinstance(connector, AppConnector) else None
        if connection is self._given_up:
            return
        now = self.clock()
        self._restarts = [t for t in self._restarts if now - t < RESTART_WINDOW]
        if len(self._restarts) >= RESTARTS:
            self._given_up = connection
            self._say(
                f"The embedded server stopped again ({stopped}); it was restarted {RESTARTS} times in "
                f"{RESTART_WINDOW / 60:g} minutes, so it is not restarted again. Run `rewindtui serve` to see why, "
                "then use Reconnect in the command palette (ctrl+p). Your draft stays.",
                warning=True,
            )
            self.app.chat_screen.view.failure(f"the embedded server stopped ({stopped})")
            return
        self._restarts.append(now)
        self.restarting = True
        self._say(
            f"The embedded server stopped ({stopped}). Restarting it and reconnecting; your draft stays.", warning=True
        )
        self.app.run_worker(self._restart(), group="live-restart", exclusive=True)

    async def _restart(self) -> None:
        app = self.app
        screen = app.chat_screen
        try:
            for worker in (screen.ops.worker(group) for group in ("turn", "rewind", "session")):
                if worker is not None and not worker.is_finished:
                    try:
                        await worker.wait()  # fails soon: its server is gone
                    except Exception:  # its own handler said what failed
                        pass
            worker = app.reconnect()
            if worker is None:
                return
            try:
                await worker.wait()
            except Exception:  # the connect screen says why
                return
            if app.chat is not None:
                self._watch = None
                self._say("The embedded server was restarted and the app is connected again.")
        finally:
            self.restarting = False
            self.reset()

    def _say(self, text: str, *, warning: bool = False) -> None:
        self.said.append(text)
        self.app.notify(text, title=TITLE, severity="warning" if warning else "information", timeout=8, markup=False)
