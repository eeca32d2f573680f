"""The ``rewindtui`` command line: the top-level parser, the options every command shares, and one
``add_<command>(sub)`` per headless command (its arguments). The commands themselves are in
:mod:`rewindtui.cli.commands`; ``serve``, ``backup``, ``restore``, ``repair`` and ``team`` have their own parsers."""

from __future__ import annotations

import argparse
import sys
import textwrap
from typing import Any, NoReturn

from rewindtui.cli.output import PROG, UsageError

_DESCRIPTION = """\
A terminal chat client for A2A agents, built around rewind.

With no command, opens the app. With no --url / --kagent, rewindtui starts its own embedded
agent server (offline demo model, data in the default data dir or --data-dir) and stops it on exit.
Settings also come from the environment (REWINDTUI_URL, REWINDTUI_API, REWINDTUI_KAGENT,
REWINDTUI_AGENT, REWINDTUI_USER_ID, REWINDTUI_HEADERS, REWINDTUI_REWIND, REWINDTUI_DIALECT,
REWINDTUI_THEME, REWINDTUI_DATA_DIR, REWINDTUI_MODEL, REWINDTUI_CONFIG, REWINDTUI_BINDING,
REWINDTUI_BEARER_ENV, REWINDTUI_API_KEY_ENV, REWINDTUI_BASIC_USER, ...) and from config.toml in
the user config dir; flags > environment > file. Credentials and --header headers are sent only
to the server you name (its origin), never to other hosts an agent card points to.
"""

_OUTPUT = """\
output: readable text, one "--- invocation ID ---" line opening each turn (the ID to give
--before), then "who: text" per message with tool calls indented below it. With --json: one JSON
object per line per message, with the keys kind, message_id, role, author, text, invocation_id,
task_id, tools (a list of {name, id, args, result}), parts (files and data: {kind, name,
media_type, size, url, data, saved}) and other_parts (parts rewindtui does not know, as sent).
File parts are shown by name, media type and size, never as their bytes; data parts as JSON.
exit status: 0 ok; 1 the request or the turn failed (one line on stderr; with --json a JSON
object {"error": {"code", "message", "hint"}}); 2 bad arguments or settings; 130 interrupted.
"""


class Formatter(argparse.RawDescriptionHelpFormatter):
    pass


def para(text: str) -> str:
    return textwrap.fill(" ".join(text.split()), width=96)


def connection_options(parser: argparse.ArgumentParser) -> None:
    """Options shared by the app and every headless command. Defaults are SUPPRESSed so that the
    same option given before and after a subcommand does not clobber itself."""
    g = parser.add_argument_group("connection")
    s = argparse.SUPPRESS
    g.add_argument("--url", default=s, metavar="URL", help="A2A agent endpoint (default: start the embedded server)")
    g.add_argument("--api", default=s, metavar="URL", help="kagent-style REST base, e.g. http://HOST:8083/api")
    g.add_argument(
        "--kagent", default=s, metavar="URL", help="kagent controller base, e.g. http://HOST:8083 (with --agent)"
    )
    g.add_argument(
        "--agent",
        default=s,
        metavar="NAME",
        help="a saved agent (`rewindtui agents`), or NS/NAME on the kagent controller",
    )
    g.add_argument(
        "--share",
        dest="kagent_share",
        default=s,
        metavar="TOKEN",
        help="kagent 1.0: open --session from this share token (read-only)",
    )
    g.add_argument(
        "--share-writable",
        dest="kagent_share_writable",
        action="store_true",
        default=s,
        help="kagent 1.0: the --share token may send",
    )
    g.add_argument("--user-id", default=s, metavar="ID", help="user id sent to the server (X-User-Id)")
    g.add_argument(
        "--header", action="append", default=s, metavar="'NAME: VALUE'", help="extra HTTP header (repeatable)"
    )
    g.add_argument(
        "--rewind", default=s, metavar="MODE", help="rewind mode: auto (from the agent card), a2a, rest, off"
    )
    g.add_argument(
        "--dialect", default=s, metavar="VERSION", help="A2A dialect 0.3 or 1.0 (default: from the agent card)"
    )
    g.add_argument(
        "--binding",
        default=s,
        metavar="NAME",
        help="jsonrpc, http+json or grpc (default: the card's preferred HTTP one; grpc when it offers only that)",
    )
    a = parser.add_argument_group(
        "auth (the secret is an environment variable's name or a file; sent to --url's origin only)"
    )
    a.add_argument("--bearer-env", default=s, metavar="VAR", help="bearer token from this environment variable")
    a.add_argument("--bearer-file", default=s, metavar="PATH", help="bearer token from this file")
    a.add_argument("--api-key-env", default=s, metavar="VAR", help="API key from this environment variable")
    a.add_argument("--api-key-file", default=s, metavar="PATH", help="API key from this file")
    a.add_argument("--api-key-header", default=s, metavar="NAME", help="the API key's header (default X-API-Key)")
    a.add_argument("--basic-user", default=s, metavar="NAME", help="HTTP Basic user name")
    a.add_argument("--basic-password-env", default=s, metavar="VAR", help="HTTP Basic password from this variable")
    a.add_argument("--basic-password-file", default=s, metavar="PATH", help="HTTP Basic password from this file")
    from rewindtui.client.auth_flows import add_options

    add_options(parser)
    g.add_argument(
        "--config", default=s, metavar="PATH", help="config file (default: config.toml in the user config dir)"
    )
    g.add_argument("--data-dir", default=s, metavar="DIR", help="embedded server data directory")
    g.add_argument(
        "--model",
        default=s,
        metavar="NAME",
        help="embedded server model: demo (default, offline) or e.g. openai/gpt-4o-mini (see docs/models.md)",
    )
    g.add_argument("--model-base-url", default=s, metavar="URL", help="the model's OpenAI-compatible endpoint")
    g.add_argument("--model-timeout", default=s, metavar="S", help="seconds one model request may take (default 300)")
    g.add_argument("--stall-timeout", default=s, metavar="S", help="seconds a turn may go without news (default 120)")
    g.add_argument(
        "--wire-log",
        default=s,
        metavar="FILE",
        help="append every request, answer and SSE/gRPC frame to FILE as JSON lines (credentials redacted)",
    )
    g.add_argument(
        "--keep-server",
        default=s,
        metavar="S",
        help="keep the embedded server up S seconds after the last app quits (`serve --stop` ends it)",
    )


