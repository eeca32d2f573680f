"""The interaction model, written down once: every command, its keys, its slash command, and what
each key does in each mode.

The bindings of the screen and its widgets, the command palette, the slash completion, F1 and
``docs/keys.md`` are all made from :data:`COMMANDS` and :data:`MODES` (nothing else lists keys),
so what is shown follows the user's keymap (``[keymap]`` in config.toml, by binding id).

The rules (one place to read them):

* A printable key is text. While choosing a rewind point, editing, or while a question waits, it
  leaves that mode and lands in the composer, every character kept. Only a list the user opened
  on purpose and that has focus (the sessions panel, the turn picker) gives letters a meaning,
  and it shows them on screen.
* Commands are Enter, Esc, arrows, chords, F-keys and slash commands (``/`` starting the composer).
* A rewind happens only on Enter (or a click) on a preview the user is looking at.
* Esc backs out exactly one level.
* One undo: ctrl+z undoes the last rewind while the status line names it (also with text in the
  composer); otherwise it is the composer's own text undo. It never puts a sent message back.
  ctrl+r redoes what ctrl+z undid (the same rewind again, on the server), as the status line
  names it after "ctrl+r:".

This module imports no Textual: :func:`bindings` builds the ``Binding`` objects lazily.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from enum import Enum
from typing import Any

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


COMMANDS: tuple[Command, ...] = (
    # -- the composer --------------------------------------------------------------------------
    Command(
        "composer.send",
        "enter",
        "submit",
        "Send",
        "Send the message (a line starting with / runs a command; // sends a literal /)",
        owner="composer",
        show=True,
        palette=False,
    ),
    Command(
        "composer.newline",
        "ctrl+j,shift+enter",
        "newline",
        "Newline",
        "Insert a newline",
        owner="composer",
        palette=False,
    ),
    Command(
        "composer.history_back",
        "up",
        "history(-1)",
        "Earlier prompt",
        "On an empty composer: recall the prompt sent before",
        owner="composer",
        palette=False,
    ),
    Command(
        "composer.history_forward",
        "down",
        "history(1)",
        "Later prompt",
        "While recalling prompts: the next one, then your draft",
        owner="composer",
        palette=False,
    ),
    Command(
        "composer.complete",
        "tab",
        "complete",
        "Complete",
        "Take the slash command highlighted in the menu (↑/↓ move the highlight, Esc closes the menu)",
        owner="composer",
        palette=False,
    ),
    Command(
        "composer.page_up",
        "pageup",
        "page(-1)",
        "Page up",
        "Scroll the conversation up a page (typing stays in the composer)",
        owner="composer",
        palette=False,
    ),
    Command(
        "composer.page_down",
        "pagedown",
        "page(1)",
        "Page down",
        "Scroll the conversation down a page",
        owner="composer",
        palette=False,
    ),
    Command(
        "composer.end_of_input",
        "ctrl+d",
        "end_of_input",
        "Quit (empty)",
        "On an empty composer: quit (else delete the character after the cursor)",
        owner="composer",
        palette=False,
    ),
    # -- rewind ----------------------------------------------------------------------------------
    Command(
        "chat.rewind_mode",
        "alt+up",
        "rewind_mode(-1)",
        "Rewind…",
        "Choose a rewind point: preview the last turn (again: the turn before; /rewind N: turn N); "
        "nothing changes until Enter",
        slash="rewind",
        args="[N]",
        show=True,
    ),
    Command(
        "chat.rewind_mode_next",
        "alt+down",
        "rewind_mode(1)",
        "Next turn",
        "While choosing: the turn after",
        palette=False,
    ),
    Command(
        "transcript.previous",
        "up",
        "cursor(-1)",
        "Prev turn",
        "While choosing: the turn before (else scroll)",
        owner="transcript",
        palette=False,
    ),
    Command(
        "transcript.next",
        "down",
        "cursor(1)",
        "Next turn",
        "While choosing: the turn after (else scroll)",
        owner="transcript",
        palette=False,
    ),
    Command(
        "transcript.first",
        "home",
        "cursor_home",
        "First",
        "While choosing: the first turn",
        owner="transcript",
        palette=False,
    ),
    Command(
        "transcript.last",
        "end",
        "cursor_end",
        "Last",
        "While choosing: the last turn",
        owner="transcript",
        palette=False,
    ),
    Command(
        "transcript.page_up", "pageup", "page(-1)", "Page up", "Scroll up a page", owner="transcript", palette=False
    ),
    Command(
        "transcript.page_down",
        "pagedown",
        "page(1)",
        "Page down",
        "Scroll down a page",
        owner="transcript",
        palette=False,
    ),
    Command(
        "transcript.confirm",
        "enter",
        "confirm",
        "Rewind",
        "While choosing: rewind to before the turn the preview shows",
        owner="transcript",
        show=True,
        palette=False,
    ),
    Command(
        "transcript.confirm_restore",
        "enter",
        "confirm_restore",
        "Restore",
        "On a rewound turn (F4): restore its branch",
        owner="transcript",
        show=True,
        palette=False,
    ),
    Command(
        "transcript.edit",
        "alt+e",
        "act('edit')",
        "Edit",
        "Edit a turn's message and resend it (/edit N: turn N; while choosing: the selected turn; else the last)",
        owner="transcript",
        slash="edit",
        args="[N]",
        show=True,
    ),
    Command(
        "transcript.fork",
        "alt+shift+f,alt+f",
        "act('fork')",
        "Fork",
        "Fork a new session from before a turn (/fork N: turn N; while choosing: the selected turn; else the last; "
        "many terminals send alt+f as ctrl+→: alt+shift+f always arrives)",
        owner="transcript",
        slash="fork",
        args="[N]",
        show=True,
    ),
    Command(
        "transcript.tools",
        "alt+t",
        "act('tools')",
        "Tools",
        "While choosing: show or hide the selected turn's tool calls (and a big paste in it)",
        owner="transcript",
        palette=False,
    ),
    Command(
        "transcript.rewound_act",
        "alt+enter",
        "act('restore')",
        "Restore",
        "On a rewound turn (F4): bring its branch back (Enter does it too: many terminals send alt+Enter as Enter)",
        owner="transcript",
        palette=False,
    ),
    Command(
        "transcript.fork_branch",
        "alt+shift+b,alt+b",
        "act('fork_branch')",
        "Fork branch",
        "On a rewound turn (F4): a new session holding its branch (many terminals send alt+b as ctrl+←: alt+shift+b "
        "always arrives)",
        owner="transcript",
        palette=False,
    ),
    Command(
        "transcript.leave",
        "escape",
        "leave",
        "Leave",
        "Leave the preview (nothing changes) / back to the composer",
        owner="transcript",
        palette=False,
    ),
    Command(
        "chat.undo_rewind",
        "ctrl+z",
        "undo_rewind",
        "Undo",
        "Undo what the status line names (the last rewind, edit, restore or redo); else the composer's text undo",
        slash="undo",
        priority=True,
    ),
    Command(
        "chat.redo",
        "ctrl+shift+z,ctrl+r",
        "redo",
        "Redo",
        "Redo what ctrl+z undid, as the status line names it: the same rewind (or restore) again, on the server",
        slash="redo",
    ),
    Command(
        "chat.rewound",
        "f4",
        "toggle_rewound",
        "Rewound turns",
        "Show or hide rewound turns, dimmed, where they were (alt+↑/↓ reaches them: Enter restores a branch, "
        "alt+shift+b forks it)",
    ),
    Command("chat.turns", "ctrl+g", "turns", "Turns…", "Pick a turn from a list: rewind to it, edit or fork it"),
    # -- the running turn ----------------------------------------------------------------------
    Command(
        "chat.escape",
        "escape",
        "escape",
        "Stop / back",
        "Stop a reply; leave a preview or an edit; Esc Esc clears a draft (ctrl+z brings it back) or, on an empty "
        "composer, previews the last turn",
        show=True,
        palette=False,
    ),
    Command(
        "chat.interrupt",
        "ctrl+c",
        "interrupt",
        "Clear/stop/quit",
        "Stop a reply; leave a preview or an edit; clear the draft (ctrl+z brings it back); on an empty composer, "
        "ctrl+c twice quits",
        show=True,
        palette=False,
    ),
    Command(
        "chat.stop",
        "",
        "stop_reply",
        "Stop the reply",
        "Ask the server to cancel the turn streaming in (what came stays, marked stopped)",
        slash="stop",
    ),
    Command(
        "chat.retry",
        "",
        "retry",
        "Retry",
        "Send the failed last turn again as one clean turn (the model sees it once)",
        slash="retry",
    ),
    Command(
        "chat.approve", "alt+y", "answer(True)", "Approve", "Approve the tool call the agent asks about", show=True
    ),
    Command("chat.reject", "alt+n", "answer(False)", "Reject", "Reject the tool call the agent asks about", show=True),
    # -- sessions, files, views ----------------------------------------------------------------
    Command(
        "chat.sessions",
        "f2",
        "toggle_sessions",
        "Sessions",
        "Show or hide the sessions panel",
        slash="sessions",
        show=True,
    ),
    Command("chat.new_session", "ctrl+n", "new_session", "New", "Start a new session", slash="new", show=True),
    Command(
        "chat.clear",
        "",
        "clear_session",
        "Clear (new session)",
        "Start a new, empty session; the one you leave is kept (F2 lists it)",
        slash="clear",
    ),
    Command("chat.rename", "", "rename_session", "Rename session", "Rename this session", slash="rename"),
    Command(
        "chat.export",
        "",
        "export('md')",
        "Export…",
        "Export the transcript (asks where; never overwrites without asking)",
        slash="export",
        args="[md|json]",
    ),
    Command(
        "chat.copy",
        "alt+c",
        "copy",
        "Copy",
        "Copy the selected turn (while choosing), else the last reply",
        slash="copy",
    ),
    Command("chat.attach", "ctrl+o", "attach", "Attach", "Attach a file to the next message", slash="attach"),
    Command(
        "chat.save",
        "ctrl+s",
        "save_parts",
        "Save",
        "Save the files and data of the latest reply (while choosing: of the selected turn)",
        slash="save",
    ),
    Command("chat.card", "f3", "show_card", "Card", "Show the agent card", slash="card"),
    Command(
        "chat.compact",
        "",
        "compact",
        "Compact",
        "Summarize the turns so far into one turn (the agent writes the summary; ctrl+z brings the turns back)",
        slash="compact",
    ),
    Command(
        "chat.state",
        "",
        "show_state",
        "State",
        "The agent's session state, and what a rewind to a turn would change in it",
        slash="state",
    ),
    Command(
        "chat.kagent",
        "",
        "kagent",
        "kagent…",
        "kagent 1.0: this session's checkpoints (rename, delete, fork from any) and shares (revoke)",
        slash="kagent",
    ),
    Command(
        "chat.tasks",
        "f8",
        "app.task_browser",
        "Tasks",
        "Browse this session's tasks, rewound ones marked: state, history, artifacts, raw JSON; follow, cancel, copy, "
        "save",
        slash="tasks",
    ),
    Command(
        "chat.form",
        "",
        "app.answer_form",
        "Answer form",
        "Fill in the newest form the agent sent (a JSON schema data part); the answer is attached as a data part",
        slash="form",
    ),
    Command(
        "chat.wire",
        "f5",
        "app.wire_console",
        "Wire",
        "Show the wire console: every request, answer and frame, credentials redacted (Enter copies a request as curl)",
        slash="wire",
    ),
    Command(
        "chat.search",
        "ctrl+f",
        "search",
        "Search",
        "Search the whole session, rewound turns included: hits highlighted, counted, and the view goes to each",
        slash="search",
        args="[text]",
    ),
    Command(
        "chat.help",
        "f1",
        "app.help",
        "Help",
        "Keys, slash commands and how rewind works (Esc closes it)",
        slash="help",
        show=True,
    ),
    Command(
        "app.quit",
        "ctrl+q",
        "quit",
        "Quit",
        "Quit rewindtui (a draft is kept for next time; asks first during a reply)",
        owner="app",
        slash="quit",
        show=True,
        priority=True,
        palette=False,
        aliases=("exit",),
    ),
    # -- tabs: several agents or sessions at once (rewindtui.tui.tabs) -----------------------------
    Command(
        "app.new_tab",
        "ctrl+t",
        "new_tab",
        "New tab",
        "Open a new tab: this agent with a new session, or a saved agent (a list to choose from)",
        owner="app",
        slash="tab",
    ),
    Command(
        "app.next_tab",
        "ctrl+pagedown",
        "next_tab(1)",
        "Next tab",
        "Show the next tab (a hidden tab goes on streaming)",
        owner="app",
        priority=True,  # before the scroll views' own ctrl+PgUp/PgDn (page left/right)
    ),
    Command(
        "app.previous_tab",
        "ctrl+pageup",
        "next_tab(-1)",
        "Previous tab",
        "Show the previous tab",
        owner="app",
        priority=True,  # before the scroll views' own ctrl+PgUp/PgDn (page left/right)
    ),
    Command(
        "app.close_tab",
        "alt+w",
        "close_tab",
        "Close tab",
        "Close this tab: its draft is kept for its session; asks first while a reply is coming in",
        owner="app",
        slash="tabclose",
    ),
    # -- lists the user opened on purpose (letters are shown on screen) --------------------------
    Command(
        "sessions.new", "n", "new", "New session", "Start a new session", owner="sessions", show=True, palette=False
    ),
    Command(
        "sessions.rename",
        "r",
        "rename",
        "Rename",
        "Rename the highlighted session",
        owner="sessions",
        show=True,
        palette=False,
    ),
    Command(
        "sessions.delete",
        "d,delete",
        "delete",
        "Delete",
        "Delete the highlighted session (asks first)",
        owner="sessions",
        show=True,
        palette=False,
    ),
    Command(
        "sessions.open_tab",
        "t",
        "open_tab",
        "Open in tab",
        "Open the highlighted session in a new tab (the one shown stays open in its own)",
        owner="sessions",
        show=True,
        palette=False,
    ),
    Command(
        "sessions.close",
        "escape",
        "close",
        "Close",
        "Close the sessions panel",
        owner="sessions",
        show=True,
        palette=False,
    ),
    Command(
        "picker.rewind",
        "r",
        "choose('rewind')",
        "Rewind to…",
        "Rewind to before this turn (shows what goes first); on a rewound turn: restore its branch",
        owner="picker",
        show=True,
        palette=False,
    ),
    Command(
        "picker.edit",
        "e",
        "choose('edit')",
        "Edit",
        "Edit this turn's message and resend it",
        owner="picker",
        show=True,
        palette=False,
    ),
    Command(
        "picker.fork",
        "f",
        "choose('fork')",
        "Fork",
        "Fork a new session from before this turn; on a rewound turn: a session holding its branch",
        owner="picker",
        show=True,
        palette=False,
    ),
    Command(
        "picker.close",
        "escape,q",
        "close",
        "Close",
        "Close the list; nothing changes",
        owner="picker",
        show=True,
        palette=False,
    ),
    # -- the search box (ctrl+f): every printable key is text of the search --------------------
    Command(
        "search.older",
        "enter,up",
        "step(-1)",
        "Older hit",
        "In the search box: the hit before (older); from the first, the newest again",
        owner="search",
        show=True,
        palette=False,
    ),
    Command(
        "search.newer",
        "shift+enter,down",
        "step(1)",
        "Newer hit",
        "In the search box: the hit after (newer); from the newest, the first again",
        owner="search",
        show=True,
        palette=False,
    ),
    Command(
        "search.close",
        "escape",
        "close",
        "Close",
        "Close the search box: the view stays at the hit, the draft is as it was",
        owner="search",
        show=True,
        palette=False,
    ),
)

BY_ID: dict[str, Command] = {c.id: c for c in COMMANDS}
SLASH: dict[str, Command] = {name: c for c in COMMANDS for name in (c.slash, *c.aliases) if name}

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

_KEY_NAMES = {
    "up": "↑",
    "down": "↓",
    "left": "←",
    "right": "→",
    "escape": "Esc",
    "enter": "Enter",
    "tab": "Tab",
    "delete": "Del",
    "pageup": "PgUp",
    "pagedown": "PgDn",
    "home": "Home",
    "end": "End",
}


def key_label(key: str) -> str:
    """``alt+up`` → ``alt+↑``; ``f4`` → ``F4``."""
    parts = key.split("+")
    last = parts[-1]
    last = _KEY_NAMES.get(last, last.upper() if len(last) > 1 and last[0] == "f" and last[1:].isdigit() else last)
    return "+".join([*parts[:-1], last])


def keys_of(command_id: str, keymap: Mapping[str, str] | None = None) -> str:
    """The keys of a command as shown ("" if none), after the user's keymap."""
    keys = (keymap or {}).get(command_id, BY_ID[command_id].keys)
    return " / ".join(key_label(k.strip()) for k in keys.split(",") if k.strip())


