"""``rewindtui mcp``: the headless commands as MCP tools, over stdio.

A coding agent (any MCP client) gets the same operations as ``rewindtui send`` / ``history`` /
``rewind`` / ... through the official MCP Python SDK: it can try an A2A agent, rewind it, and try
again. Each tool runs the headless command of the same name (:data:`rewindtui.cli.commands.COMMANDS`) on
one connection opened at the first call and kept for the server's life (the embedded server is
started then, when no ``--url`` is given, and stopped on exit), so the checks and refusals are
the commands' own: no rewind is sent to a server that lacks it, credentials and headers go only
to the origins configured, secrets are redacted from every result and error.

A tool's result is the command's ``--json`` output: a list of JSON records (the session header,
then one record per message). A failure is a tool error (``is_error``) whose text is the
command's one-line ``{"error": {"code", "message", "hint"}}``. Arguments are screened first
(:mod:`rewindtui.cli.mcp_guard`): empty ids are refused, and local paths must lie inside
``--mcp-files-dir`` or the MCP client's roots. ``send`` reports the turn's
progress as MCP progress notifications when the client asked for them (a progress token): one
per change of the conversation, with the newest agent text as the message.

Needs the ``mcp`` extra (``pip install 'rewindtui[mcp]'``).
"""

from __future__ import annotations

import argparse
import asyncio
import io
import json
from collections.abc import Callable, Sequence
from contextlib import AsyncExitStack
from pathlib import Path
from typing import Any

from rewindtui.client.auth import redact, redact_value
from rewindtui.config.settings import Settings

#: The most characters of agent text one progress notification carries.
PROGRESS_TEXT = 400
INSTRUCTIONS = """\
rewindtui: talk to an A2A agent, and rewind it. `send` starts a session (or continues one with
`session`); every turn opens with an invocation id (`invocation_id` in the records) that `rewind`
and `fork` take as `before` (or its number, `turn` in the records: 1 is the first turn, -1 the
last). `rewind` takes the agent back to before that turn (optionally sending new text right
away); `redo` brings rewound turns back; `fork` copies what came before a turn into a new session.
`history` shows a session as the server has it. Tasks and push configs by id
(`task_*`, `push_*`), `card_validate`, `undo`, `restore` and `rewound_branches` too. Every tool
reaches the agent this server was started for, or another: `agent` (a saved agent's name) or `url`,
with `auth_profile` (a named profile of the user's config) for credentials."""


class ToolFailure(Exception):
    """A command failed: ``str()`` is its JSON error line (secrets redacted)."""


class Operations:
    """The connection the tools share, and the commands run on it (one at a time)."""

    def __init__(
        self, settings: Settings, connect: Callable[[Settings], Any] | None = None, files_dirs: Sequence[Path] = ()
    ) -> None:
        self.settings = settings
        #: directories local paths in tool calls may name (``--mcp-files-dir``; the client's roots add theirs)
        self.files_dirs = list(files_dirs)
        self._connect = connect
        self._stack = AsyncExitStack()
        self._conn: Any = None
        self._lock = asyncio.Lock()

    async def connection(self) -> Any:
        if self._conn is None:
            from rewindtui.config.connection import connection

            opener = self._connect or connection
            self._conn = await self._stack.enter_async_context(opener(self.settings))
        return self._conn

    async def aclose(self) -> None:
        self._conn = None
        await self._stack.aclose()

    async def run(self, command: str, **options: Any) -> list[dict[str, Any]]:
        """Run headless ``command`` with ``options`` (its argparse names); its JSON records."""
        from rewindtui.cli.mcp_words import mcp_record

        text = await self.run_text(command, **options)
        return [mcp_record(json.loads(line)) for line in text.splitlines() if line.strip()]

    async def run_text(self, command: str, **options: Any) -> str:
        """Run headless ``command``; what it printed (secrets redacted). ToolFailure on failure."""
        from rewindtui.cli.commands import COMMANDS
        from rewindtui.cli.output import Output

        stream = io.StringIO()
        args = argparse.Namespace(command=command, json=True, **options)
        async with self._lock:
            try:
                conn = await self.connection()
                await COMMANDS[command](conn, args, Output(True, stream))
            except Exception as exc:
                raise ToolFailure(error_line(exc)) from None
        return redact(stream.getvalue())

    async def agents(self) -> list[dict[str, Any]]:
        """The agent this server is configured for, and what it allows."""
        async with self._lock:
            try:
                conn = await self.connection()
            except Exception as exc:
                raise ToolFailure(error_line(exc)) from None
        caps = conn.client.capabilities
        card = caps.card if caps is not None else {}
        record = {
            "name": card.get("name") or (caps.name if caps else ""),
            "description": card.get("description", ""),
            "url": conn.client.url,
            "server": conn.describe(),
            "rewind": bool(caps and caps.can_rewind),
            "fork": bool(caps and caps.fork),
            "redo": bool(caps and caps.redo),
            "why_no_rewind": caps.why_no_rewind() if caps and not caps.can_rewind else "",
            "skills": [
                {"name": s.get("name", ""), "description": s.get("description", "")}
                for s in card.get("skills") or []
                if isinstance(s, dict)
            ],
        }
        return [redact_value(record)]


