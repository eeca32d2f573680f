"""The one way an action runs in the app (as mistral-vibe's commands carry ``is_available`` and one
handler runs them): every feature -- send, stop, answer, rewind, edit, fork, undo, redo, restore,
retry, compact, switch -- hands its work to :meth:`Operations.run`, which

1. asks the gate whether the action may run now (:meth:`Operations.why_not`: the core's one
   permissions gate, plus the work the app has queued that the core cannot see yet) and says why
   not, in one sentence, when it may not;
2. says what is running ("rewinding…", the turn state in the status line);
3. runs it in its worker group (a turn, a rewind, a session switch, a stop: none cancels another);
4. maps its error to words, once (:func:`words`);
5. shows the core's :class:`~rewindtui.chat.Outcome` as the core counted it.

The state of what runs -- the workers, what the screen is doing, how the last request ended --
lives here and is written here only; the screen and the features read it.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from functools import partial
from typing import TYPE_CHECKING, Any, Protocol

from textual.worker import Worker

from rewindtui.chat import (
    Action,
    AnsweredElsewhere,
    Outcome,
    QuestionWaiting,
    RewindOutcomeUnknown,
    StoppedBeforeSending,
    TurnInterrupted,
    TurnRefused,
)
from rewindtui.client.a2a_client import ClientError
from rewindtui.client.errors import user_message
from rewindtui.tui import interaction
from rewindtui.tui.host import finished, sentence, wait_for

if TYPE_CHECKING:
    from rewindtui.chat import Chat

#: the worker groups: one of each runs at a time, and none cancels another
GROUPS = ("turn", "rewind", "session", "stop")

#: the actions that change what the conversation is (one at a time, in the "rewind" group)
REWIND_LIKE = frozenset(
    {Action.REWIND, Action.EDIT, Action.FORK, Action.UNDO, Action.REAPPLY, Action.RESTORE, Action.REDO, Action.RETRY}
)

#: the interaction table's commands that run one action of the gate: the palette and the slash menu
#: offer them only while the gate allows it (as posting's palette offers only what can run now)
COMMAND_ACTIONS = {
    "transcript.edit": Action.EDIT,
    "transcript.fork": Action.FORK,
    "chat.redo": Action.REAPPLY,
    "chat.stop": Action.STOP,
    "chat.retry": Action.RETRY,
    "chat.approve": Action.ANSWER,
    "chat.reject": Action.ANSWER,
    "chat.compact": Action.REWIND,
}


class RunnerHost(Protocol):
    chat: Chat | None

    @property
    def keymap(self) -> dict[str, str]: ...

    def refresh_status(self) -> None: ...

    def notify(
        self,
        message: str,
        *,
        title: str = "",
        severity: Any = "information",
        timeout: float | None = None,
        markup: bool = True,
    ) -> None: ...

    def run_worker(
        self,
        work: Any,
        *,
        group: str = "default",
        exclusive: bool = False,
        exit_on_error: bool = True,
    ) -> Worker[Any]: ...


def reconnect_hint(exc: ClientError) -> str:
    reason = str(exc).lower()
    if "connect" in reason or "reach" in reason or "connection refused" in reason:
        return " — “Reconnect” (ctrl+p) restarts or reconnects the server."
    return ""


@dataclass(frozen=True)
class Words:
    """An error as the user reads it."""

    text: str
    title: str
    severity: str = "error"
    timeout: float = 8
    #: how the request ended when the conversation cannot say ("not sent", "failed"); None: it can
    outcome: str | None = None


def words(exc: ClientError, title: str) -> Words:
    """The one mapping from an operation's error to words."""
    if isinstance(exc, StoppedBeforeSending):  # ctrl+c or Esc right after Enter: nothing left
        return Words(f"{sentence(str(exc))} Your message is back in the composer.", "Stopped", "information", 5)
    if isinstance(exc, QuestionWaiting):  # nothing was sent: no "failed"
        return Words(user_message(exc), "A question waits", "warning")
    if isinstance(exc, AnsweredElsewhere):  # the view now shows the server's session
        return Words(str(exc), title, "warning")
    if isinstance(exc, TurnInterrupted):
        return Words(sentence(str(exc)), "Interrupted", "warning", 10)
    if isinstance(exc, RewindOutcomeUnknown):
        if exc.reread:
            text = f"The view was re-read from the server and shows what it holds: {exc}."
        else:
            text = f"{sentence(str(exc))} The view is as it was before the rewind."
        return Words(text, f"{title}: outcome unknown", "warning", 10)
    ended = "not sent" if isinstance(exc, TurnRefused) else "failed"
    return Words(f"{user_message(exc)}{reconnect_hint(exc)}", f"{title} failed", "error", 8, ended)


