"""Slash commands: a composer text starting with ``/`` runs a command of the interaction table
(:mod:`rewindtui.tui.interaction`) and is never sent to the agent; ``//`` sends a literal ``/``.

Names must be typed whole (Tab completes them): a stray ``/n`` never starts a new session. What a
command does is the same action its key runs; the few that take an argument are handled here,
against a small host (the chat screen), never its private fields.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Protocol

from rewindtui.tui import interaction


class SlashHost(Protocol):
    def run_command(self, command: interaction.Command) -> None: ...

    def preview_turn_back(self, count: int) -> None: ...

    def act_on_turn_back(self, action: str, count: int) -> None: ...

    def export_transcript(self, fmt: str) -> None: ...

    def say(self, text: str, *, warning: bool = False) -> None: ...


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
        close = [f"/{c.slash}" for c in interaction.slash_matches(name[:1])] if name else []
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
    if name == "export":
        fmt = arg or "md"
        if fmt not in ("md", "json"):
            host.say(f"/export writes md or json, not “{arg}”.", warning=True)
            return False
        host.export_transcript(fmt)
        return True
    host.run_command(command)
    return True
