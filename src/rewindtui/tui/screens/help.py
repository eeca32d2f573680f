"""F1: the keys, and what rewind does."""

from __future__ import annotations

from rich.table import Table
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Static

ABOUT = (
    "Rewind takes a conversation back to before any turn: the turn and everything after it go away, "
    "on the server too (its session state and history go back, and the change is saved). Nothing is "
    "deleted: rewound turns are kept on the server, and where it offers redo they can come back.\n\n"
    "Rewind is explicit: nothing is sent until you confirm what you see.\n"
    "• alt+↑ (or Esc Esc on an empty composer, or “⟲ Rewind to here” on a message) enters rewind mode: "
    "a banner says so, and the selected turn and every turn after it are dimmed — that is what would go.\n"
    "• In rewind mode: ↑ / ↓ (alt+↑ / alt+↓) choose the turn, Enter or r rewinds, e edits that turn's "
    "message and resends it, f forks a new session from before it, t shows tool calls, Esc leaves with "
    "nothing changed. Any other key goes to the composer.\n"
    "• After a rewind a note says how many turns went; ctrl+z right after it undoes it, and ctrl+r (or "
    "ctrl+shift+z) undoes the last rewind later, with the agent's state. F4 shows rewound turns, "
    "dimmed, where they were: restore a branch, or fork it. ctrl+g lists every turn to jump to.\n"
    "• Esc Esc with a draft clears it (ctrl+z brings it back).\n"
    "• Esc (or ■ Stop above the composer) stops a reply that is streaming in: the server is asked to "
    "cancel the turn, and the view shows how it ended. A session whose last turn is still running is "
    "followed again when you open it.\n"
    "• When the agent asks for approval of a tool call, the question shows above the composer: alt+y "
    "approves, alt+n rejects (or the buttons).\n"
    "• ↑ on an empty composer recalls the prompts you sent in this session (↓ goes forward again).\n"
    "• Editing: the turn and the ones after it are set aside; Enter resends, Esc puts them back.\n"
    "• ctrl+o attaches a file to the next message, ctrl+s saves the files and data of the latest reply, "
    "F3 shows the agent card.\n"
    "• ctrl+p opens the command palette with every action; F2 lists sessions (forks keep the original)."
)


class HelpScreen(ModalScreen[None]):
    CSS_PATH = "help.tcss"
    BINDINGS = [Binding("escape,f1,q", "dismiss", "Close", id="help.close", tooltip="Close help")]

    def __init__(self, rows: list[tuple[str, str, str]]) -> None:
        super().__init__()
        self.rows = rows

    def compose(self) -> ComposeResult:
        table = Table(box=None, expand=True, show_header=True, header_style="bold")
        table.add_column("key", no_wrap=True)
        table.add_column("action")
        table.add_column("id", style="dim", no_wrap=True)
        for key, description, binding_id in self.rows:
            table.add_row(Text(key), Text(description), Text(binding_id))
        with VerticalScroll(id="help-body"):
            yield Static(Text("rewindtui — help", style="bold"), id="help-title")
            yield Static(Text(ABOUT), id="help-about")
            yield Static(table, id="help-keys")
            yield Static(Text("Keys can be remapped by binding id in config.toml ([keymap]).", style="dim"))

    async def action_dismiss(self, result: None = None) -> None:
        self.dismiss(None)
