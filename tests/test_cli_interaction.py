"""The headless commands after the interaction model: ids by unique prefix (--before,
--rewind-task), errors as the one JSON object on stdout, rewind/redo saying how to undo them, a
send while a question waits said in the CLI's words, export never inlining files nor overwriting
unasked, `serve --help` naming demo-slow; and the text renderers keeping tool lines whole."""

from __future__ import annotations

import base64
import json
from pathlib import Path

import pytest

from clirun import isolate, runner
from kit.servers import embedded_fixture
from rewindtui.cli import main as cli
from rewindtui.model import Item, ItemKind
from rewindtui.output.export import ExportExists, markdown, markdown_items, write_export
from rewindtui.output.render_text import format_item

server = embedded_fixture("cli-interaction", scope="module")


@pytest.fixture(autouse=True)
def isolated_settings(tmp_path, monkeypatch):
    return isolate(tmp_path, monkeypatch)


@pytest.fixture
def run(capsys, server):
    return runner(capsys, "--url", server.agent_url, "--api", server.api_url)


def new_session(run, *texts: str) -> tuple[str, list[str]]:
    session = None
    for text in texts:
        r = run("send", "--json", *(["--session", session] if session else []), text)
        assert r.rc == 0, r.err
        session = r.records()[0]["session"]
    assert session is not None
    seen: list[str] = []
    for rec in run("history", "--json", "--session", session).records():
        if rec["invocation_id"] and rec["invocation_id"] not in seen:
            seen.append(rec["invocation_id"])
    return session, seen


def users(run, session: str) -> list[str]:
    return [r["text"] for r in run("history", "--json", "--session", session).records() if r["role"] == "user"]


def test_before_and_rewind_task_take_unique_prefixes_and_rewind_says_how_to_undo(run):
    session, turns = new_session(run, "one", "two", "three")
    r = run("rewind", "--session", session[:8], "--before", turns[1][:10])  # "e-" and 8 hex digits
    assert r.rc == 0, r.err
    assert users(run, session) == ["one"]
    note = next(line for line in r.err.splitlines() if "to undo this rewind" in line)
    undo = note.split("to undo this rewind: ", 1)[1].split()
    assert undo[:4] == ["rewindtui", "redo", "--session", session[:8]] and undo[4] == "--rewind-task"
    prefix = undo[5]
    assert len(prefix) == 8
    r = run("redo", "--json", "--session", session[:8], "--rewind-task", prefix)  # the printed prefix works
    assert r.rc == 0, r.out
    header = r.records()[0]
    assert header["undo"].startswith(f"rewindtui redo --session {session[:8]} --rewind-task ")
    assert users(run, session) == ["one", "two", "three"]
    # an invocation prefix without "e-" too
    r = run("fork", "--json", "--session", session, "--before", turns[2][2:12])
    assert r.rc == 0, r.out
    assert r.records()[0]["forked_from"] == session


def test_a_turn_number_given_as_before_is_refused_not_matched_as_an_id_prefix(run):
    """Found using the commands: ``rewind --before 2`` rewound before whichever turn's id starts
    with ``e-2`` (hex ids: here and there it is turn 2, elsewhere another turn or none). A number
    is refused with the option that takes one; nothing is rewound. MCP's ``before`` is the same."""
    texts = ["one", "two", "three"]
    session, turns = new_session(run, *texts)
    while not any(t[2].isdigit() for t in turns):  # a turn whose id a digit would have matched
        assert len(texts) < 30  # (6/16) ** n: one more turn is almost always enough
        texts.append(f"more {len(texts)}")
        session, turns = new_session(run, *texts)
    digit = next(t[2] for t in turns if t[2].isdigit())
    before = users(run, session)
    for number in (digit, "-1", " 2"):
        r = run("rewind", "--json", "--session", session, "--before", number)
        assert r.rc == 2, r.out
        message = json.loads(r.out)["error"]["message"]
        assert f"--turn {number.strip()}" in message and "invocation id" in message
    assert users(run, session) == before  # nothing rewound
    r = run("fork", "--json", "--session", session, "--before", digit)
    assert r.rc == 2 and "--turn" in json.loads(r.out)["error"]["message"]
    r = run("rewind", "--json", "--session", session, "--turn", "2")  # the option that takes the number
    assert r.rc == 0, r.out
    assert users(run, session) == ["one"]


def test_an_ambiguous_or_unknown_prefix_is_a_clear_error(run):
    session, _ = new_session(run, "one", "two")
    r = run("rewind", "--json", "--session", session, "--before", "e-")
    assert r.rc == 2 and r.err == ""
    error = json.loads(r.out)["error"]
    assert "ambiguous" in error["message"]
    r = run("redo", "--json", "--session", session, "--rewind-task", "ffffffff")
    assert r.rc == 1 and "no rewind task 'ffffffff'" in json.loads(r.out)["error"]["message"]
    assert users(run, session) == ["one", "two"]  # nothing changed