def error_line(exc: BaseException) -> str:
    """The one-line JSON error ``rewindtui --json`` prints for ``exc``, in MCP's terms (a command
    it names is put as the MCP tool call, :mod:`rewindtui.cli.mcp_words`)."""
    import contextlib

    from rewindtui.cli.output import report

    buffer = io.StringIO()
    # --json errors go to stdout (the one JSON object a script reads); MCP's own stdout is the
    # protocol's stream, so the line is caught here, never printed
    with contextlib.redirect_stdout(buffer), contextlib.redirect_stderr(buffer):
        report(exc, as_json=True)
    from rewindtui.cli.mcp_words import mcp_error_line

    return mcp_error_line(redact(buffer.getvalue().strip()))  # names MCP tools, not commands


def progress_text(change: Any) -> str:
    """What one change of the conversation says: the newest agent text (its tail), else the tool
    it calls or the result it got ("" for a change with neither)."""
    for item in reversed(getattr(change, "updated", None) or []):
        if item.role == "user":
            continue
        if item.text.strip():
            text = item.text.strip()
            return redact(text if len(text) <= PROGRESS_TEXT else "…" + text[-PROGRESS_TEXT:])
        tools = list(getattr(item, "tools", ()) or ())
        if tools:
            last = tools[-1]
            return redact(f"tool {last.name}: {'result received' if last.has_result else 'called'}")
    return ""


async def serve_stdio(settings: Settings, files_dirs: Sequence[Path] = ()) -> None:
    from rewindtui.cli.mcp_tools import build_server

    ops = Operations(settings, files_dirs=files_dirs)
    try:
        await build_server(ops).run_stdio_async()
    finally:
        await ops.aclose()


def add_parser(sub: Any, connection_options: Callable[[argparse.ArgumentParser], None]) -> None:
    p = sub.add_parser(
        "mcp",
        help="serve the headless commands as MCP tools over stdio (for coding agents)",
        description=(
            "Speak MCP over stdin/stdout: the tools agents, sessions, send, history, rewind, redo, fork, "
            "card and export run the headless commands of the same name, and task_*, push_*, card_validate, "
            "undo, restore and rewound_branches do what their names say, on the agent given by the "
            "connection options (the embedded server without --url) or, per call, on a saved agent or a URL "
            "with a named auth profile (docs/mcp.md). Register it in an MCP client, e.g. "
            "`claude mcp add rewindtui -- rewindtui mcp --url URL`."
        ),
    )
    p.add_argument(
        "--mcp-files-dir",
        action="append",
        default=[],
        metavar="DIR",
        help="a directory whose files tool calls may attach (send files) or write to (save_dir, export output); "
        "repeatable; the MCP client's roots are allowed too; anything else is refused",
    )
    connection_options(p)


def main(settings: Settings, args: argparse.Namespace) -> int:
    try:
        import mcp  # noqa: F401
    except ImportError:
        raise SystemExit("rewindtui: error: `rewindtui mcp` needs the MCP SDK: pip install 'rewindtui[mcp]'") from None
    dirs = [Path(d).expanduser() for d in getattr(args, "mcp_files_dir", None) or []]
    for d in dirs:
        if not d.is_dir():
            raise SystemExit(f"rewindtui: error: --mcp-files-dir {d}: not a directory")
    asyncio.run(serve_stdio(settings, dirs))
    return 0
