"""Opening another session (or a new one) and re-reading this one, without dropping work unseen:
during a reply it asks first, during a rewind or fork it opens once that is done; the open
session's draft stays with it."""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from typing import Any

from textual.worker import Worker

from rewindtui.tui.host import ScreenHost
from rewindtui.tui.screens.confirm import ConfirmScreen


class SessionSwitch:
    def __init__(
        self,
        host: ScreenHost,
        *,
        stop_reply: Callable[[], bool],
        set_aside: Callable[[], None],
        ask: Callable[[ConfirmScreen, Callable[[bool | None], None]], Any],
        panel_refresh: Callable[[], None],
    ) -> None:
        self.host = host
        self.stop_reply = stop_reply
        self.set_aside = set_aside  # ends an edit (its draft back) and keeps the session's draft
        self.ask = ask
        self.panel_refresh = panel_refresh

    def request(self, session_id: str | None, then: Callable[[], None] | None = None) -> None:
        """Open another session (None: a new one); ``then`` runs once it is open."""
        host = self.host
        if host.chat is None:
            return
        if host.rewinding:
            host.notify("Opening it once the rewind in flight is done.", title="Sessions")
            self._start(session_id, host.ops.worker("rewind"), then)
            return
        if host.replying:

            def answered(go: bool | None) -> None:
                if go:
                    self.stop_reply()
                    self._start(session_id, host.ops.worker("turn"), then)

            self.ask(
                ConfirmScreen(
                    "A reply is still coming in",
                    "Leave this session anyway? Its stream stops here; the server may still finish the turn, "
                    "and reopening the session shows what it kept.",
                    go="Stop it and switch",
                    purpose="switch",
                ),
                answered,
            )
            return
        self._start(session_id, host.ops.worker("turn"), then)

    def _start(self, session_id: str | None, after: Worker[Any] | None, then: Callable[[], None] | None) -> None:
        self.host.ops.run(
            None,  # asked above: a reply is stopped first (asked), a rewind is waited for
            partial(self._open, session_id),
            title="Open session",
            doing="opening…",
            group="session",
            exclusive=True,
            after=after,
            done=lambda _: self._opened(then),
        )

    async def _open(self, session_id: str | None) -> None:
        chat = self.host.chat
        if chat is None:
            return
        self.set_aside()
        await chat.open(session_id)

    def _opened(self, then: Callable[[], None] | None) -> None:
        host = self.host
        host.show_conversation()
        if not host.sessions.has_class("hidden"):
            self.panel_refresh()
        host.composer.focus()
        if then is not None:
            then()

    def clear(self, left: str) -> None:
        """/clear: a new, empty session; the one left (named ``left``, "" for none) stays on the
        server (F2 lists it), and once the new one is open it says so."""
        chat = self.host.chat
        if not left or chat is None or not chat.conversation.items:
            self.request(None)
            return

        def said() -> None:
            self.host.notify(
                f"Started a new session; “{left}” is kept (F2 lists it).",
                severity="information",
                timeout=6,
                markup=False,
            )

        self.request(None, then=said)

    def reload(self) -> None:
        """Re-read this session from the server (what it holds is the truth)."""
        host = self.host
        chat = host.chat
        if host.busy or chat is None:
            host.notify("Wait for the current request to finish.", severity="warning")
            return
        host.ops.run(None, chat.refresh, title="Reload", doing="opening…", group="session", exclusive=True)
