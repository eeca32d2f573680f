"""``rewindtui``: the app, the embedded server (``serve``) and headless commands.

The headless commands drive :class:`rewindtui.chat.Chat` — the same code as the app — and print
either readable text or, with ``--json``, one JSON object per line. Any failure is one line on
stderr (printed once; with ``--json``, one JSON object ``{"error": {"code", "message", "hint"}}``)
and a non-zero exit: 1 for a failed request or turn, 2 for bad arguments or settings, 130 for
Ctrl+C. Secrets are redacted from everything printed.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
import textwrap
from collections.abc import Callable, Sequence
from typing import Any, NoReturn

from rewindtui import __version__
from rewindtui.base.textsafe import sanitize_line
from rewindtui.client.a2a_client import ClientError
from rewindtui.client.attachments import AttachmentError
from rewindtui.client.auth import redact
from rewindtui.client.auth_flows import FLAG_NAMES as FLOW_KEYS
from rewindtui.client.errors import CLI, user_message
from rewindtui.config.settings import AUTH_KEYS, Settings, SettingsError, debug_enabled, load_settings

PROG = "rewindtui"
EXIT_FAILED = 1
EXIT_USAGE = 2
EXIT_INTERRUPTED = 130
_FAILED_STATES = ("failed", "rejected", "canceled")

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


class _Formatter(argparse.RawDescriptionHelpFormatter):
    pass


def _para(text: str) -> str:
    return textwrap.fill(" ".join(text.split()), width=96)


def _connection_options(parser: argparse.ArgumentParser) -> None:
    """Options shared by the app and every headless command. Defaults are SUPPRESSed so that the
    same option given before and after a subcommand does not clobber itself."""
    g = parser.add_argument_group("connection")
    s = argparse.SUPPRESS
    g.add_argument("--url", default=s, metavar="URL", help="A2A agent endpoint (default: start the embedded server)")
    g.add_argument("--api", default=s, metavar="URL", help="kagent-style REST base, e.g. http://HOST:8083/api")
    g.add_argument("--kagent", default=s, metavar="URL", help="kagent controller base, e.g. http://HOST:8083 (with --agent)")
    g.add_argument("--agent", default=s, metavar="NS/NAME", help="agent on the kagent controller")
    g.add_argument("--user-id", default=s, metavar="ID", help="user id sent to the server (X-User-Id)")
    g.add_argument(
        "--header", action="append", default=s, metavar="'NAME: VALUE'", help="extra HTTP header (repeatable)"
    )
    g.add_argument(
        "--rewind", default=s, metavar="MODE", help="rewind mode: auto (from the agent card), a2a, rest, off"
    )
    g.add_argument("--dialect", default=s, metavar="VERSION", help="A2A dialect 0.3 or 1.0 (default: from the agent card)")
    g.add_argument(
        "--binding", default=s, metavar="NAME", help="jsonrpc, http+json or grpc (default: the card's preferred HTTP one; grpc when it offers only that)"
    )
    a = parser.add_argument_group("auth (the secret is an environment variable's name or a file; sent to --url's origin only)")
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
    g.add_argument("--config", default=s, metavar="PATH", help="config file (default: config.toml in the user config dir)")
    g.add_argument("--data-dir", default=s, metavar="DIR", help="embedded server data directory")
    g.add_argument(
        "--model", default=s, metavar="NAME",
        help="embedded server model: demo (default, offline) or e.g. openai/gpt-4o-mini (see docs/models.md)",
    )
    g.add_argument("--model-base-url", default=s, metavar="URL", help="the model's OpenAI-compatible endpoint")
    g.add_argument("--model-timeout", default=s, metavar="S", help="seconds one model request may take (default 300)")
    g.add_argument("--stall-timeout", default=s, metavar="S", help="seconds a turn may go without news (default 120)")
    g.add_argument("--keep-server", default=s, metavar="S", help="keep the embedded server up S seconds after the last app quits (`serve --stop` ends it)")


def _json_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--json", action="store_true", help="one JSON object per line")


class UsageError(Exception):
    """Bad arguments (argparse's complaint), exit 2; printed once, as JSON with --json."""

    def __init__(self, message: str, usage: str) -> None:
        super().__init__(message)
        self.usage = usage


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        raise UsageError(message, self.format_usage())


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog=PROG, description=_DESCRIPTION, epilog=_OUTPUT, formatter_class=_Formatter)
    parser.add_argument("--version", action="version", version=f"{PROG} {__version__}")
    _connection_options(parser)
    parser.add_argument("--session", default=argparse.SUPPRESS, metavar="ID", help="open this session in the app")
    parser.add_argument("--theme", default=argparse.SUPPRESS, metavar="NAME", help="Textual theme for the app")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", title="commands", parser_class=_Parser)

    sub.add_parser(
        "serve",
        help="run the embedded agent server in the foreground (see `rewindtui serve --help`)",
        add_help=False,
    )
    sub.add_parser("backup", help="copy the server's databases, consistent while it runs (`backup --help`)", add_help=False)
    sub.add_parser("restore", help="put a backup in place (the server stopped; `restore --help`)", add_help=False)

    p = sub.add_parser("sessions", help="list sessions", description="List the sessions on the server.", epilog=_OUTPUT, formatter_class=_Formatter)
    _connection_options(p)
    _json_option(p)

    p = sub.add_parser(
        "send",
        help="send a message and print the turn",
        description=_para(
            "Send TEXT (the words joined by spaces; '-' reads standard input) as the next turn of a "
            "session (a new one without --session) and print the turn. The first line of output is "
            "the session id used: 'session: ID', or {\"session\": ID} with --json. Exits 1 if the "
            "turn failed. When the agent asks for approval of a tool call (the turn waits, "
            "input-required), answer with --approve or --reject (and --session, no TEXT)."
        ),
        epilog=_OUTPUT,
        formatter_class=_Formatter,
    )
    _connection_options(p)
    p.add_argument("--session", default=argparse.SUPPRESS, metavar="ID", help="continue this session (default: a new session)")
    p.add_argument(
        "--file", action="append", default=[], metavar="PATH|URL",
        help="attach a file: a path is sent inline (at most 10 MB in all), an http(s) URL by reference (repeatable)",
    )
    p.add_argument("--data", action="append", default=[], metavar="JSON", help="attach a data part (repeatable)")
    p.add_argument("--save-dir", metavar="DIR", help="save the files and data parts of the reply into DIR")
    _json_option(p)
    answer = p.add_mutually_exclusive_group()
    answer.add_argument("--approve", action="store_true", help="approve the tool call the session's agent asks about")
    answer.add_argument("--reject", action="store_true", help="reject the tool call the session's agent asks about")
    p.add_argument(
        "--push", action="store_true",
        help="also ask the agent for a push notification when the turn ends, received on loopback: "
        "a turn whose stream is cut is still printed when it finishes",
    )
    p.add_argument("--push-url", metavar="URL", help="send the push notification to this webhook instead (token: $REWINDTUI_PUSH_TOKEN)")
    p.add_argument("--push-wait", type=float, default=600.0, metavar="S", help="with --push: how long to wait for it (default 600)")
    answer.add_argument(
        "--retry", action="store_true", help="send the session's failed last turn again, as one clean turn (no TEXT)"
    )
    p.add_argument("--partial", action="store_true", help='with --json: also a {"kind": "delta"} line per streamed piece')
    p.add_argument("text", nargs="*", metavar="TEXT")
    from rewindtui.cli.turns import add_stop_parser

    add_stop_parser(sub, _connection_options, _json_option, _Formatter)

    p = sub.add_parser(
        "history",
        help="print a session's conversation",
        description=_para(
            "Print the conversation of a session as the server has it (rewound turns left out; "
            "with --include-rewound they are printed where they were, between '=== rewound ... ===' "
            "lines, or with a \"rewound\" key in --json: when, and the rewind task that `redo "
            "--rewind-task` undoes to bring them back)."
        ),
        epilog=_OUTPUT,
        formatter_class=_Formatter,
    )
    _connection_options(p)
    p.add_argument("--session", metavar="ID", required=True)
    p.add_argument("--include-rewound", action="store_true", help="also print the turns rewinds took away")
    p.add_argument("--save-dir", metavar="DIR", help="save the session's files and data parts into DIR")
    _json_option(p)

    p = sub.add_parser(
        "card",
        help="show the agent card",
        description=_para(
            "Show the agent card of --url (or of the embedded server): who the agent is, its "
            "interfaces and which one rewindtui uses, capabilities, extensions, skills, security "
            "schemes, and warnings where the card is incomplete or contradicts itself. With --json: "
            "{\"card\": ..., \"url\", \"binding\", \"dialect\", \"endpoint\", \"usable\", \"problem\", "
            "\"warnings\": [...], \"security\": [...]}."
        ),
        formatter_class=_Formatter,
    )
    _connection_options(p)
    _json_option(p)
    p.add_argument("--extended", action="store_true", help="also the extended card the agent gives authenticated users")
    p.add_argument("--card-keys", metavar="PATH", help="a JWKS file with the keys that may sign the card")

    p = sub.add_parser(
        "rewind",
        help="rewind a session to before a turn",
        description=_para(
            "Rewind a session to before the turn of INVOCATION_ID (see `history`); with --text, "
            "then send TEXT as the next turn (rewind-and-send). Prints 'session: ID' (or "
            "{\"session\": ID, \"rewound_before\": INVOCATION_ID}) and the conversation after it."
        ),
        epilog=_OUTPUT,
        formatter_class=_Formatter,
    )
    _connection_options(p)
    p.add_argument("--session", metavar="ID", required=True)
    p.add_argument("--before", metavar="INVOCATION_ID", required=True)
    p.add_argument("--text", metavar="TEXT", help="send this as the next turn after rewinding")
    _json_option(p)

    p = sub.add_parser(
        "fork",
        help="fork a new session from before a turn",
        description=_para(
            "Create a new session holding what came before the turn of INVOCATION_ID; the original "
            "is unchanged. Prints 'session: NEW_ID (fork of ID)' (or {\"session\": NEW_ID, "
            "\"forked_from\": ID, \"name\": ...}) and the new session's conversation."
        ),
        epilog=_OUTPUT,
        formatter_class=_Formatter,
    )
    _connection_options(p)
    p.add_argument("--session", metavar="ID", required=True)
    p.add_argument("--before", metavar="INVOCATION_ID", required=True)
    _json_option(p)

    p = sub.add_parser(
        "redo",
        help="undo a rewind: the rewound turns come back",
        description=_para(
            "Undo the last rewind of a session: the turns it took away come back, and the agent's "
            "state and history are as they were before it. Several rewinds in a row undo one by one, "
            "newest first. With --rewind-task, undo that rewind (see `history --include-rewound`): "
            "its branch comes back, and turns sent since become a rewound branch in their turn. "
            "Prints 'session: ID' (or {\"session\": ID, \"redo\": TASK_ID}) and the conversation after it."
        ),
        epilog=_OUTPUT,
        formatter_class=_Formatter,
    )
    _connection_options(p)
    p.add_argument("--session", metavar="ID", required=True)
    p.add_argument("--rewind-task", metavar="TASK_ID", help="the rewind to undo (default: the last one)")
    _json_option(p)

    p = sub.add_parser(
        "export",
        help="export a session's transcript as Markdown or JSON",
        description=_para(
            "Write a session's transcript as Markdown (--format md) or one JSON document (--format "
            "json) to standard output, or to FILE with --output. With --include-rewound, the turns "
            "rewinds took away are included where they were, marked."
        ),
        formatter_class=_Formatter,
    )
    _connection_options(p)
    p.add_argument("--session", metavar="ID", required=True)
    p.add_argument("--format", choices=("md", "json"), default="md")
    p.add_argument("--output", metavar="FILE", help="write to FILE instead of standard output (never over an existing file without --force)")
    p.add_argument("--force", action="store_true", help="overwrite FILE if it exists")
    p.add_argument(
        "--save-files",
        action="store_true",
        help="with --output: save the session's files beside it, in FILE.files/ (the export names them; it never inlines them)",
    )
    p.add_argument("--include-rewound", action="store_true", help="include the turns rewinds took away")
    for module in _extra_commands().values():
        module.add_parser(sub, _connection_options)
    return parser


