"""Push notifications in the app: a turn that ended where the app could not see it end.

With push on (the ``push`` setting, or "Push notifications: on" in the command palette) the
connection runs a loopback receiver (:mod:`rewindtui.client.push`) and every message asks the
server to POST the task there when its turn ends. Most notifications are about a turn the app
streamed to its end: those are dropped without a word. A notification about a turn the view does
not show as ended -- its stream was cut, the app lost the connection, or the app stopped
following it -- is shown as a toast ("The turn finished while …") and, for the open session, the
session is re-read from the server (the server's truth); if the server cannot be read, the task
the notification carried is shown instead. A turn of another session is a toast naming it.

Nothing here touches the screen's internals beyond the host interface (:mod:`rewindtui.tui.host`):
its workers (to wait until a turn in flight has settled), ``show_conversation``,
``refresh_status`` and ``notify``.
"""

from __future__ import annotations

import logging
from typing import Any

from textual.app import App

from rewindtui.a2a.classify import EventKind, StreamEvent
from rewindtui.a2a.dialect import TURN_ENDING_STATES, norm_state
from rewindtui.base.textsafe import sanitize_line
from rewindtui.client import push
from rewindtui.client.errors import ClientError
from rewindtui.tui.host import finished, wait_for

log = logging.getLogger(__name__)

TITLE = "Push notification"
#: how many times to wait for the screen's work in flight before giving up on a re-read
MAX_WAITS = 50


def _state(task: dict[str, Any]) -> str:
    status = task.get("status")
    return norm_state(status.get("state")) if isinstance(status, dict) else "unknown"


def _context(task: dict[str, Any]) -> str | None:
    found = task.get("contextId") or task.get("context_id")
    return str(found) if found else None


class PushNotices:
    """Hooks a client's receiver to an app; one per app, re-hooked on every (re)connect."""

    def __init__(self, app: App[Any], screen: Any) -> None:
        self.app = app
        self.screen = screen  # the chat screen (the host interface)
        #: what was shown, for tests and the palette: (task id, text of the toast)
        self.shown: list[tuple[str, str]] = []
        self.client: Any = None

    # -- wiring ------------------------------------------------------------------------------------
    def hook(self, client: Any) -> bool:
        """Listen to ``client``'s receiver (True) -- none when push is off (False)."""
        self.client = client
        receiver = push.receiver_of(client)
        if receiver is None:
            return False
        receiver.on_notification = self.heard
        return True

    @property
    def on(self) -> bool:
        return self.client is not None and push.receiver_of(self.client) is not None

    def why_not(self, client: Any) -> str:
        """Why push cannot be turned on for ``client`` ("" when it can)."""
        caps = client.capabilities
        if caps is None:
            return "not connected yet"
        try:
            push.SendPush(client, enabled=True).check()
        except ClientError as exc:
            return str(exc)
        return ""

    async def turn_on(self, client: Any) -> None:
        await push.attach(client)
        self.hook(client)

    async def turn_off(self, client: Any) -> None:
        await push.detach(client)

    async def release(self) -> None:
        """Stop the receiver of the client heard (the app lets go of its connection)."""
        client, self.client = self.client, None
        if client is not None:
            await push.detach(client)

    # -- a notification ----------------------------------------------------------------------------
    def heard(self, task: dict[str, Any]) -> None:
        """The receiver's callback (on the app's loop): handled in a worker, after the screen's
        turn in flight has settled (its own stream may still be delivering this very end)."""
        self.app.run_worker(self._handle(task), group="push-notice")

    async def _settled(self) -> bool:
        """Wait until no turn, rewind or session switch is in flight (False: still busy)."""
        screen = self.screen
        for _ in range(MAX_WAITS):
            workers = [screen.ops.worker(group) for group in ("turn", "rewind", "session")]
            if all(finished(w) for w in workers):
                return True
            for worker in workers:
                await wait_for(worker)
        return False

    async def _handle(self, task: dict[str, Any]) -> None:
        task_id = str(task.get("id") or "")
        if not task_id or _state(task) not in TURN_ENDING_STATES:
            return
        settled = await self._settled()
        chat = getattr(self.app, "chat", None)
        state = _state(task)
        context = _context(task)
        if chat is None or context is None or context != chat.session_id:
            self._toast(
                task_id, f"A turn of session {sanitize_line(context or '?')} ended {state} (not the one open here)."
            )
            return
        conversation = chat.conversation
        seen_ended = (
            conversation.current_task_id == task_id
            and conversation.turn_state in TURN_ENDING_STATES
            and chat.interrupted_task_id != task_id
        )
        known_older = conversation.current_task_id != task_id and any(i.task_id == task_id for i in conversation.items)
        if seen_ended or known_older:
            return  # the view saw this turn end (its stream delivered it)
        if not settled:
            self._toast(task_id, f"The turn ended {state} on the server; reload the session (ctrl+p) to see it.")
            return
        shown = await self._reread(chat, task)
        self._toast(task_id, f"The turn finished on the server while its stream was cut: it ended {state}; {shown}.")

    async def _reread(self, chat: Any, task: dict[str, Any]) -> str:
        """The session as the server has it; else the notified task. What was shown, in words."""
        screen = self.screen
        if chat.interrupted_task_id == task.get("id"):
            chat.interrupted_task_id = None
        try:
            read = await chat.refresh()
        except ClientError as exc:
            log.info("re-reading the session after a push notification failed: %s", exc)
            read = False
        if read:
            how = "re-read from the server"
        else:
            change = chat.conversation.apply(StreamEvent(EventKind.TASK, task))
            chat.conversation.turn_state = _state(task)
            if chat.listener is not None and not change.empty:
                chat.listener(change)
            how = "shown from the notification (the server could not be read)"
        screen.show_conversation()
        screen.refresh_status()
        return how

    def _toast(self, task_id: str, text: str) -> None:
        self.shown.append((task_id, text))
        self.screen.notify(text, title=TITLE, timeout=10, markup=False)
