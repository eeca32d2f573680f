"""The interaction model, written down once: every command, its keys, its slash command, and what
each key does in each mode.

The bindings of the screen and its widgets, the command palette, the slash completion, F1 and
``docs/keys.md`` are all made from :data:`COMMANDS` and :data:`MODES` (nothing else lists keys),
so what is shown follows the user's keymap (``[keymap]`` in config.toml, by binding id).

The table is data in three modules: what a row is and the words (:mod:`~rewindtui.tui.interaction_table`:
:class:`Command`, :class:`Mode`, :data:`MODES`, the rules), and the rows in order
(:mod:`~rewindtui.tui.interaction_chat`, then :mod:`~rewindtui.tui.interaction_views`). This module
puts the rows together and holds the code that reads them: keys as shown, slash commands, Textual
bindings, and the Markdown of ``docs/keys.md``.

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
from typing import Any

from rewindtui.tui import interaction_chat, interaction_views
from rewindtui.tui.interaction_table import (
    ARG_HELP,
    MODES,
    SLASH_HABITS,
    TEXT,
    TURN_NUMBERS_RULE,
    UNDO_RULE,
    Command,
    Mode,
)

__all__ = [
    "ARG_HELP",
    "BY_ID",
    "COMMANDS",
    "MODES",
    "SLASH",
    "SLASH_HABITS",
    "TEXT",
    "TURN_NUMBERS_RULE",
    "UNDO_RULE",
    "Command",
    "Mode",
    "bindings",
    "key_label",
    "keys_of",
    "render_markdown",
    "row_key",
    "slash_matches",
    "slash_suggestions",
    "slash_usage",
]

#: every command, in table order: the palette's, the bindings' and ``docs/keys.md``'s order
COMMANDS: tuple[Command, ...] = (*interaction_chat.ROWS, *interaction_views.ROWS)
BY_ID: dict[str, Command] = {c.id: c for c in COMMANDS}
SLASH: dict[str, Command] = {name: c for c in COMMANDS for name in (c.slash, *c.aliases) if name}

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
