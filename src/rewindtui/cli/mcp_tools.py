"""The MCP tools of ``rewindtui mcp`` (see :mod:`rewindtui.cli.mcp_server`): one per headless command.

Imported only when the server runs (it needs the ``mcp`` extra).
"""

from __future__ import annotations

import asyncio
from typing import Any

from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError

from rewindtui import __version__
from rewindtui.cli.mcp_server import INSTRUCTIONS, Operations, ToolFailure, progress_text


def build_server(ops: Operations) -> Any:
    """The MCP server whose tools run ``ops``."""
    server: Any = MCPServer("rewindtui", instructions=INSTRUCTIONS, version=__version__, log_level="WARNING")

    async def run(command: str, **options: Any) -> list[dict[str, Any]]:
        try:
            return await ops.run(command, **options)
        except ToolFailure as exc:
            raise ToolError(str(exc)) from None

    @server.tool()
    async def agents() -> list[dict[str, Any]]:
        """The A2A agent this server talks to: name, URL, skills, and whether it can rewind, fork and redo."""
        try:
            return await ops.agents()
        except ToolFailure as exc:
            raise ToolError(str(exc)) from None

    @server.tool()
    async def sessions() -> list[dict[str, Any]]:
        """The sessions on the agent's server (id, name, times)."""
        return await run("sessions")

    @server.tool()
    async def send(
        text: str = "",
        session: str | None = None,
        files: list[str] | None = None,
        data: list[str] | None = None,
        save_dir: str | None = None,
        approve: bool = False,
        reject: bool = False,
        ctx: Context | None = None,
    ) -> list[dict[str, Any]]:
        """Send TEXT as the next turn of SESSION (a new session when none is given) and return the
        turn: {"session": ID} then one record per message (each agent turn has an invocation_id,
        the `before` of rewind/fork). `files`: paths (sent inline) or http(s) URLs; `data`: JSON
        texts sent as data parts; `save_dir`: save the reply's files there. When the agent asks for
        approval of a tool call, answer with approve or reject (and session, no text)."""
        queue: asyncio.Queue[Any] = asyncio.Queue()
        reporter = asyncio.create_task(_report(queue, ctx)) if ctx is not None else None
        try:
            return await run(
                "send",
                text=[text] if text else [],
                session=session,
                file=list(files or []),
                data=list(data or []),
                save_dir=save_dir,
                approve=approve,
                reject=reject,
                listener=queue.put_nowait,
            )
        finally:
            if reporter is not None:
                queue.put_nowait(None)
                await reporter

    @server.tool()
    async def history(session: str, include_rewound: bool = False, save_dir: str | None = None) -> list[dict[str, Any]]:
        """The conversation of SESSION as the server has it (with include_rewound, the turns rewinds
        took away too, marked "rewound"); save_dir saves its files and data parts there."""
        return await run("history", session=session, include_rewound=include_rewound, save_dir=save_dir)

    @server.tool()
    async def rewind(session: str, before: str, text: str | None = None) -> list[dict[str, Any]]:
        """Rewind SESSION to before the turn of invocation id BEFORE (the agent forgets that turn and
        all after it; its state goes back too); with TEXT, send it as the next turn. Refused when the
        agent's server cannot rewind. Returns the conversation after it."""
        return await run("rewind", session=session, before=before, text=text)

    @server.tool()
    async def redo(session: str, rewind_task: str | None = None) -> list[dict[str, Any]]:
        """Undo the last rewind of SESSION (or the rewind REWIND_TASK, see history include_rewound):
        the rewound turns come back. Returns the conversation after it."""
        return await run("redo", session=session, rewind_task=rewind_task)

    @server.tool()
    async def fork(session: str, before: str) -> list[dict[str, Any]]:
        """Create a new session holding what came before the turn BEFORE of SESSION (unchanged)."""
        return await run("fork", session=session, before=before)

    @server.tool()
    async def card(extended: bool = False) -> list[dict[str, Any]]:
        """The agent card: who the agent is, its interfaces, capabilities, skills, security schemes,
        warnings; with extended, the authenticated extended card where the agent offers one."""
        return await run("card", extended=extended)

    @server.tool()
    async def export(
        session: str, format: str = "md", include_rewound: bool = False, output: str | None = None, force: bool = False
    ) -> str:
        """SESSION's transcript as Markdown (format md) or JSON (format json); written to the file
        OUTPUT when given (an existing file only with force)."""
        try:
            text = await ops.run_text(
                "export", session=session, format=format, include_rewound=include_rewound, output=output,
                force=force, save_files=False,
            )
        except ToolFailure as exc:
            raise ToolError(str(exc)) from None
        return text or f"written to {output}"

    return server


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
