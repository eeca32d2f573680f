"""The interaction table's kinds and words: what a row is (:class:`Command`), the modes
(:class:`Mode`), and the words of the table -- each mode's keys (:data:`MODES`), what slash
arguments mean, the rules of turn numbers and undo, and the habits from other tools.

The commands themselves, row by row, are in :mod:`rewindtui.tui.interaction_chat` (the composer,
rewind, the running turn) and :mod:`rewindtui.tui.interaction_views` (sessions, files and views,
tabs, the lists, the search box); :mod:`rewindtui.tui.interaction` puts them together in order
and makes keys, bindings, F1 and ``docs/keys.md`` from them. Pure data: no Textual.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum

from rewindtui.model import turn_numbers


class Mode(Enum):
    COMPOSING = "composing"
    CHOOSING = "choosing a rewind point"
    EDITING = "editing a turn"
    QUESTION = "a question waiting"
    STREAMING = "a reply streaming"
    PICKER = "turn picker (ctrl+g)"
    SEARCH = "searching (ctrl+f)"
    SESSIONS = "sessions panel (F2)"
    TABS = "tabs (several agents at once)"


@dataclass(frozen=True)
class Command:
    """One command: its binding (``id`` is what a keymap remaps), its palette entry and slash name."""

    id: str
    keys: str  #: default keys, Textual's comma-separated syntax ("" : no key, slash/palette only)
    action: str  #: the Textual action run on ``owner``
    title: str  #: short name (footer, palette)
    help: str  #: what it does, one sentence
    owner: str = "screen"  #: screen, composer, transcript, app, sessions, picker
    slash: str = ""  #: slash command name (without "/"), "" for none
    args: str = ""  #: slash arguments as shown ("[N]")
    show: bool = False  #: in the footer
    priority: bool = False
    palette: bool = True
    aliases: tuple[str, ...] = ()  #: other slash names that run it (``/exit`` for ``/quit``)


#: what a key does, per mode: (command id, or a literal key text in quotes, what happens)
TEXT = '"printable keys"'
MODES: dict[Mode, tuple[tuple[str, str], ...]] = {
    Mode.COMPOSING: (
        (TEXT, "Text in the composer"),
        ("composer.send", "Send (a /command runs it, // sends a literal /)"),
        (
            '"/"',
            "At the start: slash commands in a menu as you type (↑/↓ highlight, Tab or Enter takes, Esc closes it)",
        ),
        ("composer.newline", "Newline"),
        ("composer.history_back", "On an empty composer: earlier prompts"),
        ("composer.page_up", "Scroll the conversation (PgDn: back down); typing stays in the composer"),
        ("chat.rewind_mode", "Choose a rewind point (a preview; nothing changes yet)"),
        (
            "chat.escape",
            "Esc Esc: clear the draft (ctrl+z brings it back); on an empty composer: preview the last turn",
        ),
        (
            "chat.interrupt",
            "Clear the draft (ctrl+z brings it back); on an empty composer: “ctrl+c again to quit”, a second press "
            "within 3 s quits",
        ),
        ("composer.end_of_input", "On an empty composer: quit"),
        ("chat.undo_rewind", "Undo what the status line names; else undo typing"),
        ("chat.retry", "After a failed last turn: send it again as one clean turn (the footer shows it then)"),
        ("chat.sessions", "Sessions panel"),
        ("chat.search", "Search the session, rewound turns included"),
        ("chat.help", "Help"),
        ("app.quit", "Quit (the draft is kept for next time)"),
    ),
    Mode.CHOOSING: (
        (TEXT, "Leave the preview; the text goes to the composer (nothing rewound)"),
        ("transcript.previous", "The turn before"),
        ("transcript.next", "The turn after"),
        ("transcript.confirm", "Rewind to before the turn shown dimmed (the only way to rewind)"),
        ("transcript.edit", "Edit the selected turn and resend it"),
        ("transcript.fork", "Fork a new session from before it"),
        ("chat.copy", "Copy the selected turn"),
        ("transcript.tools", "Show or hide its tool calls"),
        ("transcript.confirm_restore", "On a rewound turn (F4): restore its branch (the footer says Restore)"),
        ("transcript.rewound_act", "On a rewound turn (F4): restore its branch (so does Enter there)"),
        ("transcript.fork_branch", "On a rewound turn (F4): fork its branch"),
        ("transcript.leave", "Leave the preview; nothing changes (one level)"),
        ("chat.interrupt", "Leave the preview; nothing changes"),
    ),
    Mode.EDITING: (
        (TEXT, "Text of the edited message"),
        ("composer.send", "Resend: the turns set aside are rewound (ctrl+z brings them back)"),
        ("chat.escape", "Cancel the edit: the turns and your earlier draft come back"),
        ("chat.interrupt", "Cancel the edit, as Esc does"),
    ),
    Mode.QUESTION: (
        (TEXT, "Text in the composer (send it after answering)"),
        ("chat.approve", "Approve the tool call"),
        ("chat.reject", "Reject the tool call"),
        ("chat.escape", "Esc Esc: clear the draft"),
    ),
    Mode.STREAMING: (
        (TEXT, "Text in the composer (your next message)"),
        ("chat.escape", "Stop the reply: what came stays, marked stopped"),
        ("chat.interrupt", "Stop the reply, as Esc does (your draft stays)"),
        (
            "composer.send",
            "Queue the message: queued messages are sent in order when the reply ends; a stopped reply asks first",
        ),
        ("chat.undo_rewind", "Take the last queued message back into the composer (↑ on an empty composer too)"),
    ),
    Mode.PICKER: (
        ("picker.rewind", "Rewind to before the highlighted turn (a preview first)"),
        ("picker.edit", "Edit the highlighted turn"),
        ("picker.fork", "Fork from before it"),
        ("picker.close", "Close the list; nothing changes"),
    ),
    Mode.SESSIONS: (
        ('"↑ ↓ Enter"', "Highlight and open a session"),
        ("sessions.new", "New session"),
        ("sessions.rename", "Rename the highlighted session"),
        ("sessions.delete", "Delete the highlighted session (asks first)"),
        ("sessions.open_tab", "Open the highlighted session in a new tab"),
        ("sessions.close", "Close the panel (one level)"),
        ('"other printable keys"', "Go to the composer as text"),
    ),
    Mode.SEARCH: (
        (TEXT, "Text of the search (never the composer's): hits are counted, highlighted and shown as you type"),
        ("search.older", "The hit before (older), the view goes to it; from the first hit, the newest"),
        ("search.newer", "The hit after (newer); from the newest hit, the first"),
        ("search.close", "Close the search: the view stays where it is, the composer's draft as it was (one level)"),
    ),
    Mode.TABS: (
        ("app.new_tab", "New tab: this agent with a new session, or a saved agent"),
        ("app.next_tab", "The next tab (a hidden tab goes on streaming; the strip marks its news)"),
        ("app.previous_tab", "The previous tab"),
        ("app.close_tab", "Close the tab: its draft is kept; asks first while a reply is coming in"),
    ),
}

#: what a slash command's arguments mean, by command name (the completion shows it as they are typed)
ARG_HELP: dict[str, str] = {
    "rewind": f"{turn_numbers.ARGUMENT}: {turn_numbers.RULE}; none: the last turn",
    "edit": f"{turn_numbers.ARGUMENT}: {turn_numbers.RULE}; none: the selected turn, else the last",
    "fork": f"{turn_numbers.ARGUMENT}: {turn_numbers.RULE}; none: the selected turn, else the last",
    "export": "md or json (none: md)",
    "search": "text: what to search for (none: an empty search box)",
}

TURN_NUMBERS_RULE = (
    "The turn picker (ctrl+g), /rewind N, /edit N, /fork N and exports (md: “Turn N”, json: “turn”) "
    f"use one numbering: {turn_numbers.RULE}. A rewind takes turn N and those after it away, "
    "so the next turn sent is N again."
)

UNDO_RULE = (
    "ctrl+z undoes what the status line names after “ctrl+z:” (the last rewind, edit-and-resend, "
    "restore or redo of this session), also with text in the composer; when it names nothing, ctrl+z is "
    "the composer's own text undo. A sent message never comes back by ctrl+z. ctrl+r redoes what "
    "ctrl+z undid, as the status line names it after “ctrl+r:” (the same rewind or restore again, "
    "on the server; refused when another client changed the session since). A new message ends it."
)

#: what people type from other tools, and the command that does it here
SLASH_HABITS: dict[str, str] = {
    "reset": "new",
    "bye": "quit",
    "q": "quit",
    "undo-rewind": "undo",
    "checkpoint": "fork",
    "branch": "fork",
    "history": "rewind",
    "keys": "help",
    "?": "help",
}
