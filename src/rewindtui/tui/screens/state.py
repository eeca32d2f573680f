"""``/state``: the agent's session state where the server exposes it (the embedded server: ADK's
session state), and what a rewind to before a chosen turn would change in it -- the state delta
ADK's rewind would apply, computed by the server. ↑/↓ choose the turn (it starts on the turn the
rewind preview shows, else the last); Esc closes. Read only: nothing changes here."""

from __future__ import annotations

from typing import Any

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Static

from rewindtui.base.textsafe import sanitize_line
from rewindtui.chat.agent_state import NOT_OFFERED, SessionState, change_lines, read_state, value_text
from rewindtui.client.errors import ClientError, user_message

READING = "Reading the agent's state…"


class StateScreen(ModalScreen[None]):
    CSS_PATH = "state.tcss"
    BINDINGS = [
        Binding("escape,q", "dismiss", "Close", id="state.close", tooltip="Close the state view"),
        Binding(
            "up",
            "point(-1)",
            "Turn before",
            id="state.previous",
            tooltip="What a rewind to the turn before would change",
        ),
        Binding(
            "down", "point(1)", "Turn after", id="state.next", tooltip="What a rewind to the turn after would change"
        ),
    ]

    def __init__(
        self, client: Any, session_id: str, turns: list[tuple[str, str]], chosen: int, *, reader: Any = read_state
    ) -> None:
        """``turns``: (invocation id, the user's text) of each turn, oldest first; ``chosen``:
        the index of the turn a rewind would go back to before; ``reader``: how the state is read
        (``chat.agent_state.read_state``)."""
        super().__init__()
        self.reader = reader
        self.client = client
        self.session_id = session_id
        self.turns = turns
        self.chosen = max(0, min(chosen, len(turns) - 1)) if turns else 0
        self.found: SessionState | None = None
        self.problem = ""  # why there is no state to show (not offered, or the read failed)

    def compose(self) -> ComposeResult:
        with VerticalScroll(id="state-body"):
            title = Text("Agent state", style="bold")
            title.append(" — the session state the server keeps for the agent, now", style="dim")
            yield Static(title, id="state-title")
            yield Static(Text(READING), id="state-now")
            yield Static(id="state-change")
            yield Static(Text("↑/↓ another turn · Esc closes · nothing changes here", style="dim"), id="state-hint")

    def on_mount(self) -> None:
        self.run_worker(self._read(), group="state", exclusive=True)

    async def _read(self) -> None:
        try:
            self.found = await self.reader(self.client, self.session_id)
            if self.found is None:
                self.problem = NOT_OFFERED
        except ClientError as exc:
            self.problem = f"The state could not be read: {user_message(exc)}"
        self._show()

    def action_point(self, step: int) -> None:
        if self.turns:
            self.chosen = max(0, min(self.chosen + step, len(self.turns) - 1))
            self._show()

    def _show(self) -> None:
        now = self.query_one("#state-now", Static)
        change = self.query_one("#state-change", Static)
        if self.found is None:
            now.update(Text(self.problem or READING))
            change.update("")
            return
        state = self.found.state
        text = Text()
        if not state:
            text.append("The session state is empty.", style="dim")
        for n, key in enumerate(sorted(state)):
            text.append("\n" if n else "")
            text.append(sanitize_line(str(key)), style="bold")
            text.append(f" = {value_text(state[key], 90)}")
        now.update(text)
        change.update(self._change_text(state))

    def _change_text(self, state: dict[str, Any]) -> Text:
        assert self.found is not None
        if not self.turns:
            return Text("No turn to rewind to yet.", style="dim")
        invocation, user_text = self.turns[self.chosen]
        words = f"“{sanitize_line(user_text)[:40]}”" if user_text else "the chosen turn"
        text = Text()
        text.append(f"A rewind to before turn {self.chosen + 1} of {len(self.turns)} ", style="bold")
        text.append(words, style="bold")
        delta = self.found.rewind_changes.get(invocation)
        if delta is None:
            text.append(": not computed by the server for this turn.")
            return text
        lines = change_lines(state, delta)
        if not lines:
            text.append(" would change nothing in it.")
            return text
        text.append(" would change:")
        for line in lines:
            text.append(f"\n  {line}")
        return text


def open_state(screen: Any) -> None:
    """``/state`` from the chat screen: the state view, on the turn the rewind preview shows
    (else the last turn)."""
    chat = screen.chat
    if chat is None or not chat.session_id:
        screen.notify("No session yet: the agent has no state to show.", title="State", severity="warning")
        return
    conversation = chat.conversation
    invocations = conversation.turn_invocations()
    turns = [(inv, conversation.user_text_of(inv)) for inv in invocations]
    selected = screen.transcript.selected() if screen.rewind_mode else None
    target = selected.rewind_target if selected is not None else None
    chosen = invocations.index(target) if target in invocations else len(turns) - 1
    screen.app.push_screen(StateScreen(chat.client, chat.session_id, turns, chosen))
