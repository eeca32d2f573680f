"""Slash commands: a composer text starting with ``/`` runs a command of the interaction table
(:mod:`rewindtui.tui.interaction`) and is never sent to the agent; ``//`` sends a literal ``/``.

Names must be typed whole (Tab completes them): a stray ``/n`` never starts a new session. What a
command does is the same action its key runs; the few that take an argument are handled here,
against a small host (the chat screen), never its private fields.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Protocol

from rewindtui.model import Item
from rewindtui.tui import interaction
from rewindtui.tui.host import sentence
from rewindtui.tui.transcript_layout import turn_starts


class SlashHost(Protocol):
    def run_command(self, command: interaction.Command) -> None: ...

    def preview_turn_back(self, count: int) -> None: ...

    def act_on_turn_back(self, action: str, count: int) -> None: ...

    def export_transcript(self, fmt: str) -> None: ...

    def say(self, text: str, *, warning: bool = False) -> None: ...

    def search_for(self, text: str) -> None: ...


def parse(text: str) -> tuple[str, str] | None:
    """``"/rewind 2"`` → ``("rewind", "2")``; None if ``text`` is no command (``//`` is text)."""
    if not text.startswith("/") or text.startswith("//"):
        return None
    name, _, arg = text[1:].strip().partition(" ")
    return name, arg.strip()


def literal(text: str) -> str:
    """The message a ``//`` text sends: one slash less."""
    return text[1:] if text.startswith("//") else text


def _count(arg: str) -> int | None:
    if not arg:
        return 1
    return int(arg) if arg.isdigit() and int(arg) > 0 else None


def run(host: SlashHost, text: str) -> bool:
    """Run the command in ``text``; False if there is no such command (the caller keeps the draft)."""
    parsed = parse(text)
    if parsed is None:
        return False
    name, arg = parsed
    command = interaction.SLASH.get(name)
    if command is None:
        close = interaction.slash_suggestions(name)
        hint = f" Did you mean {', '.join(close)}?" if close else ""
        host.say(f"No command /{name}; your text is kept (// sends a literal /).{hint}", warning=True)
        return False
    counted: dict[str, Callable[[int], None]] = {
        "rewind": host.preview_turn_back,
        "edit": lambda n: host.act_on_turn_back("edit", n),
        "fork": lambda n: host.act_on_turn_back("fork", n),
    }
    if name in counted:
        count = _count(arg)
        if count is None:
            host.say(f"/{name} takes a number of turns back (1 = the last turn), not “{arg}”.", warning=True)
            return False
        counted[name](count)
        return True
    if name == "search":
        host.search_for(arg)
        return True
    if name == "export":
        fmt = arg or "md"
        if fmt not in ("md", "json"):
            host.say(f"/export writes md or json, not “{arg}”.", warning=True)
            return False
        host.export_transcript(fmt)
        return True
    host.run_command(command)
    return True


class SlashActions:
    """What the slash commands do on the chat screen, through the callables it hands over."""

    def __init__(
        self,
        *,
        items: Callable[[], Sequence[Item]],
        selected: Callable[[], Item | None],
        preview: Callable[[int], object],
        act: Callable[[str, Item], None],
        run_action: Callable[[str], object],
        can_undo: Callable[[], bool],
        why_not_undo: Callable[[], str],
        export: Callable[[str], None],
        notify: Callable[[str, bool], None],
        search: Callable[[str], None] = lambda text: None,
    ) -> None:
        self.items = items
        self.selected = selected  # the turn chosen in the preview, None when not choosing
        self.preview = preview
        self.act = act
        self.run_action = run_action
        self.can_undo = can_undo
        self.why_not_undo = why_not_undo
        self.export = export
        self.notify = notify
        self.search = search

    def say(self, text: str, *, warning: bool = False) -> None:
        self.notify(text, warning)

    def run_command(self, command: interaction.Command) -> None:
        if command.id == "chat.undo_rewind" and not self.can_undo():
            self.say(
                sentence(self.why_not_undo() or "Nothing to undo here: no rewind of this session to undo."),
                warning=True,
            )
            return
        if command.owner == "transcript":
            self.act_on_turn_back(command.action.split("'")[1], 1)
            return
        self.run_action(f"app.{command.action}" if command.owner == "app" else command.action)

    def _turn_back(self, count: int) -> int | None:
        starts = turn_starts(self.items())
        return starts[-min(count, len(starts))] if starts else None

    def preview_turn_back(self, count: int) -> None:
        """/rewind N: the preview of going back N turns (1: the last); Enter then rewinds."""
        index = self._turn_back(count)
        if index is None:
            self.say("Nothing to rewind yet.")
            return
        self.preview(index)

    def act_on_turn_back(self, action: str, count: int) -> None:
        """/edit N, /fork N: the selected turn while choosing, else the turn N back."""
        item = self.selected()
        if item is None:
            index = self._turn_back(count)
            if index is None:
                self.say(f"Nothing to {action} yet.")
                return
            item = self.items()[index]
        self.act(action, item)

    def export_transcript(self, fmt: str) -> None:
        self.export(fmt)

    def search_for(self, text: str) -> None:
        """/search [text]: the search box (searching ``text``)."""
        self.search(text)