def json_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--json", action="store_true", help="one JSON object per line")


class _Version(argparse.Action):
    """``--version``: the installed distribution's version, read only when asked for (reading
    package metadata costs the start of every command otherwise)."""

    def __init__(self, option_strings: list[str], dest: str = argparse.SUPPRESS, **kw: Any) -> None:
        super().__init__(
            option_strings, dest=dest, default=argparse.SUPPRESS, nargs=0, help="print the version and exit"
        )

    def __call__(self, parser: argparse.ArgumentParser, *args: Any, **kw: Any) -> None:
        import rewindtui

        print(f"{PROG} {rewindtui.__version__}", file=sys.stdout)
        parser.exit()


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        raise UsageError(message, self.format_usage())


def _top_level(parser: argparse.ArgumentParser) -> None:
    """The options before a command (the app's own): the same in :func:`build_parser` and
    :func:`parse_app_args`."""
    parser.add_argument("--version", action=_Version)
    connection_options(parser)
    parser.add_argument("--session", default=argparse.SUPPRESS, metavar="ID", help="open this session in the app")
    parser.add_argument("--theme", default=argparse.SUPPRESS, metavar="NAME", help="Textual theme for the app")


class _NotTheApp(Exception):
    pass


class _AppParser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        raise _NotTheApp(message)


def parse_app_args(argv: list[str]) -> argparse.Namespace | None:
    """``argv`` parsed as the app's command line (no command: the options of :func:`_top_level`
    only), or None when it is anything else -- a command, help, an unknown or bad option -- which
    the whole parser (:func:`build_parser`) then parses and reports as always. The app's start
    builds no command's parser (each command's options, and the modules of the commands that
    live in their own: about 0.015 s of the launch's CPU)."""
    if "-h" in argv or "--help" in argv or "--" in argv:
        return None
    parser = _AppParser(prog=PROG, add_help=False)
    _top_level(parser)
    parser.add_argument("command", nargs="?", default=None)
    try:
        args, extra = parser.parse_known_args(argv)
    except _NotTheApp:
        return None
    return args if args.command is None and not extra else None


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog=PROG, description=_DESCRIPTION, epilog=_OUTPUT, formatter_class=Formatter)
    _top_level(parser)
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", title="commands", parser_class=_Parser)

    sub.add_parser(
        "serve",
        help="run the embedded agent server in the foreground (see `rewindtui serve --help`)",
        add_help=False,
    )
    sub.add_parser(
        "backup", help="copy the server's databases, consistent while it runs (`backup --help`)", add_help=False
    )
    sub.add_parser("restore", help="put a backup in place (the server stopped; `restore --help`)", add_help=False)
    sub.add_parser(
        "repair",
        help=(
            "rebuild unreadable agent state, rewind the view past turns the agent lacks "
            "(the server stopped; `repair --help`)"
        ),
        add_help=False,
    )
    sub.add_parser(
        "team",
        help="a team server's users, tokens and shares; import/export a data directory (`team --help`)",
        add_help=False,
    )
    add_sessions(sub)
    add_send(sub)
    add_stop(sub)
    add_history(sub)
    add_card(sub)
    add_rewind(sub)
    add_fork(sub)
    add_redo(sub)
    add_export(sub)
    for module in extra_commands().values():
        module.add_parser(sub, connection_options)
    return parser


