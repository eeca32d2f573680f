"""Sending what the composer holds: a slash command runs (never sent), ``//`` sends a literal
slash, a text that cannot go now is put back (nothing typed is lost), an edit's text is the
edit's rewind-and-send, and a send waits for the turn still closing its stream."""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from typing import Any

from rewindtui.chat import Action, StoppedBeforeSending, TurnInterrupted
from rewindtui.client.a2a_client import ClientError
from rewindtui.client.attachments import Attachment
from rewindtui.tui import slash
from rewindtui.tui.composer_memory import ComposerMemory
from rewindtui.tui.host import ScreenHost
from rewindtui.tui.message_queue import MessageQueue
from rewindtui.tui.screens.confirm import ConfirmScreen
from rewindtui.tui.screens.queue_choice import QueueChoiceScreen


class Sending:
    def __init__(
        self,
        host: ScreenHost,
        memory: ComposerMemory,
        *,
        commands: slash.SlashHost,
        take_attachments: Callable[[], list[Attachment]],
        restore_attachments: Callable[[list[Attachment]], None],
        hide_banner: Callable[[], None],
        queue: MessageQueue | None = None,
        ask: Callable[[Any, Callable[[Any], None]], Any] | None = None,
    ) -> None:
        self.host = host
        self.memory = memory
        self.commands = commands
        self.take_attachments = take_attachments
        self.restore_attachments = restore_attachments
        self.hide_banner = hide_banner
        self.queue = queue  # Enter during a reply queues the message (sent when the turn ends)
        self.ask = ask
        self.asking = False  # the queue's question is on screen: asked once

    def set_aside(self) -> None:
        """Before another session opens: an edit ends (its draft back), this session's draft stays with it."""
        host = self.host
        chat = host.chat
        if chat is not None and chat.edit is not None:
            chat.cancel_edit()
            host.composer.clear_draft()
            host.banner.hide()
            self.memory.restore_stash()
        self.unqueue_all()  # queued messages go back to the composer: they stay with the draft
        if self.queue is not None:
            self.queue.forget()  # the session opened next reads its kept queue
        self.memory.keep_draft()

    def edit_started(self, text: str, turns: int) -> None:
        """An edit began (the draft was stashed): the turn's text in the composer, the banner says
        how many turns Enter will replace."""
        host = self.host
        host.composer.set_draft(text)
        host.composer.focus()
        host.banner.show_edit(text, turns)
        host.refresh_status()

    def retry(self) -> None:
        """Send the failed last turn again (``Chat.retry``): a rewind-and-send where the server rewinds."""
        chat = self.host.chat
        if chat is not None:
            self.host.ops.run(Action.RETRY, chat.retry, title="Retry", doing="retrying…")
        else:
            self.host.notify("Not connected.", title="Retry unavailable", severity="warning")

    def _refuse(self, text: str, why: str) -> None:
        self.memory.keep_unsent(text)
        self.host.notify(why, severity="warning")

    def submitted(self, text: str) -> None:
        """The composer's Enter (the composer is already empty: the text is put back unless sent)."""
        host = self.host
        chat = host.chat
        if host.rewind_mode:
            host.leave_mode()
        if slash.parse(text) is not None:
            if not slash.run(self.commands, text):
                self.memory.keep_unsent(text)
            return
        text = slash.literal(text)
        ops = host.ops
        if chat is None:
            return self._refuse(text, "Not connected yet; your draft is kept.")
        if host.replying:
            if self.queue is not None and chat.edit is None and not self.host.composer.attachments_pending:
                if self.queue.add(text):
                    host.notify(
                        "Queued: it is sent when the reply ends (ctrl+z or ↑ takes it back).", title="Queued", timeout=3
                    )
                    return None
                return self._refuse(text, "Too many messages queued; this one stays in the composer.")
            return self._refuse(text, "A reply is still coming in (Esc stops it); your draft is kept.")
        action = Action.EDIT if chat.edit is not None else Action.SEND
        reason = ops.why_not(action)  # the gate: a rewind or a switch in flight, a question waiting
        if reason:  # a waiting question's words say what to do; the draft is kept all the same
            why = reason if chat.pending_confirmation() is not None else f"{reason.rstrip('.')}; your draft is kept."
            return self._refuse(text, why)
        if chat.edit is not None and not text.strip():
            return self._refuse(text, "An edited turn needs its text (attachments go with the next new message).")
        self.memory.remember_prompt(text)
        self.memory.forget_kept_draft()  # sent: a refused send puts it back in the composer
        if chat.edit is not None:
            # the edit's rewind-and-send: a rewind in flight until the server has answered
            ops.run(
                None,
                partial(chat.send, text),
                title="Edit and resend",
                doing="rewinding…",
                started=self.hide_banner,
                failed=partial(self._edit_not_sent, text),
                done=lambda _: self.memory.restore_stash(),
                ends_turn=True,
            )
            return
        host.follow_new_turn()  # scrolled up to read: the new turn is followed all the same
        # a turn that has just ended may still be closing its stream: this send waits for it
        self._start(text, self.take_attachments())

    def _start(self, text: str, attachments: list[Attachment]) -> None:
        ops = self.host.ops
        handover = ops.hand_over()
        send = partial(self._send, text, attachments, handover)
        ops.run(None, send, title="Send", group="turn", after=ops.worker("turn"))

    def _not_sent(self, text: str, attachments: list[Attachment], exc: ClientError) -> None:
        """Nothing typed is lost: the text (and files) back in the composer -- unless the server
        has the message (the stream was cut after it took it)."""
        if not isinstance(exc, TurnInterrupted):
            self.memory.keep_unsent(text)
            self.restore_attachments(attachments)

    def _edit_not_sent(self, text: str, exc: ClientError) -> None:
        """An edit's resend failed: its text back in the composer; when the edit ended with it (the
        session was changed elsewhere and reloaded), the draft it set aside comes back after it."""
        self._not_sent(text, [], exc)
        chat = self.host.chat
        if chat is None or chat.edit is None:
            self.memory.restore_stash()

    async def _send(self, text: str, attachments: list[Attachment], handover: int) -> None:
        """Send ``text``; then, while each turn ends completed, the queued messages in order, one
        turn each. A turn that ends otherwise leaves the rest of the queue to the user. A stop that
        came while the send was handed over (``handover``) keeps it from leaving."""
        host = self.host
        chat = host.chat
        assert chat is not None
        if host.ops.handed(handover):  # stopped before it reached the core: it does not leave
            stopped = StoppedBeforeSending()
            self._not_sent(text, attachments, stopped)
            host.ops.refused(stopped, "Send", ends_turn=True)
            return
        session = chat.session_id
        while await self._send_one(text, attachments):
            if self.queue is None or not self.queue or (session is not None and chat.session_id != session):
                return
            queued = self.queue.pop_first()
            if queued is None:
                return
            text, attachments = queued, []
            self.memory.remember_prompt(text)
            session = chat.session_id
        self.queue_left(chat.conversation.turn_state)

    async def _send_one(self, text: str, attachments: list[Attachment]) -> bool:
        """One turn; True if it ended completed (the queue may follow it). A failure is said in
        the runner's words, and the text comes back to the composer."""
        host = self.host
        assert host.chat is not None
        try:
            await host.chat.send(text, attachments)
        except ClientError as exc:
            self._not_sent(text, attachments, exc)
            host.ops.refused(exc, "Send", ends_turn=True)
            return False
        finally:
            host.refresh_status()
        return host.chat.conversation.turn_state == "completed"

    # -- the queue (rewindtui.tui.message_queue) ---------------------------------------------------
    def queue_left(self, why: str, *, restored: bool = False) -> None:
        """Messages wait in the queue and no turn will send them (the turn was stopped, failed or
        asks a question; or they were kept from before a restart): ask whether to send them."""
        queue = self.queue
        if queue is None or not queue or self.asking:
            return
        if self.ask is None:
            self.unqueue_all()
            return
        self.asking = True
        count = len(queue)
        what = f"{count} queued message{'s' if count != 1 else ''}"
        title = f"{what} from before the app closed" if restored else f"The reply ended {why}; {what} wait"
        self.ask(
            ConfirmScreen(
                f"{title}. Send {'it' if count == 1 else 'them'} now?",
                "Send: in order, one turn each. Keep queued: they wait, and go after your next message "
                "(a rewind asks about them). Back to the composer: nothing is sent, the text comes back "
                "to edit or clear (ctrl+c).",
                go="Send",
                stay="Back to the composer",
                purpose="queue",
                also="Keep queued",
            ),
            self._queue_answered,
        )

    def _queue_answered(self, go: bool | None) -> None:
        self.asking = False
        host = self.host
        queue = self.queue
        if queue is None or not queue:
            return
        if go is None and host.chat is not None:
            return  # kept queued: sent after the next message, shown under the conversation
        if not go or host.chat is None or host.rewinding:
            self.unqueue_all()
            return
        self.send_queue()

    def after_followed(self, state: str) -> None:
        """A turn this app followed, not sent (another client's, or one whose stream was cut),
        ended as ``state``: what was queued behind it goes now when it completed, as after a turn
        of ours; else the user is asked."""
        if self.queue is None or not self.queue:
            return
        if state == "completed":
            self.send_queue()
        else:
            self.queue_left(state)

    def send_queue(self) -> None:
        """The queued messages, in order, one turn each (a turn still running ends first)."""
        queue = self.queue
        first = queue.pop_first() if queue is not None else None
        if first is None:
            return
        self.memory.remember_prompt(first)
        self._start(first, [])

    def before_rewind(self, rewind: Callable[[Callable[[object], None] | None], None]) -> None:
        """A rewind is about to change the conversation under the queued messages: ask what to do
        with them (send them after it, keep them queued, or into the composer -- nothing is lost;
        Esc: no rewind), then ``rewind`` (with what to do once it is done). No queue: no question."""
        queue = self.queue
        if queue is None or not queue or self.ask is None:
            rewind(None)
            return
        count = len(queue)
        what = f"{count} queued message{'s' if count != 1 else ''}"

        def answered(choice: str | None) -> None:
            if choice is None:
                self.host.notify("Nothing was rewound; the queue is as it was.", title="Rewind", timeout=4)
            elif choice == "draft":
                self.unqueue_all()
                rewind(None)
            elif choice == "send":
                rewind(lambda _: self.send_queue())
            else:
                rewind(None)

        self.ask(
            QueueChoiceScreen(
                f"{what} wait{'s' if count == 1 else ''}. This rewind changes the conversation they follow.",
                "Send them after it: in order, one turn each, once the rewind is done. Keep them queued: they "
                "go after your next message. Into the composer: nothing is sent, the text comes back to edit. "
                "Esc: no rewind.",
            ),
            answered,
        )

    def unqueue_all(self) -> None:
        """Every queued message back in the composer, in order (nothing is sent, nothing lost)."""
        if self.queue is None:
            return
        for text in self.queue.take_all():
            self.memory.keep_unsent(text)

    def take_back_queued(self) -> bool:
        """ctrl+z / ↑ with a queue: the last queued message back into the composer (to edit it, or
        clear it to cancel). True if there was one."""
        if self.queue is None:
            return False
        text = self.queue.take_last()
        if text is None:
            return False
        self.memory.keep_unsent(text)
        self.host.notify(
            "Taken out of the queue: edit it and press Enter, or ctrl+c to drop it.", title="Queued", timeout=4
        )
        return True
