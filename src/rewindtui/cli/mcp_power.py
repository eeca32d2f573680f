"""``rewindtui mcp`` for any agent: which agent a tool call reaches (:class:`Targets`), and the
tools beyond the headless commands (:func:`register`): tasks and push configs by id, card
validation, undo, restore, the rewound branches of a session.

Every tool takes an optional ``agent`` (a saved agent's name, :mod:`rewindtui.config.saved_agents`)
or ``url`` (any A2A endpoint), and an optional ``auth_profile`` (an ``[auth_profiles.NAME]`` of the
config file). Credentials are never a tool argument. Without ``agent`` and ``url`` the call goes to
the agent ``rewindtui mcp`` was started for, with its settings. Any other agent gets only what is
configured for it: a saved agent its profile, a URL the profile named with it -- which must list
that URL's origin (or be a saved agent's of that origin), else the call is refused -- and never
the headers, user id or credentials of the started agent's settings.

Connections are kept per target (at most :data:`MAX_TARGETS`, the least recently used closed).
"""

from __future__ import annotations

import argparse
import io
import json
from collections import OrderedDict
from dataclasses import replace
from typing import Any

from rewindtui.cli.mcp_server import Operations, ToolFailure, error_line
from rewindtui.client.auth import redact, redact_value, same_origin
from rewindtui.config.settings import Settings

#: agents one MCP server keeps a connection to at once
MAX_TARGETS = 8
#: events one task_resubscribe returns at most (the newest kept)
MAX_EVENTS = 500


def target_settings(base: Settings, agent: str | None, url: str | None, auth_profile: str | None) -> Settings | None:
    """The settings of the agent a call names (None: the started one). SettingsError when the
    name, the profile or the pairing of a profile and a URL is refused."""
    from rewindtui.config.saved_agents import check_name, config_path, load_agents, profile_flags
    from rewindtui.config.values import SettingsError, check_dialect, check_url

    if not agent and not url:
        if auth_profile:
            raise SettingsError("auth_profile is for a call that names an agent or a url")
        return None
    if agent and url:
        raise SettingsError("give agent (a saved agent's name) or url, not both")
    path = base.config_file or config_path()
    binding = dialect = None
    if agent:
        saved = load_agents(path).get(check_name(agent))
        if saved is None:
            raise SettingsError(f"no saved agent {agent!r} (see `rewindtui agents list`)")
        url, binding, dialect = saved.url, saved.binding, saved.dialect
        auth_profile = auth_profile or saved.auth_profile
    assert url is not None
    url = check_url(url, "url")
    if not auth_profile and base.url and same_origin(url, base.url) and not agent:
        return replace(base, url=url, api=None, kagent=None, agent=None)  # the started agent's own origin
    settings = replace(
        base,
        url=url,
        api=None,
        kagent=None,
        agent=None,
        binding=binding,
        user_id=None,
        headers={},
        auth=None,
        credentials={},
        flows=None,
        push=False,
        dialect=check_dialect(dialect, "dialect") if dialect else None,
    )
    if auth_profile:
        import os

        from rewindtui.client.auth import AuthError
        from rewindtui.config.auth_settings import auth_option

        flags = profile_flags(path, auth_profile, url)  # refused for an origin it may not go to
        option = auth_option(flags.get, lambda key: f"auth_profiles.{auth_profile}.{key}")
        if option is not None:
            try:
                credentials = option.headers(os.environ)
            except AuthError as exc:
                raise SettingsError(str(exc)) from None
            settings = replace(settings, auth=option, credentials=credentials)
    return settings


class Targets:
    """The started agent's :class:`Operations`, and one more per other agent a call names."""

    def __init__(self, base: Operations) -> None:
        self.base = base
        self._others: OrderedDict[tuple[str, ...], Operations] = OrderedDict()

    async def ops(
        self, agent: str | None = None, url: str | None = None, auth_profile: str | None = None
    ) -> Operations:
        try:
            settings = target_settings(self.base.settings, agent, url, auth_profile)
        except Exception as exc:
            raise ToolFailure(error_line(exc)) from None
        if settings is None:
            return self.base
        key = (str(settings.url), repr(settings.auth), str(settings.binding), str(settings.dialect))
        found = self._others.get(key)
        if found is None:
            found = Operations(settings, self.base._connect)
            self._others[key] = found
            while len(self._others) > MAX_TARGETS:
                _, oldest = self._others.popitem(last=False)
                await oldest.aclose()
        self._others.move_to_end(key)
        return found

    async def aclose(self) -> None:
        others, self._others = list(self._others.values()), OrderedDict()
        for ops in others:
            await ops.aclose()


