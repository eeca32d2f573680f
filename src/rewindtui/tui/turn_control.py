"""The running turn's control: stop a reply (what came stays), follow a turn the server still
runs, answer the agent's question, and what the turn bar, footer and history note show of it."""

from __future__ import annotations

from functools import partial

from rewindtui.chat import Action, AnsweredElsewhere, TurnInterrupted
from rewindtui.client.a2a_client import ClientError
from rewindtui.client.errors import user_message
from rewindtui.tui.host import ScreenHost, finished, sentence, wait_for
from rewindtui.tui.turn_buttons import TurnButtons
from rewindtui.tui.widgets.history_note import HistoryNote


class TurnControl:
    def __init__(self, host: ScreenHost) -> None:
        self.host = host
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
        if finished(host.stop_worker):
            host.activity = "stopping…"
            host.refresh_status()
            host.stop_worker = host.run_worker(self._stop, group="stop")
        return True

    async def _stop(self) -> None:
        host = self.host
        chat = host.chat
        assert chat is not None
        try:
            await chat.stop()
            await wait_for(host.turn_worker)  # the turn settles what the view shows
        finally:
            host.activity = None
            host.refresh_status()
        state = chat.conversation.turn_state
        host.notify(
            f"Stopped: the turn is {state}; what came before the stop stays, marked stopped.",
            title="Stopped",
            timeout=5,
        )

    # -- interrupted, reattach ---------------------------------------------------------------------
    def interrupted(self, exc: TurnInterrupted) -> None:
        """The stream stopped before the turn ended and could not be resumed: the view shows what
        the server holds (the turn marked interrupted), and the notice says so."""
        host = self.host
        host.outcome = None
        running = host.chat is not None and host.chat.interrupted_task_id is not None
        hint = " “Reattach” (the turn bar or ctrl+p) follows it again." if running else ""
        host.notify(f"{sentence(str(exc))}{hint}", title="Interrupted", severity="warning", timeout=10)

    def reattach(self) -> None:
        """Follow again a turn the server still runs (the session's last turn, or one whose
        stream was cut): streamed where the server can, else re-read until it ends."""
        host = self.host
        chat = host.chat
        if chat is None or not (chat.conversation.running_task_id or chat.interrupted_task_id):
            host.notify("No turn of this session is running on the server.", title="Reattach")
            return
        if not finished(host.turn_worker) or host.rewinding:
            return
        host.turn_worker = host.run_worker(self._reattach, group="turn")
        host.refresh_status()

    async def _reattach(self) -> None:
        host = self.host
        assert host.chat is not None
        host.notify("Following the turn the server is still running (Esc stops it).", title="Reattached", timeout=4)
        try:
            await host.chat.resume()
        except ClientError as exc:
            host.notify(user_message(exc), title="Reattach failed", severity="error", timeout=8)
        finally:
            host.refresh_status()

    # -- a question of the agent -------------------------------------------------------------------
    def answer(self, approve: bool) -> None:
        """alt+y / alt+n, the turn bar's buttons: answer the agent's question."""
        host = self.host
        chat = host.chat
        if chat is None:
            return
        reason = chat.why_not(Action.ANSWER) or (
            "" if finished(host.turn_worker) else "Wait for the current turn to finish."
        )
        if reason:
            host.notify(sentence(reason), title="Approve / reject", severity="warning")
            return
        self.answering = approve
        host.refresh_status()
        host.turn_worker = host.run_worker(partial(self._answer, approve), group="turn")

    async def _answer(self, approve: bool) -> None:
        host = self.host
        assert host.chat is not None
        try:
            await host.chat.confirm(approve)
        except TurnInterrupted as exc:
            self.interrupted(exc)
        except AnsweredElsewhere as exc:  # the view now shows the server's session
            host.notify(str(exc), title="Approve / reject", severity="warning", timeout=8)
        except ClientError as exc:
            host.notify(f"Not answered: {user_message(exc)}", title="Approve / reject", severity="error", timeout=8)
        finally:
            self.answering = None
            host.refresh_status()

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
        elif host.activity == "stopping…":
            bar.show_stopping()
        elif not finished(host.turn_worker) and chat.conversation.busy:
            bar.show_replying()
        elif question is not None:
            bar.show_question(question)
        elif chat.interrupted_task_id is not None and not chat.sending:
            bar.show_running("the stream was cut; the server is still running this turn.")
        else:
            bar.hide()
        host.transcript.screen.query_one(HistoryNote).show_note(perms.history_note)