def _extra_commands() -> dict[str, Any]:
    """Commands that live in their own modules: name -> module with ``add_parser(sub, options)``
    and ``main(settings, args) -> int``."""
    from rewindtui.cli import auth as auth_command
    from rewindtui.cli import mcp_server, web

    return {"mcp": mcp_server, "web": web, "auth": auth_command}


# -- output ------------------------------------------------------------------------------------
class Output:
    """Where a command writes: text or JSON lines on stdout, flushed line by line."""

    def __init__(self, as_json: bool, stream: Any = None) -> None:
        self.as_json = as_json
        self.stream = stream or sys.stdout

    def line(self, text: str) -> None:
        self.stream.write(redact(text) + "\n")
        self.stream.flush()

    def header(self, text: str, record: dict[str, Any]) -> None:
        from rewindtui.output.render_text import json_line

        self.line(json_line(record) if self.as_json else text)

    def items(self, items: Sequence[Any], current: str | None = None, saved: dict[int, str] | None = None) -> None:
        from rewindtui.output.render_text import format_items, item_record, json_line

        if self.as_json:
            for item in items:
                self.line(json_line(item_record(item, saved)))
        else:
            for text in format_items(items, current=current, saved=saved):
                self.line(text)


def _error(message: str, kind: str = "error") -> None:
    sys.stderr.write(f"{PROG}: {kind}: {sanitize_line(redact(message))}\n")
    sys.stderr.flush()