async def _on_connection(ops: Operations, work: Any) -> Any:
    """Run ``work(conn)`` on ``ops``' connection, one call at a time; ToolFailure on failure."""
    async with ops._lock:
        try:
            conn = await ops.connection()
            return await work(conn)
        except ToolFailure:
            raise
        except Exception as exc:
            raise ToolFailure(error_line(exc)) from None


async def _printed(ops: Operations, run: Any, args: argparse.Namespace) -> list[dict[str, Any]]:
    """A power command's ``--json`` records (run on the target's connection)."""
    from rewindtui.cli.output import Output

    stream = io.StringIO()

    async def work(conn: Any) -> None:
        await run(conn.client, args, Output(True, stream))

    await _on_connection(ops, work)
    from rewindtui.cli.mcp_words import mcp_record

    return [mcp_record(json.loads(line)) for line in redact(stream.getvalue()).splitlines() if line.strip()]


def register(server: Any, targets: Targets) -> None:
    """Add the tools beyond the headless commands to ``server`` (an MCPServer)."""
    from mcp.server.mcpserver.exceptions import ToolError

    from rewindtui.cli import tasks_cmd

    async def guarded(coro: Any) -> Any:
        try:
            return await coro
        except ToolFailure as exc:
            raise ToolError(str(exc)) from None

    async def task(action: str, where: tuple[Any, Any, Any], **options: Any) -> list[dict[str, Any]]:
        ops = await targets.ops(*where)
        args = argparse.Namespace(command="task", action=action, json=True, **options)
        return await _printed(ops, tasks_cmd.run_task, args)

    async def push(action: str, where: tuple[Any, Any, Any], **options: Any) -> list[dict[str, Any]]:
        ops = await targets.ops(*where)
        args = argparse.Namespace(command="push", action=action, json=True, show_token=False, **options)
        return await _printed(ops, tasks_cmd.run_push, args)

    @server.tool()
    async def task_get(
        task_id: str,
        history_length: int | None = None,
        agent: str | None = None,
        url: str | None = None,
        auth_profile: str | None = None,
    ) -> list[dict[str, Any]]:
        """The A2A task TASK_ID as the agent's server holds it (state, history, artifacts), on any
        binding. Changes nothing."""
        return await guarded(task("get", (agent, url, auth_profile), task_id=task_id, history_length=history_length))

    @server.tool()
    async def task_list(
        context_id: str | None = None,
        limit: int = 100,
        agent: str | None = None,
        url: str | None = None,
        auth_profile: str | None = None,
    ) -> list[dict[str, Any]]:
        """The agent's tasks (of CONTEXT_ID, a session, when given), at most LIMIT, with A2A 1.0
        ListTasks (an agent that speaks 0.3 has none: the tool says so). Changes nothing."""
        return await guarded(
            task("list", (agent, url, auth_profile), context_id=context_id, limit=max(1, min(limit, 1000)))
        )

    @server.tool()
    async def task_cancel(
        task_id: str, agent: str | None = None, url: str | None = None, auth_profile: str | None = None
    ) -> list[dict[str, Any]]:
        """Cancel the running A2A task TASK_ID. Changes: the task ends canceled on the agent's
        server. A rewind cannot undo it (a rewind takes turns back, it does not restart one)."""
        return await guarded(task("cancel", (agent, url, auth_profile), task_id=task_id))

    @server.tool()
    async def task_resubscribe(
        task_id: str, agent: str | None = None, url: str | None = None, auth_profile: str | None = None
    ) -> list[dict[str, Any]]:
        """Follow the running A2A task TASK_ID until its turn ends: its events as
        {"kind", "event"} (at most 500, the newest). Changes nothing."""
        records = await guarded(task("resubscribe", (agent, url, auth_profile), task_id=task_id))
        return records[-MAX_EVENTS:]

    @server.tool()
    async def push_set(
        task_id: str,
        push_url: str,
        token_env: str | None = None,
        config_id: str | None = None,
        agent: str | None = None,
        url: str | None = None,
        auth_profile: str | None = None,
    ) -> list[dict[str, Any]]:
        """Ask the agent to POST the task TASK_ID to PUSH_URL as it changes (a push-notification
        config); the token it sends back comes from the environment variable TOKEN_ENV of this
        server (never a tool argument). Changes: a config is added on the agent's server (push_remove
        deletes it; a rewind does not)."""
        return await guarded(
            push(
                "set",
                (agent, url, auth_profile),
                task_id=task_id,
                push_url=push_url,
                token_env=token_env,
                config_id=config_id,
            )
        )

    @server.tool()
    async def push_get(
        task_id: str,
        config_id: str | None = None,
        agent: str | None = None,
        url: str | None = None,
        auth_profile: str | None = None,
    ) -> list[dict[str, Any]]:
        """One push-notification config of TASK_ID (its token shown as ***). Changes nothing."""
        return await guarded(push("get", (agent, url, auth_profile), task_id=task_id, config_id=config_id))

    @server.tool()
    async def push_list(
        task_id: str, agent: str | None = None, url: str | None = None, auth_profile: str | None = None
    ) -> list[dict[str, Any]]:
        """The push-notification configs of TASK_ID (tokens shown as ***). Changes nothing."""
        return await guarded(push("list", (agent, url, auth_profile), task_id=task_id))

    @server.tool()
    async def push_remove(
        task_id: str, config_id: str, agent: str | None = None, url: str | None = None, auth_profile: str | None = None
    ) -> list[dict[str, Any]]:
        """Delete the push-notification config CONFIG_ID of TASK_ID. Changes: the config is gone from
        the agent's server (push_set adds one again; a rewind does not bring it back)."""
        return await guarded(push("remove", (agent, url, auth_profile), task_id=task_id, config_id=config_id))

    @server.tool()
    async def card_validate(
        agent: str | None = None, url: str | None = None, auth_profile: str | None = None
    ) -> list[dict[str, Any]]:
        """The agent card checked against the A2A 1.0 and 0.3 schemas: valid or not, the versions
        it claims and those usable, every problem with its JSON path, the interfaces rewindtui
        speaks. Changes nothing."""
        from rewindtui.cli.commands.card import card_of
        from rewindtui.output.card_validation import validate

        ops = await targets.ops(agent, url, auth_profile)

        async def work(conn: Any) -> list[dict[str, Any]]:
            card, where, problem = await card_of(conn.client)
            return [redact_value({"url": where, "problem": problem or None, **validate(card).record()})]

        return await guarded(_on_connection(ops, work))

    async def on_chat(where: tuple[Any, Any, Any], session: str, act: Any) -> list[dict[str, Any]]:
        from rewindtui.chat import Chat
        from rewindtui.cli.commands.common import open_session

        ops = await targets.ops(*where)

        async def work(conn: Any) -> list[dict[str, Any]]:
            chat = Chat(conn.client)
            await open_session(chat, session)
            return [redact_value(r) for r in await act(chat)]

        return await guarded(_on_connection(ops, work))

    def outcome(chat: Any, done: Any) -> dict[str, Any]:
        return {
            "session": chat.session_id,
            "said": done.said,
            "turns_back": done.turns_back,
            "turns_gone": done.turns_gone,
            "undo": done.undo_label,
            "warning": done.warning or None,
        }

    @server.tool()
    async def undo(
        session: str, agent: str | None = None, url: str | None = None, auth_profile: str | None = None
    ) -> list[dict[str, Any]]:
        """Undo the one thing SESSION's undo names now (its last rewind, or an edit-and-resend): the
        rewound turns come back with the agent's state. Changes the session on the agent's server;
        a rewind can take those turns away again. Refused when there is nothing to undo."""

        async def act(chat: Any) -> list[dict[str, Any]]:
            return [outcome(chat, await chat.undo())]

        return await on_chat((agent, url, auth_profile), session, act)

    @server.tool()
    async def restore(
        session: str,
        rewind_task: str,
        up_to: str | None = None,
        agent: str | None = None,
        url: str | None = None,
        auth_profile: str | None = None,
    ) -> list[dict[str, Any]]:
        """Bring back the rewound branch that the rewind REWIND_TASK took away (see rewound_branches);
        with UP_TO (an invocation id of the branch) only up to before that turn. Turns sent since
        become a rewound branch in their turn: nothing is lost. Changes the session on the agent's
        server; a rewind (or another restore) can undo it."""

        async def act(chat: Any) -> list[dict[str, Any]]:
            return [outcome(chat, await chat.restore(rewind_task, up_to))]

        return await on_chat((agent, url, auth_profile), session, act)

    @server.tool()
    async def rewound_branches(
        session: str, agent: str | None = None, url: str | None = None, auth_profile: str | None = None
    ) -> list[dict[str, Any]]:
        """The rewound branches of SESSION: per rewind that took turns away, when, its rewind_task
        (what restore takes) and the messages it took. Changes nothing."""

        async def act(chat: Any) -> list[dict[str, Any]]:
            from rewindtui.cli.commands.common import show_rewound

            await show_rewound(chat)
            branches: dict[str, dict[str, Any]] = {}
            for item in chat.conversation.items:
                mark = item.rewound
                if mark is None:
                    continue
                key = mark.by or "?"
                branch = branches.setdefault(
                    key,
                    {"rewind_task": mark.by, "rewound_at": mark.at, "fork_before": mark.fork_before, "messages": []},
                )
                branch["messages"].append(
                    {"role": item.role, "text": item.text[:2000], "invocation_id": item.invocation_id}
                )
            return list(branches.values())

        return await on_chat((agent, url, auth_profile), session, act)
