"""Leaving the app: ctrl+q (and /quit) with nothing lost unasked -- every tab's draft kept for its
session, or a question first when a draft cannot be kept or a reply or rewind is still under way
-- and SIGTERM / SIGHUP ending the app the way ctrl+q does.

The app holds one :class:`Leaving`; its ``action_quit`` hands the key to :meth:`Leaving.quit`.
"""

from __future__ import annotations

import asyncio
import os
import signal
import sys
import termios
from typing import TYPE_CHECKING

from rewindtui.tui.screens.chat import ChatScreen
from rewindtui.tui.screens.confirm import ConfirmScreen

if TYPE_CHECKING:
    from rewindtui.tui.app import RewindApp

#: Signals that end the app the way ctrl+q does (terminal restored, embedded server stopped).
EXIT_SIGNALS = (signal.SIGTERM, signal.SIGHUP)


class Leaving:
    """ctrl+q and the exit signals."""

    def __init__(self, app: RewindApp) -> None:
        self.app = app
        self._signals: list[int] = []

    # -- ctrl+q ----------------------------------------------------------------------------------
    def quit(self) -> None:
        app = self.app
        screen = app.chat_screen if app.is_screen_installed("chat") else None
        if isinstance(app.screen, ConfirmScreen) and app.screen.purpose == "quit":
            self.leave()  # ctrl+q again: yes
            return
        lost = self._unkept_hidden_drafts()
        busy = [n for n, tab in enumerate(app.tabs, 1) if tab is not app.tabs.current and tab.busy]
        if screen is not None and screen.composer.text and not (screen.replying or screen.rewinding or busy or lost):
            self._quit_with_draft(screen)
            return
        if screen is not None and not screen.composer.text:
            screen.memory.forget_kept_draft()  # cleared: an older kept draft must not come back
        if screen is not None and (screen.replying or screen.rewinding or busy or lost):
            if screen.replying or screen.rewinding:
                what = "A reply is still coming in" if screen.replying else "A rewind is in flight"
            elif busy:
                what = f"A reply or rewind is still under way in tab {', '.join(map(str, busy))}"
            else:
                what = (
                    f"The draft in tab {', '.join(map(str, lost))} cannot be kept "
                    "(no data dir, or nothing sent there yet)"
                )

            def answered(go: bool | None) -> None:
                if go:
                    if (busy or lost) and screen.composer.text:
                        screen.memory.keep_draft()  # this tab's draft is kept as a hidden tab's is
                    self.leave()

            app.push_screen(
                ConfirmScreen(
                    f"{what}. Quit anyway?",
                    "Its stream stops here; the server may still finish it, and reopening the session shows "
                    "what it kept. (ctrl+q again quits.)"
                    if screen.replying or screen.rewinding or busy
                    else "Quitting now loses that draft. (ctrl+q again quits.)",
                    go="Quit",
                    purpose="quit",
                ),
                answered,
            )
            return
        self.leave()

    def _hidden_drafts(self) -> list[tuple[int, ChatScreen]]:
        """(number, screen) of the tabs not shown that hold a draft."""
        tabs = self.app.tabs
        return [
            (number, tab.screen)
            for number, tab in enumerate(tabs, 1)
            if tab is not tabs.current and tab.screen is not None and tab.screen.is_mounted and tab.screen.composer.text
        ]

    def _unkept_hidden_drafts(self) -> list[int]:
        """The tabs not shown whose draft quitting would lose: no data dir, or no session yet."""
        return [
            number
            for number, screen in self._hidden_drafts()
            if self.app.draft_store is None or screen.chat is None or not screen.chat.session_id
        ]

    def leave(self, message: str | None = None) -> None:
        """Quit; the tabs not shown keep their drafts for their sessions first, as the shown one does."""
        for _number, screen in self._hidden_drafts():
            screen.memory.keep_draft()
        if message is None:
            self.app.exit(0)
        else:
            self.app.exit(0, message=message)

    def _quit_with_draft(self, screen: ChatScreen) -> None:
        """ctrl+q with a draft: keep it for this session and say so; without a place to keep it, ask."""
        if screen.memory.keep_draft():
            self.leave("Your unsent draft is kept; it comes back when you open this session again.")
            return

        def answered(go: bool | None) -> None:
            if go:
                self.leave()

        if self.app.draft_store is None:
            why = "This app keeps no files (no data dir), so the draft in the composer cannot be kept."
        elif screen.chat is None or not screen.chat.session_id:
            why = "Nothing was sent in this session yet (drafts are kept per session), so the draft cannot be kept."
        else:
            why = "The draft could not be written to the data dir."
        self.app.push_screen(
            ConfirmScreen(
                "Quit and lose your draft?",
                f"{why} (ctrl+q again quits.)",
                go="Quit",
                purpose="quit",
            ),
            answered,
        )

    # -- SIGTERM, SIGHUP -------------------------------------------------------------------------
    def catch_signals(self) -> None:
        """SIGTERM / SIGHUP end the app like ctrl+q: the terminal is restored (alternate screen and
        mouse reporting off) and the embedded server is stopped, instead of dying mid-frame."""
        if self.app.is_headless:
            return
        loop = asyncio.get_running_loop()
        for signum in EXIT_SIGNALS:
            try:
                loop.add_signal_handler(signum, self._on_exit_signal, signum)
            except (NotImplementedError, RuntimeError, ValueError):  # not the main thread / not POSIX
                continue
            self._signals.append(signum)

    def release_signals(self) -> None:
        loop = asyncio.get_running_loop()
        for signum in self._signals:
            loop.remove_signal_handler(signum)

    def _on_exit_signal(self, signum: int) -> None:
        if not _terminal_alive():
            # the terminal hung up: nothing to restore, and drawing the exit would block on a
            # terminal that takes no more output. The embedded server sees our end of its stdin
            # pipe close and shuts itself down.
            os._exit(128 + signum)
        self.app.exit(128 + signum)


def _terminal_alive() -> bool:
    """False once the terminal has hung up (its other side closed)."""
    stdin = sys.__stdin__
    try:
        termios.tcgetattr(stdin.fileno() if stdin is not None else 0)
    except (termios.error, OSError, ValueError):
        return False
    return True
