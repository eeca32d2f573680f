"""Slash commands: a composer text starting with ``/`` runs a command of the interaction table
(:mod:`rewindtui.tui.interaction`) and is never sent to the agent; ``//`` sends a literal ``/``.

Names must be typed whole (Tab completes them): a stray ``/n`` never starts a new session. What a
command does is the same action its key runs; the few that take an argument are handled here,
against a small host (the chat screen), never its private fields.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Protocol

from rewindtui.model import Item, turn_numbers
from rewindtui.tui import interaction
from rewindtui.tui.host import sentence


class SlashHost(Protocol):
    def run_command(self, command: interaction.Command) -> None: ...

    def preview_turn(self, number: int) -> bool: ...

    def act_on_turn(self, action: str, number: int | None) -> bool: ...

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
    counted: dict[str, Callable[[int | None], bool]] = {
        "rewind": lambda n: host.preview_turn(-1 if n is None else n),
        "edit": lambda n: host.act_on_turn("edit", n),
        "fork": lambda n: host.act_on_turn("fork", n),
    }
    if name in counted:
        try:
            number = turn_numbers.parse(arg) if arg else None
        except turn_numbers.TurnNumberError as error:
            host.say(f"/{name} {command.args}: {error}.", warning=True)
            return False
        return counted[name](number)
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
        loading_older: Callable[[], bool] = lambda: False,
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
        #: the session's older turns are still loading: turn numbers (from its start) are not known
        self.loading_older = loading_older

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
            self.act_on_turn(command.action.split("'")[1], None)
            return
        self.run_action(f"app.{command.action}" if command.owner == "app" else command.action)

    def _turn(self, what: str, number: int) -> int | None:
        """The index of the first item of turn ``number`` (:mod:`rewindtui.model.turn_numbers`),
        or None after saying why there is none."""
        if number > 0 and self.loading_older():  # counting back from the end needs no older turns
            self.say(
                f"/{what} {number}: the session's older turns are still loading, so numbers from its start "
                f"are not known yet (/{what} -1 is the last turn); your text is kept.",
                warning=True,
            )
            return None
        items = self.items()
        starts = turn_numbers.turn_starts(items)
        if not starts:
            self.say(f"Nothing to {what} yet.")
            return None
        try:
            return starts[turn_numbers.position(number, len(starts))]
        except turn_numbers.TurnNumberError as error:
            why = str(error)
            if self.loading_older():
                why = f"no turn {number} among those loaded yet (older turns are loading)"
            self.say(f"/{what} N: {why}; your text is kept.", warning=True)
            return None

    def preview_turn(self, number: int) -> bool:
        """/rewind N: the preview of rewinding to before turn N (-1: the last); Enter then rewinds.
        False (the draft is kept) when there is no such turn."""
        index = self._turn("rewind", number)
        if index is None:
            return False
        self.preview(index)
        return True

    def act_on_turn(self, action: str, number: int | None) -> bool:
        """/edit N, /fork N: turn N; without N, the selected turn while choosing, else the last."""
        item = self.selected() if number is None else None
        if item is None:
            index = self._turn(action, -1 if number is None else number)
            if index is None:
                return False
            item = self.items()[index]
        self.act(action, item)
        return True

    def export_transcript(self, fmt: str) -> None:
        self.export(fmt)

    def search_for(self, text: str) -> None:
        """/search [text]: the search box (searching ``text``)."""
        self.search(text)


def always(command: interaction.Command) -> bool:
    """The menu's default predicate: every command is listed."""
    return True


class Completion:
    """What the slash menu shows for the composer's text, and its highlight (no Textual).

    * ``/re`` (a name being typed): the commands whose name starts so, one highlighted
      (↑/↓ move it, wrapping; Tab or Enter take it: ``/rewind ``); a name typed whole runs on Enter.
    * ``/rewind 2`` (a command and its arguments): that command, what its arguments mean.
    * Esc closes the menu for this text; the draft stays, and the next change of it opens it again.

    ``available`` decides which commands are listed (the ones that can run now, once the gate is
    wired to it); a command not listed still runs when typed whole (the gate says why not)."""

    #: how many commands are listed at once (the list scrolls with the highlight)
    ROWS = 8

    def __init__(self, available: Callable[[interaction.Command], bool] = always) -> None:
        self.available = available
        self.text: str | None = None
        self.matches: list[interaction.Command] = []
        self.command: interaction.Command | None = None  # typing its arguments
        self.highlight = 0
        self.closed = False

    def update(self, text: str | None) -> None:
        """The composer's text changed (None: not a slash command at all)."""
        if text == self.text and self.text is not None:
            return
        previous = self.chosen()
        self.text = text
        self.closed = False
        self.matches, self.command = [], None
        if text is None or not text.startswith("/") or text.startswith("//") or "\n" in text:
            return
        name, space, _args = text[1:].partition(" ")
        if space:
            self.command = interaction.SLASH.get(name)
            return
        self.matches = [c for c in interaction.slash_matches(name) if self.available(c)]
        self.highlight = self.matches.index(previous) if previous in self.matches else 0

    @property
    def prefix(self) -> str | None:
        """The name being typed (``/re`` → ``re``), None when no name is being typed."""
        if self.text is None or self.command is not None or not self.text.startswith("/") or " " in self.text:
            return None
        return None if self.text.startswith("//") or "\n" in self.text else self.text[1:]

    @property
    def picking(self) -> bool:
        """The list is open with a highlight: ↑/↓/Tab/Enter act on it."""
        return not self.closed and bool(self.matches)

    @property
    def shown(self) -> bool:
        return not self.closed and (self.prefix is not None or self.command is not None)

    def move(self, step: int) -> None:
        if self.matches:
            self.highlight = (self.highlight + step) % len(self.matches)

    def chosen(self) -> interaction.Command | None:
        return self.matches[self.highlight] if self.picking and self.highlight < len(self.matches) else None

    def complete_name(self) -> bool:
        """The text is a whole command name already (``/redo``): Enter runs it, not the highlight."""
        prefix = self.prefix
        return prefix is not None and prefix in interaction.SLASH

    def taken(self) -> str | None:
        """The draft Tab or Enter puts in the composer: ``/rewind `` (None: nothing highlighted)."""
        command = self.chosen()
        return None if command is None else f"/{command.slash} "

    def close(self) -> None:
        self.closed = True

    def window(self) -> tuple[int, int]:
        """The rows listed, ``[start, end)``: the highlight is always among them."""
        count = len(self.matches)
        if count <= self.ROWS:
            return 0, count
        start = min(max(0, self.highlight - self.ROWS // 2), count - self.ROWS)
        return start, start + self.ROWS