def _json_error(code: str, message: str, hint: str = "") -> None:
    from rewindtui.output.render_text import json_line

    record = {"error": {"code": code, "message": sanitize_line(redact(message)), "hint": sanitize_line(redact(hint))}}
    sys.stdout.write(json_line(record) + "\n")  # with --json, the error is the JSON object on stdout
    sys.stdout.flush()


#: The error code of a failure (``--json`` errors), by class name where the class is not ours here.
_CODES = {
    "SessionNotFound": "not-found",
    "TurnRefused": "refused",
    "TurnInterrupted": "interrupted",
    "RewindFailed": "rewind-failed",
    "RewindOutcomeUnknown": "rewind-unknown",
    "Busy": "busy",
    "QuestionWaiting": "question-waiting",
    "RedoFailed": "redo-failed",
    "UndoFailed": "nothing-to-undo",
}


def report(exc: BaseException, as_json: bool) -> None:
    """Print a failure once: one line, or one JSON object."""
    if isinstance(exc, ClientError):
        code, message, hint = _CODES.get(type(exc).__name__, exc.category), exc.message, exc.hint
        said = user_message(exc, CLI)
        if said != str(exc):  # a known refusal, in the app's words
            message, hint = said, ""
    elif isinstance(exc, CommandFailed):
        code, message, hint = exc.code, str(exc), exc.hint
    elif isinstance(exc, AttachmentError):
        code, message, hint = "attachment", str(exc), ""
    elif isinstance(exc, SettingsError):
        code, message, hint = "settings", str(exc), ""
    elif isinstance(exc, UsageError):
        code, message, hint = "usage", str(exc), exc.usage.strip()
    else:
        code, message, hint = "unexpected", f"unexpected {type(exc).__name__}: {exc}", "set REWINDTUI_DEBUG=1 for the traceback"
    if as_json:
        _json_error(code, message, hint)
        return
    if isinstance(exc, UsageError):
        sys.stderr.write(exc.usage)
        _error(message)
    elif code == "unexpected":
        _error(f"{message} ({hint})")
    else:
        _error(f"{message}; {hint}" if hint else message)