class Operations:
    def __init__(self, host: RunnerHost) -> None:
        self.host = host
        #: what is running right now ("rewinding…"), shown as the turn state; None: nothing
        self.activity: str | None = None
        #: how the last request ended when the conversation cannot say ("failed"); None: it can
        self.outcome: str | None = None
        self.workers: dict[str, Worker[Any] | None] = dict.fromkeys(GROUPS)
        #: a send handed to the turn worker that has not reached the core (``Chat.send``) yet: it
        #: counts as replying (a stop keeps it from leaving, Enter queues behind it)
        self.handing_over = False
        self._stop_before_send = False
        self._handovers = 0  # which send is handed over (a turn worker ending later must not end it)

    def reset(self) -> None:
        """A chat was attached: nothing of the last one's requests is said any more."""
        self.activity = self.outcome = None

    # -- what runs ---------------------------------------------------------------------------
    def worker(self, group: str) -> Worker[Any] | None:
        return self.workers.get(group)

    def running(self, group: str) -> bool:
        return not finished(self.workers.get(group))

    @property
    def replying(self) -> bool:
        """A reply is streaming in (the turn has not ended), or a send is being prepared (its
        freshness check: ctrl+c or Esc stops it before the message leaves, Enter queues)."""
        chat = self.host.chat
        if chat is None or not self.running("turn"):
            return False
        return (chat.sending and chat.conversation.busy) or chat.preparing_send or self.handing_over

    def hand_over(self) -> int:
        """A send goes to the turn worker (:attr:`handing_over` until :meth:`handed` with the
        number this returns)."""
        self.handing_over, self._stop_before_send = True, False
        self._handovers += 1
        return self._handovers

    def stop_before_send(self) -> None:
        """A stop came while a send is handed over: :meth:`handed` says so."""
        if self.handing_over:
            self._stop_before_send = True

    def handed(self, handover: int) -> bool:
        """Send ``handover`` reaches the core now (or ends); True if a stop came first (it must not
        be sent). A later send's handover is left as it is."""
        if handover != self._handovers or not self.handing_over:
            return False
        stopped = self._stop_before_send
        self.handing_over = self._stop_before_send = False
        return stopped

    @property
    def rewinding(self) -> bool:
        """A rewind, an edit-and-resend, a fork, an undo or a redo is in flight."""
        chat = self.host.chat
        return self.running("rewind") or (chat is not None and chat.rewinding)

    @property
    def busy(self) -> bool:
        return self.running("turn") or self.rewinding or self.running("session")

    # -- 1. the gate -------------------------------------------------------------------------
    def why_not(self, action: Action) -> str:
        """Why ``action`` can't run now ("" if it can), one sentence: the core's gate, plus what
        the app has started that the core cannot see yet (a session opening, a rewind worker)."""
        chat = self.host.chat
        if chat is None:
            return "Not connected."
        if self.running("session"):
            return "A session is opening; wait for it."
        if self.running("rewind"):
            return "A rewind is in flight; wait for it to finish."
        if action is Action.SEND and chat.sending and not self.replying and chat.edit is None:
            return ""  # the turn has ended and is closing its stream: the send waits for it
        return sentence(chat.why_not(action))

    def allows(self, action: Action) -> bool:
        return not self.why_not(action)

    def offers(self, command_id: str) -> bool:
        """Whether a command of the interaction table can run now (one that is no action of the
        gate always can)."""
        action = COMMAND_ACTIONS.get(command_id)
        return action is None or self.allows(action)

    # -- 2.-5. running it --------------------------------------------------------------------
    def run(
        self,
        action: Action | None,
        work: Callable[[], Awaitable[Any]],
        *,
        title: str,
        doing: str | None = None,
        group: str = "rewind",
        after: Worker[Any] | None = None,
        started: Callable[[], None] | None = None,
        failed: Callable[[ClientError], None] | None = None,
        done: Callable[[Any], None] | None = None,
        exclusive: bool = False,
        exit_on_error: bool = True,
        ends_turn: bool = False,
    ) -> Worker[Any] | None:
        """Run ``work`` for ``action`` (None: asked already, e.g. a send that waits for the turn
        closing its stream). Returns its worker, or None when the gate refused (said as a warning).
        ``ends_turn``: a failure is also how the turn ended ("failed", "not sent" in the status)."""
        if action is not None:
            reason = self.why_not(action)
            if reason:
                self.host.notify(reason, title=f"{title} unavailable", severity="warning", markup=False)
                return None
        if started is not None:
            started()  # allowed: e.g. the preview is left, the composer's text taken
        self.outcome = None
        if finished(after):  # else it is said once what it waits for has ended
            self.activity = doing
        worker = self.host.run_worker(
            partial(self._run, work, title, after, failed, done, ends_turn, doing),
            group=group,
            exclusive=exclusive,
            exit_on_error=exit_on_error,
        )
        self.workers[group] = worker
        self.host.refresh_status()  # the turn bar, the footer's keys and the status read the worker
        return worker

    async def _run(
        self,
        work: Callable[[], Awaitable[Any]],
        title: str,
        after: Worker[Any] | None,
        failed: Callable[[ClientError], None] | None,
        done: Callable[[Any], None] | None,
        ends_turn: bool = False,
        doing: str | None = None,
    ) -> None:
        if not finished(after):
            await wait_for(after)  # a turn that has just ended may still be closing its stream
            self.activity = doing
            self.host.refresh_status()
        try:
            result = await work()
        except ClientError as exc:
            self.activity = None
            self.refused(exc, title, ends_turn=ends_turn)
            if failed is not None:
                failed(exc)
            return
        finally:
            self.activity = None
            self.host.refresh_status()
        if isinstance(result, Outcome):
            self.show(result, title)
        if done is not None:
            done(result)

    def refused(self, exc: ClientError, title: str, *, ends_turn: bool = False) -> None:
        """Say what went wrong, in the one set of words."""
        said = words(exc, title)
        if isinstance(exc, TurnInterrupted):
            self.outcome = None
            chat = self.host.chat
            if chat is not None and chat.interrupted_task_id is not None:
                said = Words(
                    f"{said.text} “Reattach” (the turn bar or ctrl+p) follows it again.", said.title, "warning", 10
                )
        elif said.outcome is not None and ends_turn:
            self.outcome = said.outcome
        self.host.notify(said.text, title=said.title, severity=said.severity, timeout=said.timeout, markup=False)
        self.host.refresh_status()

    def show(self, outcome: Outcome, title: str) -> None:
        """The core's outcome as it counted it; what ctrl+z undoes now, when it is this change."""
        text = outcome.said
        chat = self.host.chat
        same = chat is not None and outcome.session_id == chat.session_id
        if outcome.action is Action.UNDO:
            if outcome.undo_label and same:
                text += f" {self.keys('chat.undo_rewind')}: {outcome.undo_label}."
        elif outcome.action not in (Action.FORK, Action.EDIT) and outcome.undo_label and same:
            text = f"{text.rstrip('.')} — {self.keys('chat.undo_rewind')} undoes it."
        if outcome.warning:
            self.host.notify(outcome.warning, title=title, severity="warning", timeout=8, markup=False)
        self.host.notify(text, title=title, timeout=6, markup=False)
        self.host.refresh_status()

    def keys(self, command_id: str) -> str:
        return interaction.keys_of(command_id, self.host.keymap)
