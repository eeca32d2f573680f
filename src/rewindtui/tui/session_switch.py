"""Opening another session (or a new one) and re-reading this one, without dropping work unseen:
during a reply it asks first, during a rewind or fork it opens once that is done; the open
session's draft stays with it."""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from typing import Any

from textual.worker import Worker

from rewindtui.client.a2a_client import ClientError
from rewindtui.client.errors import user_message
from rewindtui.tui.host import ScreenHost, wait_for
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
            host.switch_worker = self._start(session_id, host.rewind_worker, then)
            return
        if host.replying:

            def answered(go: bool | None) -> None:
                if go:
                    self.stop_reply()
                    host.switch_worker = self._start(session_id, host.turn_worker, then)

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
        host.switch_worker = self._start(session_id, host.turn_worker, then)

    def _start(
        self, session_id: str | None, after: Worker[Any] | None, then: Callable[[], None] | None = None
    ) -> Worker[Any]:
        return self.host.run_worker(partial(self._switch, session_id, after, then), group="session", exclusive=True)

    async def _switch(
        self, session_id: str | None, after: Worker[Any] | None = None, then: Callable[[], None] | None = None
    ) -> None:
        host = self.host
        chat = host.chat
        if chat is None:
            return
        await wait_for(after)
        self.set_aside()
        host.activity = "opening…"
        host.refresh_status()
        try:
            await chat.open(session_id)
        except ClientError as exc:
            host.notify(user_message(exc), title="Open session", severity="error")
            return
        finally:
            host.activity = None
            host.outcome = None
            host.refresh_status()
        host.show_conversation()
        if not host.sessions.has_class("hidden"):
            self.panel_refresh()
        host.composer.focus()
        if then is not None:
            then()

    def reload(self) -> None:
        """Re-read this session from the server (what it holds is the truth)."""
        host = self.host
        if host.busy:
            host.notify("Wait for the current request to finish.", severity="warning")
            return
        host.switch_worker = host.run_worker(self._reload, group="session", exclusive=True)

    async def _reload(self) -> None:
        host = self.host
        chat = host.chat
        if chat is None:
            return
        host.activity = "opening…"
        host.refresh_status()
        try:
            await chat.refresh()
        except ClientError as exc:
            host.notify(user_message(exc), title="Reload", severity="error")
        finally:
            host.activity = None
            host.outcome = None
            host.refresh_status()