class CommandFailed(Exception):
    """A command's own failure (e.g. the turn failed); one line, exit 1."""

    def __init__(self, message: str, *, code: str = "failed", hint: str = "") -> None:
        super().__init__(message)
        self.code = code
        self.hint = hint


# -- headless commands -------------------------------------------------------------------------
async def _open(chat: Any, session_id: str) -> None:
    """Open an existing session (any unique prefix of its id). An unknown one is a clear error
    (SessionNotFound); a server that cannot give the history back says so on stderr."""
    await chat.open(session_id)
    if chat.history_note:
        _error(chat.history_note, kind="note")


def _unique(prefix: str, ids: Sequence[str], what: str) -> str | None:
    """The one id of ``ids`` that is ``prefix`` or starts with it (``e-`` may be left out of an
    invocation id); None when none does. Ambiguous: a CommandFailed naming the candidates."""
    if prefix in ids:
        return prefix
    found = sorted({i for i in ids if i.startswith(prefix) or (what == "invocation" and i.startswith("e-" + prefix))})
    if len(found) > 1:
        shown = ", ".join(found[:4]) + (", …" if len(found) > 4 else "")
        raise CommandFailed(f"{what} {prefix!r} is ambiguous: it starts {shown}; give more of it", code="usage")
    return found[0] if found else None