def add_sessions(sub: Any) -> None:
    """``sessions``: list the sessions on the server."""
    p = sub.add_parser(
        "sessions",
        help="list sessions",
        description="List the sessions on the server.",
        epilog=_OUTPUT,
        formatter_class=Formatter,
    )
    connection_options(p)
    json_option(p)


def add_send(sub: Any) -> None:
    """``send``: send a message (or answer, or retry) and print the turn."""
    p = sub.add_parser(
        "send",
        help="send a message and print the turn",
        description=para(
            "Send TEXT (the words joined by spaces; '-' reads standard input) as the next turn of a "
            "session (a new one without --session) and print the turn. The first line of output is "
            "the session id used: 'session: ID', or {\"session\": ID} with --json. Exits 1 if the "
            "turn failed. When the agent asks for approval of a tool call (the turn waits, "
            "input-required), answer with --approve or --reject (and --session, no TEXT)."
        ),
        epilog=_OUTPUT,
        formatter_class=Formatter,
    )
    connection_options(p)
    p.add_argument(
        "--session", default=argparse.SUPPRESS, metavar="ID", help="continue this session (default: a new session)"
    )
    p.add_argument(
        "--file",
        action="append",
        default=[],
        metavar="PATH|URL",
        help="attach a file: a path is sent inline (at most 10 MB in all), an http(s) URL by reference (repeatable)",
    )
    p.add_argument("--data", action="append", default=[], metavar="JSON", help="attach a data part (repeatable)")
    p.add_argument("--save-dir", metavar="DIR", help="save the files and data parts of the reply into DIR")
    json_option(p)
    answer = p.add_mutually_exclusive_group()
    answer.add_argument("--approve", action="store_true", help="approve the tool call the session's agent asks about")
    answer.add_argument("--reject", action="store_true", help="reject the tool call the session's agent asks about")
    p.add_argument(
        "--push",
        action="store_true",
        help="also ask the agent for a push notification when the turn ends, received on loopback: "
        "a turn whose stream is cut is still printed when it finishes",
    )
    p.add_argument(
        "--push-url",
        metavar="URL",
        help="send the push notification to this webhook instead (token: $REWINDTUI_PUSH_TOKEN)",
    )
    p.add_argument(
        "--push-wait", type=float, default=600.0, metavar="S", help="with --push: how long to wait for it (default 600)"
    )
    answer.add_argument(
        "--retry", action="store_true", help="send the session's failed last turn again, as one clean turn (no TEXT)"
    )
    p.add_argument(
        "--partial", action="store_true", help='with --json: also a {"kind": "delta"} line per streamed piece'
    )
    p.add_argument("text", nargs="*", metavar="TEXT")


def add_stop(sub: Any) -> None:
    """``stop``: cancel the turn running in a session (its parser lives with the command in cli/turns.py)."""
    from rewindtui.cli.turns import add_stop_parser

    add_stop_parser(sub, connection_options, json_option, Formatter)


def add_history(sub: Any) -> None:
    """``history``: print a session's conversation."""
    p = sub.add_parser(
        "history",
        help="print a session's conversation",
        description=para(
            "Print the conversation of a session as the server has it (rewound turns left out; "
            "with --include-rewound they are printed where they were, between '=== rewound ... ===' "
            'lines, or with a "rewound" key in --json: when, and the rewind task that `redo '
            "--rewind-task` undoes to bring them back)."
        ),
        epilog=_OUTPUT,
        formatter_class=Formatter,
    )
    connection_options(p)
    p.add_argument("--session", metavar="ID", required=True)
    p.add_argument("--include-rewound", action="store_true", help="also print the turns rewinds took away")
    p.add_argument("--save-dir", metavar="DIR", help="save the session's files and data parts into DIR")
    json_option(p)


def add_card(sub: Any) -> None:
    """``card``: show the agent card."""
    p = sub.add_parser(
        "card",
        help="show the agent card",
        description=para(
            "Show the agent card of --url (or of the embedded server): who the agent is, its "
            "interfaces and which one rewindtui uses, capabilities, extensions, skills, security "
            "schemes, and warnings where the card is incomplete or contradicts itself. With --json: "
            '{"card": ..., "url", "binding", "dialect", "endpoint", "usable", "problem", '
            '"warnings": [...], "security": [...]}.'
        ),
        formatter_class=Formatter,
    )
    connection_options(p)
    json_option(p)
    p.add_argument("--extended", action="store_true", help="also the extended card the agent gives authenticated users")
    p.add_argument("--card-keys", metavar="PATH", help="a JWKS file with the keys that may sign the card")
    p.add_argument(
        "--validate",
        action="store_true",
        help="check the card against the A2A 1.0 and 0.3 schemas: every problem with its JSON path; exit 1 on errors",
    )


