"""``rewindtui``: the app, the embedded server (``serve``) and headless commands.

The headless commands drive :class:`rewindtui.chat.Chat` — the same code as the app — and print
either readable text or, with ``--json``, one JSON object per line. Any failure is one line on
stderr (printed once; with ``--json``, one JSON object ``{"error": {"code", "message", "hint"}}``)
and a non-zero exit: 1 for a failed request or turn, 2 for bad arguments or settings, 130 for
Ctrl+C. Secrets are redacted from everything printed.

This module is the entry point (:func:`main`): it parses (:mod:`rewindtui.cli.parser`), reads the
settings and runs the app, ``serve`` or a headless command (:mod:`rewindtui.cli.commands`), which
print through :mod:`rewindtui.cli.output`.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
from collections.abc import Sequence
from typing import Any

from rewindtui.cli.output import (
    EXIT_FAILED,
    EXIT_INTERRUPTED,
    EXIT_USAGE,
    CommandFailed,
    UsageError,
    report,
)
from rewindtui.cli.parser import build_parser, extra_commands, parse_app_args
from rewindtui.client.a2a_client import ClientError
from rewindtui.client.attachments import AttachmentError
from rewindtui.client.auth_flows import FLAG_NAMES as FLOW_KEYS
from rewindtui.config.settings import AUTH_KEYS, Settings, SettingsError, debug_enabled, load_settings


def _settings_flags(args: argparse.Namespace) -> dict[str, Any]:
    names = (
        "url",
        "api",
        "kagent",
        "agent",
        "user_id",
        "header",
        "rewind",
        "dialect",
        "config",
        "data_dir",
        "model",
        "theme",
        "binding",
        "model_base_url",
        "model_timeout",
        "stall_timeout",
        "keep_server",
        *AUTH_KEYS,
        *FLOW_KEYS,
        "kagent_share",
        "kagent_share_writable",
    )
    flags = {name: getattr(args, name) for name in names if hasattr(args, name)}
    if getattr(args, "command", None) is None:
        flags["session"] = getattr(args, "session", None)
    return flags


def _run_app(settings: Settings) -> int:
    from rewindtui.cli.launch import run_app

    return run_app(settings)


def _serve(argv: list[str]) -> int:
    from rewindtui.server.process.serve import main as serve_main

    return int(serve_main(argv) or 0)


def _dispatch(settings: Settings, args: argparse.Namespace) -> int:
    if args.command is None:
        return _run_app(settings)
    if args.command in extra_commands():
        return int(extra_commands()[args.command].main(settings, args) or 0)
    from rewindtui.cli.commands import run_command  # the headless commands: not the app's start

    return asyncio.run(run_command(settings, args))


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    as_json = "--json" in argv
    try:
        if argv and argv[0] == "serve":
            return _serve(argv[1:])
        if argv and argv[0] == "team":  # a team server's users, tokens and shares: rewindtui.cli.team
            from rewindtui.cli.team import main as team_main

            return team_main(argv[1:])
        if argv and argv[0] in ("backup", "restore"):  # the server's data: rewindtui.cli.backup
            from rewindtui.cli.backup import main as backup_main

            return backup_main(argv)
        if argv and argv[0] == "repair":  # the server's data, the server stopped: rewindtui.cli.repair
            from rewindtui.cli.repair import main as repair_main

            return repair_main(argv)
        parser: argparse.ArgumentParser | None = None
        extra: list[str] = []
        try:
            args = parse_app_args(argv)  # the app: no command's parser built
            if args is None:
                parser = build_parser()
                args, extra = parser.parse_known_args(argv)
            if args.command == "serve":  # options given before `serve`
                return _serve(extra)
            if args.command == "repair":  # `rewindtui --data-dir DIR repair ...`
                from rewindtui.cli.repair import main as repair_main

                data_dir = getattr(args, "data_dir", None)
                return repair_main(["repair", *(["--data-dir", str(data_dir)] if data_dir else []), *extra])
            if extra:
                assert parser is not None
                parser.error(f"unrecognized arguments: {' '.join(extra)}")
        except SystemExit as exc:  # --help, --version (argparse printed them)
            if exc.code is None:
                return 0
            return exc.code if isinstance(exc.code, int) else EXIT_USAGE
        except UsageError as exc:
            report(exc, as_json)
            return EXIT_USAGE
        try:
            from rewindtui.config.saved_agents import resolve_flags

            settings = load_settings(resolve_flags(_settings_flags(args)))  # --agent NAME: a saved agent
        except SettingsError as exc:
            report(exc, as_json)
            return EXIT_USAGE
        if getattr(args, "wire_log", None):
            from rewindtui.client.wire_log import logging_to

            with logging_to(args.wire_log):  # every client made in it logs its traffic there
                return _dispatch(settings, args)
        return _dispatch(settings, args)
    except KeyboardInterrupt:
        return EXIT_INTERRUPTED
    except (ClientError, CommandFailed, AttachmentError) as exc:
        report(exc, as_json)
        return EXIT_USAGE if isinstance(exc, CommandFailed) and exc.code == "usage" else EXIT_FAILED
    except BrokenPipeError:
        # the reader went away (e.g. `| head`): stop quietly, and keep the interpreter's final
        # flush of stdout from complaining
        try:
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        except (OSError, ValueError):
            pass
        return EXIT_FAILED
    except Exception as exc:  # never a traceback for the user, unless asked for
        if debug_enabled():
            raise
        report(exc, as_json)
        return EXIT_FAILED
