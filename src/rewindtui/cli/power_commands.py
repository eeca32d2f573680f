"""The commands of a power user, each in its own module, as ``parser.extra_commands`` wants them
(name -> object with ``add_parser(sub, connection_options)`` and ``main(settings, args)``)."""

from __future__ import annotations

from typing import Any

from rewindtui.cli import agents_cmd, schema_cmd, tasks_cmd

COMMANDS: dict[str, Any] = {
    "task": tasks_cmd.TASK,
    "push": tasks_cmd.PUSH,
    "agents": agents_cmd,
    "schema": schema_cmd,
}