def test_json_errors_are_the_one_object_on_stdout(run):
    r = run("history", "--json", "--session", "no-such-session")
    assert r.rc == 1 and r.err == ""
    (line,) = r.lines
    assert json.loads(line)["error"]["code"] == "not-found"


def test_a_send_while_a_question_waits_names_the_flags(run):
    session, _ = new_session(run, "delete temp.txt")
    r = run("send", "--json", "--session", session, "something else")
    assert r.rc == 1
    error = json.loads(r.out.splitlines()[-1])["error"]  # send streams its session line first; the error ends it
    assert error["code"] == "question-waiting" and "--approve" in error["message"] and "alt+y" not in error["message"]
    r = run("send", "--json", "--session", session, "--approve")
    assert r.rc == 0, r.out
    assert users(run, session) == ["delete temp.txt", "Approved"]


def test_export_refuses_an_existing_file_unless_forced_and_never_inlines_files(run, tmp_path: Path):
    blob = tmp_path / "blob.bin"
    payload = bytes(range(256)) * 64  # 16 KB
    blob.write_bytes(payload)
    r = run("send", "--json", "--file", str(blob), "keep this file")
    assert r.rc == 0, r.err
    session = r.records()[0]["session"]
    out = tmp_path / "talk.md"
    out.write_text("mine")
    r = run("export", "--session", session, "--output", str(out))
    assert r.rc == 1 and "exists" in r.err and "--force" in r.err
    assert out.read_text() == "mine"  # untouched
    r = run("export", "--session", session, "--output", str(out), "--force", "--save-files")
    assert r.rc == 0, r.err
    text = out.read_text()
    encoded = base64.b64encode(payload).decode()
    assert encoded[:64] not in text
    assert "- file `blob.bin · application/octet-stream · 16.0 KB` → saved as" in text
    saved = next((tmp_path / "talk.md.files").iterdir())
    assert saved.read_bytes() == payload
    r = run("export", "--session", session, "--format", "json")
    assert encoded[:64] not in r.out and '"size": 16384' in r.out


def test_write_export_never_overwrites_unasked(tmp_path: Path):
    target = tmp_path / "x.md"
    write_export(target, "one")
    with pytest.raises(ExportExists):
        write_export(target, "two")
    assert target.read_text() == "one"
    write_export(target, "two", force=True)
    assert target.read_text() == "two"


def test_serve_help_names_demo_slow(capsys):
    with pytest.raises(SystemExit):
        cli.main(["serve", "--help"])
    assert "demo-slow" in capsys.readouterr().out


# -- tool lines ------------------------------------------------------------------------------------
def _tool_item(args: dict) -> Item:
    message = {
        "kind": "message",
        "messageId": "m1",
        "role": "agent",
        "parts": [
            {
                "kind": "data",
                "data": {"id": "c1", "name": "write_file", "args": args},
                "metadata": {"kagent_type": "function_call"},
            }
        ],
        "metadata": {"kagent_author": "demo", "kagent_invocation_id": "e-1"},
    }
    return Item.from_message(message)


def test_tool_lines_are_not_cut_at_a_hundred_columns():
    long = "x" * 150 + " end-of-argument"
    item = _tool_item({"path": "notes.txt", "content": long})
    assert item.kind is ItemKind.MESSAGE and item.tools
    assert "end-of-argument" in format_item(item)
    assert "end-of-argument" in markdown_items([item])


def test_an_ellipsis_is_never_doubled():
    item = _tool_item({"content": "y" * 1000 + "…"})
    assert "……" not in format_item(item)
    assert "……" not in markdown([item], session_id="s")


def test_send_approve_answers_a_question_brought_back_by_redo(run):
    session, turns = new_session(run, "hello", "delete temp.txt")
    assert run("rewind", "--session", session, "--before", turns[1]).rc == 0
    r = run("send", "--json", "--session", session, "--approve")
    assert (
        r.rc == 1 and "no question is waiting" in json.loads(r.out.splitlines()[-1])["error"]["message"]
    )  # send streams its session line first; the error ends it
    assert run("redo", "--session", session).rc == 0  # the question's turn is back ...
    r = run("send", "--json", "--session", session, "--approve")  # ... and it can be answered
    assert r.rc == 0, r.out
    replies = [rec["text"] for rec in r.records()[1:] if rec["role"] == "agent" and rec["text"]]
    assert replies and "deleted" in replies[-1]