def add_rewind(sub: Any) -> None:
    """``rewind``: rewind a session to before a turn (and send, with --text)."""
    p = sub.add_parser(
        "rewind",
        help="rewind a session to before a turn",
        description=para(
            "Rewind a session to before the turn of INVOCATION_ID, or turn N (see `history`); with "
            "--text, then send TEXT as the next turn (rewind-and-send). Prints 'session: ID' (or "
            '{"session": ID, "rewound_before": INVOCATION_ID}) and the conversation after it.'
        ),
        epilog=_OUTPUT,
        formatter_class=Formatter,
    )
    connection_options(p)
    p.add_argument("--session", metavar="ID", required=True)
    turn_options(p)
    p.add_argument("--text", metavar="TEXT", help="send this as the next turn after rewinding")
    json_option(p)


def add_fork(sub: Any) -> None:
    """``fork``: a new session from before a turn."""
    p = sub.add_parser(
        "fork",
        help="fork a new session from before a turn",
        description=para(
            "Create a new session holding what came before the turn of INVOCATION_ID, or turn N; the original "
            "is unchanged. Prints 'session: NEW_ID (fork of ID)' (or {\"session\": NEW_ID, "
            '"forked_from": ID, "name": ...}) and the new session\'s conversation.'
        ),
        epilog=_OUTPUT,
        formatter_class=Formatter,
    )
    connection_options(p)
    p.add_argument("--session", metavar="ID", required=True)
    turn_options(p)
    json_option(p)


def turn_options(p: argparse.ArgumentParser) -> None:
    """``--before INVOCATION_ID`` or ``--turn N``: the turn a rewind or fork goes back before."""
    from rewindtui.model import turn_numbers

    which = p.add_mutually_exclusive_group(required=True)
    which.add_argument(
        "--before",
        metavar="INVOCATION_ID",
        help="the turn's invocation id, or a unique start of it (a number is refused: that is --turn)",
    )
    which.add_argument(
        "--turn",
        metavar="N",
        help=f"the turn's number (`history` shows it beside each invocation): {turn_numbers.COUNTING}",
    )


def add_redo(sub: Any) -> None:
    """``redo``: undo a rewind."""
    p = sub.add_parser(
        "redo",
        help="undo a rewind: the rewound turns come back",
        description=para(
            "Undo the last rewind of a session: the turns it took away come back, and the agent's "
            "state and history are as they were before it. Several rewinds in a row undo one by one, "
            "newest first. With --rewind-task, undo that rewind (see `history --include-rewound`): "
            "its branch comes back, and turns sent since become a rewound branch in their turn. "
            'Prints \'session: ID\' (or {"session": ID, "redo": TASK_ID}) and the conversation after it.'
        ),
        epilog=_OUTPUT,
        formatter_class=Formatter,
    )
    connection_options(p)
    p.add_argument("--session", metavar="ID", required=True)
    p.add_argument("--rewind-task", metavar="TASK_ID", help="the rewind to undo (default: the last one)")
    json_option(p)


def add_export(sub: Any) -> None:
    """``export``: a session's transcript as Markdown or JSON."""
    p = sub.add_parser(
        "export",
        help="export a session's transcript as Markdown or JSON",
        description=para(
            "Write a session's transcript as Markdown (--format md) or one JSON document (--format "
            "json) to standard output, or to FILE with --output. With --include-rewound, the turns "
            "rewinds took away are included where they were, marked."
        ),
        formatter_class=Formatter,
    )
    connection_options(p)
    p.add_argument("--session", metavar="ID", required=True)
    p.add_argument("--format", choices=("md", "json"), default="md")
    p.add_argument(
        "--output",
        metavar="FILE",
        help="write to FILE instead of standard output (never over an existing file without --force)",
    )
    p.add_argument("--force", action="store_true", help="overwrite FILE if it exists")
    p.add_argument(
        "--save-files",
        action="store_true",
        help=(
            "with --output: save the session's files beside it, in FILE.files/ "
            "(the export names them; it never inlines them)"
        ),
    )
    p.add_argument("--include-rewound", action="store_true", help="include the turns rewinds took away")


def extra_commands() -> dict[str, Any]:
    """Commands that live in their own modules: name -> module with ``add_parser(sub, options)``
    and ``main(settings, args) -> int``."""
    from rewindtui.cli import auth as auth_command
    from rewindtui.cli import kagent_cmd, mcp_server, power_commands, web

    return {"mcp": mcp_server, "web": web, "auth": auth_command, "kagent": kagent_cmd, **power_commands.COMMANDS}
