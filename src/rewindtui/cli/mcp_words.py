"""What an MCP result says in MCP's terms: the headless commands name each other
(``rewindtui redo --session 1a2b --rewind-task 9f8e``), but an MCP client calls tools, so a
result names the tool and its arguments (``redo(session="1a2b", rewind_task="9f8e")``).

Only commands that are MCP tools of the same name are put so; others (``rewindtui auth login``,
``rewindtui repair``) are something the user runs in a shell and stay as they are."""

from __future__ import annotations

import json
import re
from typing import Any

#: the headless commands that ``rewindtui mcp`` offers as tools of the same name and arguments
TOOLS = frozenset({"agents", "sessions", "send", "history", "rewind", "redo", "fork", "card", "export"})

_COMMAND = re.compile(r"rewindtui (?P<name>[a-z]+)(?P<options>(?: --[a-z][a-z-]*(?: (?!--)[^\s`'\"),;]+)?)*)")
_OPTION = re.compile(r"--(?P<flag>[a-z][a-z-]*)(?: (?P<value>(?!--)[^\s`'\"),;]+))?")


def _tool_call(match: re.Match[str]) -> str:
    name = match.group("name")
    if name not in TOOLS:
        return match.group(0)
    arguments = []
    for option in _OPTION.finditer(match.group("options")):
        key = option.group("flag").replace("-", "_")
        value = option.group("value")
        arguments.append(f"{key}={json.dumps(value) if value is not None else 'true'}")
    return f"{name}({', '.join(arguments)})"


def mcp_words(text: str) -> str:
    """``text`` with each ``rewindtui TOOL --option value ...`` put as the MCP tool call."""
    return _COMMAND.sub(_tool_call, text)


#: the fields of a result record that the commands write themselves (never a message's text)
FIELDS = ("undo", "message", "hint", "note")


def mcp_record(record: Any) -> Any:
    """A command's JSON record with :func:`mcp_words` applied to the fields the command wrote
    (``undo``, and an error's ``message`` and ``hint``); a conversation's text is left as it is."""
    if not isinstance(record, dict):
        return record
    out = dict(record)
    for key in FIELDS:
        if isinstance(out.get(key), str):
            out[key] = mcp_words(out[key])
    if isinstance(out.get("error"), dict):
        out["error"] = mcp_record(out["error"])
    return out


def mcp_error_line(line: str) -> str:
    """A ``--json`` error line, said in MCP's terms (a line that is no JSON record is kept)."""
    try:
        record = json.loads(line)
    except ValueError:
        return line
    return json.dumps(mcp_record(record), ensure_ascii=False)