def _resolve_invocation(chat: Any, prefix: str) -> str:
    """``--before``: a turn's invocation id, or any unique prefix of one (as ``--session``)."""
    return _unique(prefix, chat.conversation.turn_invocations(), "invocation") or prefix


def _require_invocation(chat: Any, invocation_id: str) -> None:
    session_id = chat.session_id
    if chat.conversation.index_of_invocation(invocation_id) is None:
        if not chat.conversation.items and chat.history_note:
            raise CommandFailed(f"cannot check invocation {invocation_id!r}: {chat.history_note}")
        turns = chat.conversation.turn_invocations()
        known = f"its turns are {', '.join(turns[:3])}{', …' if len(turns) > 3 else ''}" if turns else "it has no turns"
        raise CommandFailed(f"no invocation {invocation_id!r} in session {session_id} ({known}); see `rewindtui history --session {session_id}`")


def _require(chat: Any, what: str) -> None:
    """Refuse before touching anything when the server cannot do ``what`` (the reason says why)."""
    from rewindtui.chat import Action

    reason = chat.permissions().why_not(Action(what))
    if reason:
        raise CommandFailed(reason)


def _turn_items(chat: Any, message_id: str | None) -> list[Any]:
    """The items of the turn that opened with message ``message_id`` (none if it is not shown)."""
    items = chat.conversation.items
    for i, item in enumerate(items):
        if message_id and message_id in item.message_ids:
            return items[i:]
    return []


def _turn_failure(chat: Any) -> str | None:
    """``the turn failed: <why>`` if the last turn ended failed/rejected/canceled. The reason is
    the turn's last error, else its last agent message (first line)."""
    state = chat.conversation.turn_state
    if state not in _FAILED_STATES:
        return None
    reason = ""
    for item in reversed(chat.conversation.items):
        if item.role == "user":
            break
        if item.text.strip() and (not reason or item.kind.value == "error"):
            reason = item.text
            if item.kind.value == "error":
                break
    reason = reason.strip().split("\n", 1)[0]
    return f"the turn {state}" + (f": {reason}" if reason else "")


async def cmd_sessions(conn: Any, args: argparse.Namespace, out: Output) -> int:
    from rewindtui.chat import Chat
    from rewindtui.output.render_text import format_session, json_line, session_record

    for session in await Chat(conn.client).list_sessions():
        out.line(json_line(session_record(session)) if out.as_json else format_session(session))
    return 0


def _read_text(words: list[str]) -> str:
    if words == ["-"]:
        return sys.stdin.read().rstrip("\n")
    return " ".join(words)


def _attachments(args: argparse.Namespace) -> list[Any]:
    """``--file`` and ``--data``, checked before anything is sent (the size limit counts them all)."""
    from rewindtui.client.attachments import attach, parse_data

    found: list[Any] = []
    for source in getattr(args, "file", None) or ():
        found.append(attach(source, already=found))
    for text in getattr(args, "data", None) or ():
        found.append(parse_data(text))
    return found


async def _save(chat: Any, items: Sequence[Any], directory: str | None, *, users: bool = False) -> dict[int, str]:
    """Save the file and data parts of ``items`` into ``directory``: {id(part): path}. What could not
    be saved is said on stderr (a note; the command still succeeds)."""
    if not directory:
        return {}
    from pathlib import Path

    from rewindtui.client.attachments import savable, save_parts

    saved: dict[int, str] = {}
    for item in items:
        parts = savable(item.other_parts) if item.raw is not None else []
        if not parts or (item.role == "user" and not users):
            continue
        result = await save_parts(parts, Path(directory), http=chat.client.http)
        saved.update({key: str(path) for key, path in result.where.items()})
        for reason in result.skipped:
            _error(f"not saved: {reason}", kind="note")
    return saved


def _send_push(client: Any, args: argparse.Namespace) -> Any:
    import os

    from rewindtui.client.push import SendPush

    push = SendPush(
        client,
        enabled=getattr(args, "push", False),
        url=getattr(args, "push_url", None),
        token=os.environ.get("REWINDTUI_PUSH_TOKEN"),
        wait=getattr(args, "push_wait", None),
    )
    push.check()  # before anything is sent
    return push


