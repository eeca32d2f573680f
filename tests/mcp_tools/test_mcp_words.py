"""MCP results name MCP tools, not the headless commands (cli/mcp_words.py): the text a command
writes itself is put in MCP's terms; a conversation's own text is never touched."""

from __future__ import annotations

import json

from rewindtui.cli.mcp_words import mcp_error_line, mcp_record, mcp_words


def test_a_command_that_is_a_tool_becomes_the_tool_call():
    assert (
        mcp_words("to undo this rewind: rewindtui redo --session 1a2b --rewind-task 9f8e")
        == 'to undo this rewind: redo(session="1a2b", rewind_task="9f8e")'
    )
    assert mcp_words("see `rewindtui history --include-rewound --session ab12`") == (
        'see `history(include_rewound=true, session="ab12")`'
    )
    assert mcp_words("`rewindtui send --approve` or `--reject`") == "`send(approve=true)` or `--reject`"


def test_a_command_that_is_no_tool_stays_a_shell_command():
    for text in ("run `rewindtui auth login` with the same options", "run `rewindtui repair ab12`"):
        assert mcp_words(text) == text


def test_only_the_fields_a_command_writes_are_changed_and_the_json_stays_json():
    record = {"role": "user", "text": "rewindtui redo --session x", "undo": "rewindtui redo --session 1a2b"}
    assert mcp_record(record) == {**record, "undo": 'redo(session="1a2b")'}
    line = json.dumps({"error": {"code": "x", "message": "see `rewindtui history --session ab`", "hint": ""}})
    assert json.loads(mcp_error_line(line))["error"]["message"] == 'see `history(session="ab")`'
    assert mcp_error_line("not json") == "not json"
