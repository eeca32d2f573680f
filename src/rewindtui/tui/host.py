"""What the chat screen's feature helpers (turn control, rewind choosing, sessions, branches,
files) may use of it: a small host, not its private fields (as mistral-vibe's UI handlers take
callables, not the app). Whether an action may run now is the core's permissions gate
(:meth:`ScreenHost.why_not` reads it, through the operations runner); the helpers decide nothing
of that themselves, and they start every server operation through ``host.ops.run``, which alone
writes what is running."""

from __future__ import annotations

from collections.abc import Callable, Coroutine
from typing import TYPE_CHECKING, Any, Protocol

from textual.worker import Worker

if TYPE_CHECKING:
    from rewindtui.chat import Action, Chat
    from rewindtui.tui.operations import Operations
    from rewindtui.tui.widgets.composer import Composer
    from rewindtui.tui.widgets.mode_banner import ModeBanner
    from rewindtui.tui.widgets.sessions_panel import SessionsPanel
    from rewindtui.tui.widgets.transcript import Transcript
    from rewindtui.tui.widgets.turn_bar import TurnBar


class ScreenHost(Protocol):
    chat: Chat | None
    #: the one way an action runs: the gate, what is running, the workers, the error words, the outcome
    ops: Operations

    @property
    def rewind_mode(self) -> bool: ...

    @property
    def composer(self) -> Composer: ...

    @property
    def transcript(self) -> Transcript: ...

    @property
    def sessions(self) -> SessionsPanel: ...

    @property
    def banner(self) -> ModeBanner: ...

    @property
    def turn_bar(self) -> TurnBar: ...

    @property
    def replying(self) -> bool: ...

    @property
    def rewinding(self) -> bool: ...

    @property
    def busy(self) -> bool: ...

    @property
    def keymap(self) -> dict[str, str]: ...

    def why_not(self, action: Action) -> str: ...

    def refresh_status(self) -> None: ...

    def follow_new_turn(self) -> None: ...

    def show_conversation(self) -> None: ...

    def leave_mode(self, *, focus: bool = True) -> None: ...

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
        work: Coroutine[Any, Any, Any] | Callable[[], Coroutine[Any, Any, Any]],
        *,
        group: str = "default",
        exclusive: bool = False,
        exit_on_error: bool = True,
    ) -> Worker[Any]: ...


def finished(worker: Worker[Any] | None) -> bool:
    return worker is None or worker.is_finished


async def wait_for(worker: Worker[Any] | None) -> None:
    """Wait until ``worker`` is done, however it ends."""
    if worker is not None and not worker.is_finished:
        try:
            await worker.wait()
        except Exception:  # its own handler reported the failure; we only waited for it
            pass


def sentence(text: str) -> str:
    """``text`` as a sentence: a first word capitalised (not a name), a full stop."""
    text = text.strip()
    if not text:
        return text
    first = text.split(" ", 1)[0]
    if first.isalpha() and first.islower():  # a word, not a name like "echo-sdk-03"
        text = text[0].upper() + text[1:]
    return text if text.endswith((".", "!", "?")) else text + "."