async def cmd_send(conn: Any, args: argparse.Namespace, out: Output) -> int:
    from rewindtui.chat import Chat, TurnInterrupted, TurnRefused
    from rewindtui.cli.turns import TurnPrinter, stop_on_interrupt

    approve, reject = getattr(args, "approve", False), getattr(args, "reject", False)
    retry = getattr(args, "retry", False)
    session_id = getattr(args, "session", None)
    attachments = _attachments(args)
    if retry:
        if args.text or attachments or not session_id:
            raise CommandFailed("--retry sends the failed last turn of --session again: give no TEXT, --file or --data", code="usage")
        text = ""
    elif approve or reject:
        if args.text or attachments:
            raise CommandFailed("--approve / --reject answer the agent's question: give no TEXT, --file or --data with them", code="usage")
        if not session_id:
            raise CommandFailed("--approve / --reject need the --session whose agent asks", code="usage")
        text = ""
    else:
        text = _read_text(args.text)
        if not text.strip() and not attachments:
            raise CommandFailed("nothing to send: give TEXT, --file or --data", code="usage")

    printer = TurnPrinter(out, deltas=getattr(args, "partial", False))
    push = _send_push(conn.client, args)
    extra = getattr(args, "listener", None)  # the MCP server's progress

    def listener(change: Any) -> None:
        printer(change)
        if extra is not None:
            extra(change)

    chat = Chat(conn.client, listener=listener)
    if session_id:
        await _open(chat, session_id)
    else:
        await chat.open(None)
    printer.chat = chat
    printer.header()  # the session line at once (a new session's id: at the send)
    try:
        async with push:
            with stop_on_interrupt(chat) as interrupted:
                printer.begin()
                try:
                    if retry:
                        await chat.retry()
                    elif approve or reject:
                        perms = chat.permissions()
                        if not perms.can_confirm:
                            raise CommandFailed(f"nothing to answer in session {chat.session_id}: {perms.confirm_reason}")
                        await chat.confirm(approve)
                    else:
                        await chat.send(text, attachments)
                except TurnInterrupted:
                    if push.receiver is None:
                        raise
                    _error("the turn's stream was cut: waiting for its push notification", kind="note")
                    state = await push.finish(chat)
                    if state is None:
                        raise
                    _error(f"the turn ended {state}: delivered by its push notification", kind="note")
    except TurnRefused:
        raise  # nothing to show: the server did not take the message
    except ClientError:
        printer.finish(_turn_items(chat, chat.last_message_id))
        raise
    saved = await _save(chat, _turn_items(chat, chat.last_message_id), getattr(args, "save_dir", None))
    printer.finish(_turn_items(chat, chat.last_message_id), saved)
    if interrupted():
        if chat.conversation.turn_state == "canceled":
            _error(f"stopped: the turn was canceled on the server (session {chat.session_id})", kind="note")
        else:  # the server had not confirmed the cancel within the grace: say so, and how to wait for it
            _error(
                f"stopped: the server was asked to cancel the turn and had not confirmed it yet "
                f"(`{PROG} stop --session {chat.session_id}` waits for it)",
                kind="note",
            )
        return EXIT_INTERRUPTED
    failure = _turn_failure(chat)
    if failure:
        raise CommandFailed(failure)
    question = chat.pending_confirmation()
    if question is not None:
        asks = question.hint or f"may it run {question.tool}?"
        _error(
            f"the agent asks: {asks} ({question.tool} {_args_text(question.args)}); answer with "
            f"`{PROG} send --session {chat.session_id} --approve` (or --reject)",
            kind="note",
        )
    elif chat.conversation.turn_state in ("input-required", "auth-required"):
        _error(f"the agent is waiting for input ({chat.conversation.turn_state})", kind="note")
    return 0


def _args_text(args: Any) -> str:
    import json

    try:
        return json.dumps(args, ensure_ascii=False, default=str)
    except (TypeError, ValueError):
        return repr(args)


async def cmd_stop(conn: Any, args: argparse.Namespace, out: Output) -> int:
    from rewindtui.cli.turns import cmd_stop as stop

    return await stop(conn, args, out)


async def cmd_history(conn: Any, args: argparse.Namespace, out: Output) -> int:
    from rewindtui.chat import Chat

    chat = Chat(conn.client)
    await _open(chat, args.session)
    if not getattr(args, "include_rewound", False):
        saved = await _save(chat, chat.conversation.items, getattr(args, "save_dir", None))
        out.items(chat.conversation.items, saved=saved)
        return 0
    await _show_rewound(chat)
    from rewindtui.output.export import history_lines, marked_record
    from rewindtui.output.render_text import json_line

    items = chat.conversation.items
    for line in (json_line(marked_record(i)) for i in items) if out.as_json else history_lines(items):
        out.line(line)
    return 0


