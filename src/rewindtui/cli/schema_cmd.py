"""``rewindtui schema``: every command, its arguments and the shape of its ``--json`` output, as one
JSON document (read from the argument parser itself, so it is never behind it); ``--markdown``
prints the same as the reference section of ``docs/cli.md`` (a test keeps that section equal to it).

The output shapes are named records (:data:`RECORDS`: key -> type) and, per command, which records
it prints, one JSON object a line, in order. ``tests/test_schema_cmd.py`` checks the records'
keys against the functions that write them."""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable
from typing import Any

import rewindtui

#: the records commands print with --json (key -> JSON type, "?" = may be null)
RECORDS: dict[str, dict[str, str]] = {
    "message": {
        "kind": "string",
        "message_id": "string?",
        "role": "string",
        "author": "string?",
        "text": "string",
        "invocation_id": "string?",
        "task_id": "string?",
        "tools": "array of {name, id, args, result}",
        "parts": "array of {kind, name, media_type, size, url, data, saved}",
        "other_parts": "array",
        "turn": "integer? (its turn number: 1 is the session's first turn; null for a rewound one)",
    },
    "session": {
        "id": "string",
        "name": "string?",
        "user_id": "string?",
        "created_at": "string?",
        "updated_at": "string?",
        "gone": "boolean",
        "state": "string?",
    },
    "session_header": {"session": "string"},
    "rewind_header": {"session": "string", "rewound_before": "string", "undo": "string?"},
    "redo_header": {"session": "string", "redo": "string?", "undo": "string?"},
    "fork_header": {"session": "string", "forked_from": "string", "name": "string?"},
    "stop_header": {"session": "string", "task_id": "string", "state": "string"},
    "delta": {"kind": '"delta"', "text": "string"},
    "card": {
        "card": "object (the agent card as served)",
        "url": "string",
        "usable": "boolean",
        "problem": "string?",
        "binding": "string?",
        "dialect": "string?",
        "endpoint": "string?",
        "rewind": "string?",
        "warnings": "array of string",
        "security": "array of {name, kind, detail, option}",
        "signature": "object",
        "extended": "object?",
        "extended_signature": "object?",
        "extended_note": "string?",
        "validation": (
            "object (with --validate): "
            "{valid, claimed_versions, usable_versions, problems, interfaces, unclaimed_versions}"
        ),
    },
    "task": {
        "id": "string",
        "contextId": "string",
        "status": "object {state, message?, timestamp?}",
        "history": "array of message?",
        "artifacts": "array?",
        "metadata": "object?",
    },
    "task_event": {"kind": "string (task | status-update | artifact-update | message | error)", "event": "object"},
    "push_config": {
        "taskId": "string",
        "id": "string",
        "url": "string",
        "token": "string? (*** unless --show-token)",
        "authentication": "object?",
    },
    "push_removed": {"removed": "string", "taskId": "string"},
    "saved_agent": {
        "name": "string",
        "url": "string",
        "binding": "string?",
        "dialect": "string?",
        "auth_profile": "string?",
    },
    "saved_agent_shown": {
        "name": "string",
        "url": "string",
        "binding": "string?",
        "dialect": "string?",
        "auth_profile": "string?",
        "auth": "object? {name, <auth keys>, origins}",
    },
    "agent_saved": {"saved": "saved_agent", "config": "string"},
    "agent_removed": {"removed": "string"},
    "kagent_checkpoint": {
        "id": "string",
        "name": "string",
        "after_turn": "integer",
        "head_task": "string",
        "state": "string",
        "created_at": "string?",
    },
    "kagent_share": {
        "id": "string",
        "session": "string",
        "permission": "string",
        "created_at": "string?",
        "token": "string (share only, shown once)",
    },
    "kagent_changed": {"deleted | revoked": "string", "session | from | checkpoint": "string (fork)"},
    "error": {"error": "object {code, message, hint}"},
}

#: per command (or "command action"): the records its --json prints, in order ("*" = repeated)
OUTPUT: dict[str, list[str]] = {
    "sessions": ["session*"],
    "send": ["session_header", "delta* (with --partial)", "message*"],
    "stop": ["stop_header", "message*"],
    "history": ["message*"],
    "rewind": ["rewind_header", "message*"],
    "redo": ["redo_header", "message*"],
    "fork": ["fork_header", "message*"],
    "card": ["card"],
    "export": ["(no --json: Markdown or one JSON document, see --format)"],
    "task get": ["task"],
    "task list": ["task*"],
    "task cancel": ["task"],
    "task resubscribe": ["task_event*"],
    "push set": ["push_config"],
    "push get": ["push_config"],
    "push list": ["push_config*"],
    "push remove": ["push_removed"],
    "push receive": ["task_event*"],
    "agents add": ["agent_saved"],
    "agents list": ["saved_agent*"],
    "agents show": ["saved_agent_shown"],
    "agents remove": ["agent_removed"],
    "kagent": [
        "kagent_checkpoint* (checkpoints, rename-checkpoint)",
        "kagent_share* (shares, share)",
        "kagent_changed (delete-checkpoint, fork, revoke)",
    ],
    "schema": ["(this document)"],
}

#: options every command takes (listed once, under "connection_options")
_SKIP = {"help"}


