"""The MCP tools of ``rewindtui mcp`` (see :mod:`rewindtui.cli.mcp_server`): one per headless command.

Imported only when the server runs (it needs the ``mcp`` extra).
"""

from __future__ import annotations

import asyncio
import warnings
from pathlib import Path
from typing import Any

from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError

from rewindtui import __version__
from rewindtui.cli.mcp_guard import Refused, allowed_path, require_id, roots_to_dirs
from rewindtui.cli.mcp_server import INSTRUCTIONS, Operations, ToolFailure, progress_text


def build_server(ops: Operations) -> Any:
    """The MCP server whose tools run ``ops``."""
    server: Any = MCPServer("rewindtui", instructions=INSTRUCTIONS, version=__version__, log_level="WARNING")
    from rewindtui.cli.mcp_power import Targets, register

    targets = Targets(ops)  # the agent each call names (agent / url / auth_profile): cli/mcp_power.py
    ops._stack.push_async_callback(targets.aclose)

    async def run(command: str, at: tuple[Any, Any, Any] = (None, None, None), **options: Any) -> list[dict[str, Any]]:
        try:
            return await (await targets.ops(*at)).run(command, **options)
        except ToolFailure as exc:
            raise ToolError(str(exc)) from None

    def ids(**given: tuple[str | None, bool]) -> dict[str, str | None]:
        """Each id checked (name -> (value, optional)): ToolError when one is empty or blank."""
        try:
            return {name: require_id(name, value, optional=optional) for name, (value, optional) in given.items()}
        except Refused as exc:
            raise ToolError(str(exc)) from None

    def turn_or_before(before: str | None, turn: int | None) -> dict[str, Any]:
        """``before`` (an invocation id) or ``turn`` (a turn number), exactly one (ToolError)."""
        if (before is None) == (turn is None):
            raise ToolError("give the turn to go back before: `before` (an invocation id) or `turn` (its number), one")
        if turn is not None:
            return {"before": None, "turn": str(turn)}
        return {"before": ids(before=(before, False))["before"], "turn": None}

    async def paths(ctx: Context | None, **given: list[str] | str | None) -> dict[str, Any]:
        """Each local path checked against the allowed directories (ToolError naming the reason)."""
        if not any(given.values()):
            return dict(given)
        dirs = list(ops.files_dirs) + await _roots(ctx)
        try:
            return {
                name: (
                    [allowed_path(name, v, dirs) for v in value]
                    if isinstance(value, list)
                    else allowed_path(name, value, dirs)
                    if value
                    else value
                )
                for name, value in given.items()
            }
        except Refused as exc:
            raise ToolError(str(exc)) from None

    @server.tool()
    async def agents(
        agent: str | None = None, url: str | None = None, auth_profile: str | None = None
    ) -> list[dict[str, Any]]:
        """The A2A agent a call reaches (the one this server was started for, or AGENT, a saved
        agent, or URL with AUTH_PROFILE): name, URL, skills, whether it can rewind, fork and redo.
        Changes nothing."""
        try:
            return await (await targets.ops(agent, url, auth_profile)).agents()
        except ToolFailure as exc:
            raise ToolError(str(exc)) from None

    @server.tool()
    async def sessions(
        agent: str | None = None, url: str | None = None, auth_profile: str | None = None
    ) -> list[dict[str, Any]]:
        """The sessions on the agent's server (id, name, times). Changes nothing."""
        return await run("sessions", (agent, url, auth_profile))

    @server.tool()
    async def send(
        text: str = "",
        session: str | None = None,
        files: list[str] | None = None,
        data: list[str] | None = None,
        save_dir: str | None = None,
        approve: bool = False,
        reject: bool = False,
        agent: str | None = None,
        url: str | None = None,
        auth_profile: str | None = None,
        ctx: Context | None = None,
    ) -> list[dict[str, Any]]:
        """Send TEXT as the next turn of SESSION (a new session when none is given) and return the
        turn: {"session": ID} then one record per message (each agent turn has an invocation_id,
        the `before` of rewind/fork). `files`: paths (sent inline) or http(s) URLs; `data`: JSON
        texts sent as data parts; `save_dir`: save the reply's files there. When the agent asks for
        approval of a tool call, answer with approve or reject (and session, no text). Changes: adds
        a turn to the session on the agent's server; a rewind before its invocation_id undoes it
        where the agent's server rewinds (see agents)."""
        checked = ids(session=(session, True))
        local = await paths(ctx, files=list(files or []), save_dir=save_dir)
        queue: asyncio.Queue[Any] = asyncio.Queue()
        reporter = asyncio.create_task(_report(queue, ctx)) if ctx is not None else None
        try:
            return await run(
                "send",
                (agent, url, auth_profile),
                text=[text] if text else [],
                session=checked["session"],
                file=local["files"],
                data=list(data or []),
                save_dir=local["save_dir"],
                approve=approve,
                reject=reject,
                listener=queue.put_nowait,
            )
        finally:
            if reporter is not None:
                queue.put_nowait(None)
                await reporter

    @server.tool()
    async def history(
        session: str,
        include_rewound: bool = False,
        save_dir: str | None = None,
        agent: str | None = None,
        url: str | None = None,
        auth_profile: str | None = None,
        ctx: Context | None = None,
    ) -> list[dict[str, Any]]:
        """The conversation of SESSION as the server has it (with include_rewound, the turns rewinds
        took away too, marked "rewound"); save_dir saves its files and data parts there. Changes
        nothing on the server."""
        checked = ids(session=(session, False))
        local = await paths(ctx, save_dir=save_dir)
        return await run(
            "history",
            (agent, url, auth_profile),
            session=checked["session"],
            include_rewound=include_rewound,
            save_dir=local["save_dir"],
        )

    @server.tool()
    async def rewind(
        session: str,
        before: str | None = None,
        turn: int | None = None,
        text: str | None = None,
        agent: str | None = None,
        url: str | None = None,
        auth_profile: str | None = None,
    ) -> list[dict[str, Any]]:
        """Rewind SESSION to before the turn of invocation id BEFORE, or to before turn TURN (its
        number: 1 is the session's first turn, -1 the last; history's records carry it as `turn`):
        the agent forgets that turn and all after it; its state goes back too. With TEXT, send it
        as the next turn. Refused when the agent's server cannot rewind. Returns the conversation
        after it. Changes the session on the agent's server; undo (or redo) brings the turns back,
        nothing is deleted."""
        checked = ids(session=(session, False))
        which = turn_or_before(before, turn)
        return await run("rewind", (agent, url, auth_profile), session=checked["session"], text=text, **which)

    @server.tool()
    async def redo(
        session: str,
        rewind_task: str | None = None,
        agent: str | None = None,
        url: str | None = None,
        auth_profile: str | None = None,
    ) -> list[dict[str, Any]]:
        """Undo the last rewind of SESSION (or the rewind REWIND_TASK, see history include_rewound):
        the rewound turns come back. Returns the conversation after it. Changes the session on the
        agent's server; a rewind can take the turns away again."""
        checked = ids(session=(session, False), rewind_task=(rewind_task, True))
        return await run(
            "redo", (agent, url, auth_profile), session=checked["session"], rewind_task=checked["rewind_task"]
        )

    @server.tool()
    async def fork(
        session: str,
        before: str | None = None,
        turn: int | None = None,
        agent: str | None = None,
        url: str | None = None,
        auth_profile: str | None = None,
    ) -> list[dict[str, Any]]:
        """Create a new session holding what came before the turn BEFORE (an invocation id) or
        turn TURN (its number, as rewind takes it) of SESSION (unchanged). Changes: a new session
        on the agent's server (SESSION is untouched); a rewind does not remove it."""
        checked = ids(session=(session, False))
        which = turn_or_before(before, turn)
        return await run("fork", (agent, url, auth_profile), session=checked["session"], **which)

    @server.tool()
    async def card(
        extended: bool = False, agent: str | None = None, url: str | None = None, auth_profile: str | None = None
    ) -> list[dict[str, Any]]:
        """The agent card: who the agent is, its interfaces, capabilities, skills, security schemes,
        warnings; with extended, the authenticated extended card where the agent offers one.
        Changes nothing."""
        return await run("card", (agent, url, auth_profile), extended=extended)

    @server.tool()
    async def export(
        session: str,
        format: str = "md",
        include_rewound: bool = False,
        output: str | None = None,
        force: bool = False,
        agent: str | None = None,
        url: str | None = None,
        auth_profile: str | None = None,
        ctx: Context | None = None,
    ) -> str:
        """SESSION's transcript as Markdown (format md) or JSON (format json); written to the file
        OUTPUT when given (an existing file only with force). Changes nothing on the server (writes
        OUTPUT on this machine)."""
        checked = ids(session=(session, False))
        output = (await paths(ctx, output=output))["output"]
        try:
            text = await (await targets.ops(agent, url, auth_profile)).run_text(
                "export",
                session=checked["session"],
                format=format,
                include_rewound=include_rewound,
                output=output,
                force=force,
                save_files=False,
            )
        except ToolFailure as exc:
            raise ToolError(str(exc)) from None
        return text or f"written to {output}"

    register(server, targets)  # tasks, push configs, card_validate, undo, restore, rewound_branches
    return server


async def _roots(ctx: Any) -> list[Path]:
    """The MCP client's roots as local directories (none when it declares no roots capability or
    the request fails)."""
    if ctx is None:
        return []
    from mcp import types

    try:
        session = ctx.session
        if not session.check_client_capability(types.ClientCapabilities(roots=types.RootsCapability())):
            return []
        with warnings.catch_warnings():  # roots are deprecated in newer protocol versions, still served
            warnings.simplefilter("ignore")
            result = await session.list_roots()
    except Exception:  # no back channel, or the client refused: no roots
        return []
    return roots_to_dirs(str(root.uri) for root in result.roots)


async def _report(queue: asyncio.Queue[Any], ctx: Any) -> None:
    """Send one progress notification per conversation change (until None)."""
    count = 0
    while True:
        change = await queue.get()
        if change is None:
            return
        count += 1
        try:
            await ctx.report_progress(count, None, progress_text(change) or None)
        except Exception:  # the client went away: the turn carries on
            return