async def _show_rewound(chat: Any) -> None:
    reason = chat.why_not_rewound()
    if reason:
        raise CommandFailed(f"cannot list rewound turns: {reason}")
    await chat.show_rewound()


async def cmd_redo(conn: Any, args: argparse.Namespace, out: Output) -> int:
    from rewindtui.chat import Chat

    chat = Chat(conn.client)
    await chat.client.connect()
    caps = chat.client.capabilities
    if caps is not None and not caps.redo:
        raise CommandFailed(caps.why_no_redo())  # nothing is sent
    await _open(chat, args.session)
    target = await _resolve_rewind_task(chat, args.rewind_task) if args.rewind_task else None
    await chat.redo(target)
    sid = chat.session_id or args.session
    redo_of = chat.conversation.current_task_id
    undo = f"rewindtui redo --session {sid[:8]} --rewind-task {(redo_of or '')[:8]}"
    out.header(f"session: {sanitize_line(sid)}", {"session": sid, "redo": redo_of, "undo": undo})
    out.items(chat.conversation.items)
    if not out.as_json:
        _error(f"to undo this redo (rewind again): {undo}", kind="note")
    return 0


async def _resolve_rewind_task(chat: Any, prefix: str) -> str:
    """``--rewind-task``: a rewind's task id, or any unique prefix of one."""
    from rewindtui.a2a import contract

    sid = chat.session_id
    if not sid or not chat.client.has_api:
        return prefix
    tasks = await chat.client.session_tasks(sid, include_rewound=True)
    ids = [
        t["id"] for t in tasks
        if isinstance(t.get("id"), str) and (t.get("metadata") or {}).get(contract.EFFECTIVE_HISTORY_KEY) is True
    ]
    found = _unique(prefix, ids, "rewind task")
    if found is None:
        raise CommandFailed(
            f"no rewind task {prefix!r} in session {sid}; `rewindtui history --include-rewound --session {sid[:8]}` "
            "shows the rewinds that took turns away"
        )
    return found


async def cmd_export(conn: Any, args: argparse.Namespace, out: Output) -> int:
    from pathlib import Path

    from rewindtui.chat import Chat
    from rewindtui.output.export import ExportExists, export, files_dir_for, write_export

    chat = Chat(conn.client)
    await _open(chat, args.session)
    if args.include_rewound:
        await _show_rewound(chat)
    session = chat.session
    output = Path(args.output) if args.output else None
    if args.save_files and output is None:
        raise CommandFailed("--save-files needs --output (the files are saved beside it)")
    if output is not None and output.exists() and not args.force:
        raise CommandFailed(f"{output} exists; nothing was written (add --force to overwrite it)")
    saved: dict[int, str] = {}
    if output is not None and args.save_files:
        saved = await _save(chat, chat.conversation.items, str(files_dir_for(output)), users=True)
    text = export(
        chat.conversation.items,
        args.format,
        session_id=chat.session_id,
        title=session.name if session else "",
        times=chat.conversation.task_times,
        saved=saved,
    )
    if output is not None:
        try:
            write_export(output, text, force=args.force)
        except ExportExists as exc:
            raise CommandFailed(str(exc)) from None
        except OSError as exc:
            raise CommandFailed(f"cannot write {args.output}: {exc.strerror or exc}") from None
        _error(f"exported {len(chat.conversation.items)} messages to {args.output}", kind="note")
    else:
        out.stream.write(text)
        out.stream.flush()
    return 0


async def cmd_card(conn: Any, args: argparse.Namespace, out: Output) -> int:
    from rewindtui.config.connection import describe_connect_error
    from rewindtui.output.render_text import card_record, format_card, json_line

    client = conn.client
    try:
        card, url, problem = await card_of(client)
    except ClientError as exc:
        raise describe_connect_error(exc, conn.settings, client.url, embedded=conn.embedded) from exc
    from rewindtui.output.card_extras import card_extras, load_keys

    keys = load_keys(getattr(args, "card_keys", None))
    extras = await card_extras(client, card, url, extended=getattr(args, "extended", False), keys=keys)
    if out.as_json:
        out.line(json_line({**card_record(card, url, client.capabilities, problem), **extras.record()}))
    else:
        lines = format_card(card, url, client.capabilities, problem)
        last = [lines.pop()] if problem else []  # "rewindtui cannot use this agent" stays last
        for text in [*lines, *extras.lines(url), *last]:
            out.line(text)
    return 0