def _argument(action: argparse.Action) -> dict[str, Any]:
    record: dict[str, Any] = {
        "name": action.option_strings[0] if action.option_strings else action.dest,
        "help": (action.help or "").replace("%%", "%"),
    }
    if len(action.option_strings) > 1:
        record["aliases"] = action.option_strings[1:]
    if not action.option_strings:
        record["positional"] = True
        if action.nargs in ("*", "?"):
            record["optional"] = True
    if action.metavar and isinstance(action.metavar, str):
        record["metavar"] = action.metavar
    if isinstance(action, (argparse._StoreTrueAction, argparse._StoreFalseAction)):
        record["flag"] = True
    if action.choices and not isinstance(action, argparse._SubParsersAction):
        record["choices"] = list(action.choices)
    if action.required and action.option_strings:
        record["required"] = True
    if isinstance(action, argparse._AppendAction):
        record["repeatable"] = True
    if action.default not in (None, False, argparse.SUPPRESS, []) and not isinstance(action.default, bool):
        record["default"] = action.default
    type_name = getattr(action.type, "__name__", "")
    if type_name in ("int", "float"):
        record["type"] = type_name
    return record


def _subparsers(parser: argparse.ArgumentParser) -> argparse._SubParsersAction | None:
    return next((a for a in parser._actions if isinstance(a, argparse._SubParsersAction)), None)


def _helps(sub: argparse._SubParsersAction) -> dict[str, str]:
    return {choice.dest: choice.help or "" for choice in sub._choices_actions}


def _command(name: str, parser: argparse.ArgumentParser, common: set[str], help_text: str) -> dict[str, Any]:
    record: dict[str, Any] = {"name": name, "help": help_text}
    args = [
        _argument(a)
        for a in parser._actions
        if a.dest not in _SKIP and not isinstance(a, argparse._SubParsersAction) and a.dest not in common
    ]
    record["takes_connection_options"] = any(a.dest in common for a in parser._actions)
    record["arguments"] = args
    sub = _subparsers(parser)
    if sub is not None:
        helps = _helps(sub)
        record["actions"] = [
            _command(f"{name} {action}", child, common, helps.get(action, "")) for action, child in sub.choices.items()
        ]
    if name in OUTPUT:
        record["json_output"] = OUTPUT[name]
    return record


def schema() -> dict[str, Any]:
    from rewindtui.cli.parser import build_parser, connection_options

    probe = argparse.ArgumentParser(add_help=False)
    connection_options(probe)
    common = {a.dest for a in probe._actions}
    parser = build_parser()
    sub = _subparsers(parser)
    assert sub is not None
    helps = _helps(sub)
    commands = []
    for name, child in sub.choices.items():
        if name in ("serve", "backup", "restore"):  # their own parsers: `rewindtui NAME --help`
            commands.append({"name": name, "help": helps.get(name, ""), "own_parser": True})
            continue
        commands.append(_command(name, child, common, helps.get(name, "")))
    return {
        "program": "rewindtui",
        "version": rewindtui.__version__,  # package metadata: read when asked
        "connection_options": [_argument(a) for a in probe._actions if a.dest not in _SKIP],
        "commands": commands,
        "records": RECORDS,
        "exit_status": {
            "0": "ok",
            "1": "the request or the turn failed",
            "2": "bad arguments or settings",
            "130": "interrupted",
        },
    }


def markdown(doc: dict[str, Any] | None = None) -> str:
    """The reference section of docs/cli.md."""
    doc = doc or schema()
    out = [
        "<!-- generated by `rewindtui schema --markdown`; tests/test_schema_cmd.py keeps it equal -->",
        "",
    ]

    def args_lines(args: list[dict[str, Any]]) -> list[str]:
        lines = []
        for a in args:
            name = a["name"] + (f" {a['metavar']}" if a.get("metavar") and not a.get("positional") else "")
            if a.get("positional"):
                name = a.get("metavar") or a["name"]
            extra = []
            if a.get("required"):
                extra.append("required")
            if a.get("repeatable"):
                extra.append("repeatable")
            if a.get("choices"):
                extra.append("one of " + ", ".join(map(str, a["choices"])))
            if "default" in a:
                extra.append(f"default {a['default']}")
            tail = f" ({'; '.join(extra)})" if extra else ""
            lines.append(f"  - `{name}`{tail}: {a['help']}")
        return lines

    def command(c: dict[str, Any], level: int) -> None:
        out.append(f"{'#' * level} `rewindtui {c['name']}`")
        out.append("")
        out.append(c["help"] + ("" if c["help"].endswith(".") else "."))
        if c.get("own_parser"):
            out.append(f"Its options: `rewindtui {c['name']} --help`.")
        if c.get("takes_connection_options"):
            out.append("Takes the connection options.")
        if c.get("arguments"):
            out.append("")
            out.extend(args_lines(c["arguments"]))
        if c.get("json_output"):
            out.append("")
            out.append("`--json` prints: " + ", ".join(f"`{r}`" for r in c["json_output"]) + ".")
        out.append("")
        for child in c.get("actions", []):
            command(child, level + 1)

    out.append("### Connection options")
    out.append("")
    out.extend(args_lines(doc["connection_options"]))
    out.append("")
    for c in doc["commands"]:
        command(c, 3)
    out.append("### `--json` records")
    out.append("")
    for name, keys in doc["records"].items():
        out.append(f"- `{name}`: " + ", ".join(f"`{k}` {t}" for k, t in keys.items()))
    out.append("")
    return "\n".join(out)


def add_parser(sub: Any, connection_options: Callable[[argparse.ArgumentParser], None]) -> None:
    p = sub.add_parser(
        "schema",
        help="every command, its arguments and its --json output shape, as JSON",
        description="Print every command, its arguments and the shape of its --json output as one JSON document.",
    )
    p.add_argument("--markdown", action="store_true", help="the same as the reference section of docs/cli.md")


def main(settings: Any, args: argparse.Namespace) -> int:
    text = markdown() if args.markdown else json.dumps(schema(), indent=1)
    sys.stdout.write(text + "\n")
    return 0