def row_key(ref: str, keymap: Mapping[str, str] | None = None) -> str:
    if ref.startswith('"'):
        return ref.strip('"')
    return keys_of(ref, keymap) or f"/{BY_ID[ref].slash}"


def slash_matches(prefix: str) -> list[Command]:
    """Slash commands whose name (or another name of it, ``/exit``) starts with ``prefix``
    (without the ``/``), in table order."""
    return [c for c in COMMANDS if c.slash and any(n.startswith(prefix) for n in (c.slash, *c.aliases))]


def slash_usage(command: Command) -> str:
    """``/rewind [N]``: the command as it is typed, its arguments named."""
    return f"/{command.slash}" + (f" {command.args}" if command.args else "")


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


def slash_suggestions(name: str, limit: int = 3) -> list[str]:
    """What an unknown ``/name`` may have meant (``/reset`` → ``/new``): a habit from another tool,
    then names that read alike, then names that start alike."""
    import difflib

    names = [n for c in COMMANDS for n in (c.slash, *c.aliases) if n]
    out: list[str] = []
    if name in SLASH_HABITS:
        out.append(SLASH_HABITS[name])
    out += difflib.get_close_matches(name, names, n=limit, cutoff=0.6)
    out += [n for n in names if name and n.startswith(name[:2])]
    seen: list[str] = []
    for n in out:
        if n not in seen:
            seen.append(n)
    return [f"/{n}" for n in seen[:limit]]


