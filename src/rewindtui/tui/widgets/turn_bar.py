"""The running turn's controls, one line above the composer, shown only when there is something
to do about the turn:

* a reply is streaming in: **■ Stop** (Esc) asks the server to cancel it;
* the stop is under way: what is happening (the server is asked, then the stream is closed);
* the agent asks for approval of a tool call: the question, the call, **✓ Approve** (alt+y) and
  **✗ Reject** (alt+n);
* the answer is on its way;
* the stream was cut while the server still runs the turn: **⟳ Reattach** follows it again.

It only shows what the screen tells it and posts what the user chose; the screen decides.
"""

from __future__ import annotations

import json
from typing import Any

from rich.text import Text
from textual.app import ComposeResult
from textual.containers import Horizontal
from textual.message import Message
from textual.widgets import Button, Static

from rewindtui.base.textsafe import sanitize_line
from rewindtui.model import Confirmation
from rewindtui.tui import interaction

_ARGS_LIMIT = 60
KINDS = ("replying", "stopping", "question", "answering", "running")


def _call_text(confirmation: Confirmation) -> str:
    args = confirmation.args
    try:
        shown = json.dumps(args, ensure_ascii=False, default=str) if args is not None else ""
    except (TypeError, ValueError):
        shown = repr(args)
    if len(shown) > _ARGS_LIMIT:
        shown = shown[: _ARGS_LIMIT - 1] + "…"
    return sanitize_line(f"{confirmation.tool}({shown})")


class TurnBar(Horizontal):
    DEFAULT_CSS = """
    TurnBar { height: auto; display: none; padding: 0 1; background: $panel; }
    TurnBar.-shown { display: block; }
    TurnBar.-question { background: $warning 20%; }
    TurnBar.-running { background: $warning 10%; }
    TurnBar #turn-text { width: 1fr; height: auto; }
    TurnBar Button { margin: 0 0 0 1; min-width: 8; display: none; }
    TurnBar.-replying #turn-stop { display: block; }
    TurnBar.-question #turn-approve { display: block; }
    TurnBar.-question #turn-reject { display: block; }
    TurnBar.-running #turn-reattach { display: block; }
    TurnBar #turn-text { max-height: 6; }
    TurnBar.-narrow { layout: vertical; }
    TurnBar.-narrow Button { margin: 0; }
    """

    #: the text last shown (the same again is not drawn again)
    _shown: Text | None = None

    #: below this width the text takes the whole line and the buttons go under it (never one
    #: letter per line beside them)
    NARROW = 72

    class Stop(Message):
        """Stop the reply (the Stop button)."""

    class Answer(Message):
        """Approve or reject the tool call the agent asks about."""

        def __init__(self, approve: bool) -> None:
            super().__init__()
            self.approve = approve

    class Reattach(Message):
        """Follow again a turn the server still runs."""

    def compose(self) -> ComposeResult:
        yield Static(id="turn-text")
        yield Button(
            "■ Stop",
            id="turn-stop",
            variant="error",
            compact=True,
            tooltip="Stop the reply: the server is asked to cancel the turn (Esc)",
        )
        yield Button(
            "✓ Approve",
            id="turn-approve",
            variant="success",
            compact=True,
            tooltip="Let the agent run this tool call (alt+y)",
        )
        yield Button(
            "✗ Reject",
            id="turn-reject",
            variant="error",
            compact=True,
            tooltip="Do not run this tool call; the agent is told so (alt+n)",
        )
        yield Button(
            "⟳ Reattach",
            id="turn-reattach",
            variant="primary",
            compact=True,
            tooltip="Follow the turn the server is still running",
        )

    @property
    def kind(self) -> str:
        return next((kind for kind in KINDS if self.has_class(f"-{kind}")), "")

    @property
    def text(self) -> str:
        return str(self.query_one("#turn-text", Static).render())

    def on_resize(self) -> None:
        self.set_class(self.size.width < self.NARROW, "-narrow")

    def _show(self, kind: str, text: Text) -> None:
        if self.kind != kind:
            self.set_classes(f"-shown -{kind}")
        elif text == self._shown:
            return  # shown already: each change of a streaming turn asks again (an update lays out the screen)
        self._shown = text
        self.query_one("#turn-text", Static).update(text)

    def show_replying(self, stoppable: bool = True) -> None:
        """A reply streams in; ``stoppable``: Esc may stop it (not in a read-only session, which
        follows the turn of whoever may write to it)."""
        text = Text()
        text.append("● ", style="bold")
        text.append("The reply is streaming in.")
        text.append(" Esc stops it." if stoppable else " Read-only here: followed, not stopped.", style="italic")
        self._show("replying", text)

    def show_stopping(self) -> None:
        text = Text()
        text.append("■ Stopping…", style="bold")
        text.append(" the server is asked to cancel the turn; the stream is closed if it does not end soon.")
        self._show("stopping", text)

    def show_question(self, confirmation: Confirmation) -> None:
        text = Text()
        text.append("? The agent asks", style="bold reverse")
        text.append(" ")
        text.append(sanitize_line(confirmation.hint) or f"May it run {sanitize_line(confirmation.tool)}?", style="bold")
        text.append("  ")
        text.append(_call_text(confirmation), style="italic")
        keymap = getattr(self.app, "keymap_overrides", None)
        approve, reject = interaction.keys_of("chat.approve", keymap), interaction.keys_of("chat.reject", keymap)
        text.append(f"  {approve} approves, {reject} rejects.", style="dim")
        self._show("question", text)

    def show_answering(self, approve: bool) -> None:
        verb = "Approving" if approve else "Rejecting"
        self._show("answering", Text(f"{verb}… the answer is on its way to the agent.", style="italic"))

    def show_running(self, reason: str) -> None:
        text = Text()
        text.append("⚠ Interrupted", style="bold")
        text.append(f" {sanitize_line(reason)}")
        self._show("running", text)

    def hide(self) -> None:
        if self.kind:
            self.set_classes("")

    def on_button_pressed(self, event: Button.Pressed) -> None:
        event.stop()
        message: Any = {
            "turn-stop": self.Stop(),
            "turn-approve": self.Answer(True),
            "turn-reject": self.Answer(False),
            "turn-reattach": self.Reattach(),
        }.get(event.button.id or "")
        if message is not None:
            self.post_message(message)