async def card_of(client: Any) -> tuple[dict[str, Any], str, str]:
    """The card (read even when this client cannot use the agent), where it was read, and why
    the agent cannot be used ("" when it can)."""
    if client.capabilities is not None:
        return client.capabilities.card, client.url, ""
    card = await client.fetch_card()
    try:
        await client.connect()
    except ClientError as exc:
        return card, client.url, str(exc)
    return card, client.url, ""


async def cmd_rewind(conn: Any, args: argparse.Namespace, out: Output) -> int:
    from rewindtui.chat import Chat

    chat = Chat(conn.client)
    await chat.client.connect()
    _require(chat, "rewind")
    await _open(chat, args.session)
    before = _resolve_invocation(chat, args.before)
    _require_invocation(chat, before)
    await chat.rewind(before, args.text or None)
    sid = chat.session_id or args.session
    point = chat.undo_point()
    undo = f"rewindtui redo --session {sid[:8]}" + (f" --rewind-task {point.rewind_task_id[:8]}" if point else "")
    out.header(f"session: {sanitize_line(sid)}", {"session": sid, "rewound_before": before, "undo": undo if point else None})
    out.items(chat.conversation.items)
    if point is not None and not out.as_json:
        _error(f"to undo this rewind: {undo}", kind="note")
    failure = _turn_failure(chat) if args.text else None
    if failure:
        raise CommandFailed(failure)
    return 0


async def cmd_fork(conn: Any, args: argparse.Namespace, out: Output) -> int:
    from rewindtui.chat import Chat

    chat = Chat(conn.client)
    await chat.client.connect()
    _require(chat, "fork")
    await _open(chat, args.session)
    original = chat.session_id or args.session
    before = _resolve_invocation(chat, args.before)
    _require_invocation(chat, before)
    session = await chat.fork(before)
    out.header(
        f"session: {sanitize_line(session.id)} (fork of {sanitize_line(original)})",
        {"session": session.id, "forked_from": original, "name": session.name},
    )
    out.items(chat.conversation.items)
    return 0


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
        _attachments(args)  # a bad --file or --data is said before anything starts
    if args.command == "card" and not settings.embedded and not getattr(args, "extended", False):
        async with reader(settings) as conn:  # the card of an agent this client cannot talk to, too
            return await cmd_card(conn, args, out)
    async with connection(settings) as conn:
        return await COMMANDS[args.command](conn, args, out)


# -- entry point -------------------------------------------------------------------------------
def _settings_flags(args: argparse.Namespace) -> dict[str, Any]:
    names = (
        "url", "api", "kagent", "agent", "user_id", "header", "rewind", "dialect", "config", "data_dir", "model", "theme",
        "binding", "model_base_url", "model_timeout", "stall_timeout", "keep_server", *AUTH_KEYS, *FLOW_KEYS,
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


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    as_json = "--json" in argv
    try:
        if argv and argv[0] == "serve":
            return _serve(argv[1:])
        if argv and argv[0] in ("backup", "restore"):  # the server's data: rewindtui.cli.backup
            from rewindtui.cli.backup import main as backup_main

            return backup_main(argv)
        parser = build_parser()
        try:
            args, extra = parser.parse_known_args(argv)
            if args.command == "serve":  # options given before `serve`
                return _serve(extra)
            if extra:
                parser.error(f"unrecognized arguments: {' '.join(extra)}")
        except SystemExit as exc:  # --help, --version (argparse printed them)
            if exc.code is None:
                return 0
            return exc.code if isinstance(exc.code, int) else EXIT_USAGE
        except UsageError as exc:
            report(exc, as_json)
            return EXIT_USAGE
        try:
            settings = load_settings(_settings_flags(args))
        except SettingsError as exc:
            report(exc, as_json)
            return EXIT_USAGE
        if args.command is None:
            return _run_app(settings)
        if args.command in _extra_commands():
            return int(_extra_commands()[args.command].main(settings, args) or 0)
        return asyncio.run(run_command(settings, args))
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