def bindings(owner: str, *, only: tuple[str, ...] = (), namespace: str = "") -> list[Any]:
    """The Textual bindings of ``owner`` (a class's ``BINDINGS``), from the table; ``only`` those
    ids, their actions run on ``namespace`` (``"screen"``: a widget's binding for a screen action)."""
    from textual.binding import Binding

    prefix = f"{namespace}." if namespace else ""
    return [
        Binding(c.keys, prefix + c.action, c.title, show=c.show, id=c.id, tooltip=c.help, priority=c.priority)
        for c in COMMANDS
        if c.owner == owner and c.keys and (not only or c.id in only)
    ]


def _md_cell(text: str) -> str:
    return text.replace("|", "\\|")


def render_markdown(keymap: Mapping[str, str] | None = None) -> str:
    """The whole model as Markdown (what ``docs/keys.md`` holds)."""
    out = [
        "# Keys and commands",
        "",
        "Generated from `src/rewindtui/tui/interaction.py` (`python -m rewindtui.tui.interaction`); "
        "do not edit by hand. Keys can be remapped by binding id in config.toml (`[keymap]`).",
        "",
        "**A printable key is always text**: while choosing a rewind point, editing or answering, "
        "it leaves that mode and lands in the composer. Only a list you opened (sessions panel, "
        "turn picker) gives letters a meaning, shown on screen. A rewind happens only on Enter (or a "
        "click) on the preview you are looking at. Esc backs out one level.",
        "",
        f"**Undo**: {UNDO_RULE}",
        "",
        f"**Turn numbers**: {TURN_NUMBERS_RULE}",
        "",
    ]
    for mode, rows in MODES.items():
        out += [f"## {mode.value.capitalize()}", "", "| key | what it does |", "|---|---|"]
        out += [f"| {_md_cell(row_key(ref, keymap))} | {_md_cell(what)} |" for ref, what in rows]
        out.append("")
    out += ["## Slash commands", "", "| command | key | what it does |", "|---|---|---|"]
    for c in COMMANDS:
        if c.slash:
            name = " · ".join(f"/{n}" for n in (c.slash, *c.aliases)) + (f" {c.args}" if c.args else "")
            out.append(f"| `{name}` | {_md_cell(keys_of(c.id, keymap))} | {_md_cell(c.help)} |")
    out += ["", "Arguments:", ""]
    out += [f"- `{slash_usage(SLASH[name])}`: {_md_cell(what)}" for name, what in ARG_HELP.items()]
    out += ["", "`//text` sends `/text` to the agent. An unknown command says so and keeps the draft.", ""]
    out += ["## Binding ids (for `[keymap]`)", "", "| id | default keys | what it does |", "|---|---|---|"]
    out += [f"| `{c.id}` | {_md_cell(keys_of(c.id))} | {_md_cell(c.help)} |" for c in COMMANDS if c.keys]
    out.append("")
    return "\n".join(out)


if __name__ == "__main__":  # pragma: no cover - writes docs/keys.md
    import sys
    from pathlib import Path

    target = Path(sys.argv[1] if len(sys.argv) > 1 else "docs/keys.md")
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(render_markdown(), encoding="utf-8")
