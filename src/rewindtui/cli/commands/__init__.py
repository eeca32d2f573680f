"""The headless commands: ``COMMANDS`` maps each name to ``cmd_<name>(conn, args, out) -> exit
status``, and :func:`run_command` runs one over a connection. They drive :class:`rewindtui.chat.Chat`,
the same code as the app. Their arguments are in :mod:`rewindtui.cli.parser`."""

from __future__ import annotations

import argparse
from collections.abc import Callable
from typing import Any

from rewindtui.cli.commands.card import cmd_card
from rewindtui.cli.commands.history import cmd_export, cmd_history, cmd_sessions
from rewindtui.cli.commands.rewind import cmd_fork, cmd_redo, cmd_rewind
from rewindtui.cli.commands.send import cmd_send, cmd_stop, read_attachments
from rewindtui.cli.output import Output
from rewindtui.config.settings import Settings

COMMANDS: dict[str, Callable[..., Any]] = {
    "sessions": cmd_sessions,
    "card": cmd_card,
    "send": cmd_send,
    "stop": cmd_stop,
    "history": cmd_history,
    "rewind": cmd_rewind,
    "fork": cmd_fork,
    "redo": cmd_redo,
    "export": cmd_export,
}


async def run_command(settings: Settings, args: argparse.Namespace, out: Output | None = None) -> int:
    from rewindtui.config.connection import connection, reader

    out = out or Output(getattr(args, "json", False))
    if args.command == "send":
        read_attachments(args)  # a bad --file or --data is said before anything starts
    if args.command == "card" and not settings.embedded and not getattr(args, "extended", False):
        async with reader(settings) as conn:  # the card of an agent this client cannot talk to, too
            return await cmd_card(conn, args, out)
    async with connection(settings) as conn:
        return await COMMANDS[args.command](conn, args, out)
