"""The running turn's control: stop a reply (what came stays), follow a turn the server still
runs, answer the agent's question, and what the turn bar, footer and history note show of it."""

from __future__ import annotations

from collections.abc import Callable
from functools import partial

from rewindtui.chat import Action
from rewindtui.tui.host import ScreenHost, wait_for
from rewindtui.tui.turn_buttons import TurnButtons
from rewindtui.tui.widgets.history_note import HistoryNote


class TurnControl:
    def __init__(self, host: ScreenHost, *, followed: Callable[[str], None] = lambda state: None) -> None:
        self.host = host
        self.followed = followed  # a followed turn ended (how: its state): the queue behind it
        self.answering: bool | None = None  # the answer on its way (approve?), None: none
        self._shown_permissions: tuple[object, ...] | None = None

    # -- stop ------------------------------------------------------------------------------------
    def stop_reply(self) -> bool:
        """Stop the reply streaming in (Esc, the turn bar's Stop, /stop, the palette): the server
        is asked to cancel the turn, and the stream is closed if it does not end within a grace
        period (:meth:`Chat.stop`). What came stays, marked stopped. True if there was a reply."""
        host = self.host
        if host.chat is None or not host.replying:
            return False
        if not host.ops.running("stop"):
            host.ops.run(Action.STOP, self._stop, title="Stop", doing="stopping…", group="stop", done=self._stopped)
        return True

    async def _stop(self) -> bool:
        """True: the reply was stopped; False: the send was stopped before its message left
        (the send's own words say so, and put the text back)."""
        chat = self.host.chat
        assert chat is not None
        ops = self.host.ops
        if ops.handing_over:  # a send not yet in the core is not sent (no reply runs: nothing else)
            ops.stop_before_send()
            await wait_for(ops.worker("turn"))
            return False
        streaming = chat.sending
        await chat.stop()  # a send being prepared in the core is stopped before it leaves
        await wait_for(self.host.ops.worker("turn"))  # the turn settles what the view shows
        return streaming

    def _stopped(self, streaming: bool) -> None:
        if not streaming:
            return
        chat = self.host.chat
        state = chat.conversation.turn_state if chat is not None else "stopped"
        self.host.notify(
            f"Stopped: the turn is {state}; what came before the stop stays, marked stopped.",
            title="Stopped",
            timeout=5,
        )

    # -- reattach ----------------------------------------------------------------------------------
    def reattach(self) -> None:
        """Follow again a turn the server still runs (the session's last turn, or one whose
        stream was cut): streamed where the server can, else re-read until it ends."""
        host = self.host
        chat = host.chat
        if chat is None or not (chat.conversation.running_task_id or chat.interrupted_task_id):
            host.notify("No turn of this session is running on the server.", title="Reattach")
            return
        if host.ops.running("turn") or host.rewinding:
            return
        host.ops.run(
            None,
            self._reattach,
            title="Reattach",
            group="turn",
            done=lambda _: self._ended(),
            failed=lambda _: self._ended(),
        )

    def _ended(self) -> None:
        chat = self.host.chat
        if chat is not None:
            self.followed(chat.conversation.turn_state)

    async def _reattach(self) -> None:
        host = self.host
        assert host.chat is not None
        how = "read-only here" if host.chat.permissions().read_only else "Esc stops it"
        host.notify(f"Following the turn the server is still running ({how}).", title="Reattached", timeout=4)
        await host.chat.resume()

    # -- a question of the agent -------------------------------------------------------------------
    def answer(self, approve: bool) -> None:
        """alt+y / alt+n, the turn bar's buttons: answer the agent's question."""
        host = self.host
        chat = host.chat
        if chat is None:
            return
        if host.ops.running("turn"):
            host.notify("Wait for the current turn to finish.", title="Approve / reject", severity="warning")
            return
        self.answering = approve
        worker = host.ops.run(
            Action.ANSWER,
            partial(chat.confirm, approve),
            title="Approve / reject",
            group="turn",
            done=self._answered,
            failed=self._answered,
        )
        if worker is None:
            self.answering = None
        host.refresh_status()

    def _answered(self, _: object) -> None:
        self.answering = None
        self.host.refresh_status()

    # -- what shows of it ------------------------------------------------------------------------
    def show(self, refresh_bindings: object) -> None:
        """What the chat's permissions and turn say, everywhere it shows: the transcript's
        buttons, the footer's keys (``refresh_bindings`` when they change), the turn bar and the
        history note. The question bar shows whenever the core says a question is pending."""
        host = self.host
        chat = host.chat
        assert chat is not None
        perms = chat.permissions()
        host.transcript.set_buttons(TurnButtons.of(perms))
        host.composer.read_only_because(perms.read_only)  # a read-only session: typing off, and why
        question = chat.pending_confirmation()
        shown = (perms.can_rewind, perms.can_fork, perms.rewind_reason, perms.fork_reason, question is not None)
        if shown != self._shown_permissions:
            self._shown_permissions = shown
            if callable(refresh_bindings):
                refresh_bindings()
        bar = host.turn_bar
        if self.answering is not None:
            bar.show_answering(self.answering)
        elif host.ops.activity == "stopping…":
            bar.show_stopping()
        elif host.ops.running("turn") and chat.conversation.busy:
            bar.show_replying(stoppable=not perms.read_only)
        elif question is not None:
            bar.show_question(question)
        elif chat.interrupted_task_id is not None and not chat.sending:
            bar.show_running("the stream was cut; the server is still running this turn.")
        else:
            bar.hide()
        host.transcript.screen.query_one(HistoryNote).show_note(perms.history_note)
