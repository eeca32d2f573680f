"""The headless commands, run for real: ``main([...])`` in-process (and ``python -m rewindtui`` in a
subprocess where the process boundary matters) against a real embedded server on loopback."""

from __future__ import annotations

import io
import os
import socket
import subprocess
import sys
from pathlib import Path

import httpx
import pytest

from clirun import Result, isolate
from kit.servers import embedded_fixture
from rewindtui.cli import commands
from rewindtui.cli import main as cli
from rewindtui.client.a2a_client import A2AClient, ServerConfig

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = Path(__file__).resolve().parent / "fixtures" / "kagent-0.10.4"
MESSAGE_KEYS = {
    "kind",
    "message_id",
    "role",
    "author",
    "text",
    "invocation_id",
    "task_id",
    "tools",
    "parts",
    "other_parts",
    "turn",
}


server = embedded_fixture("server-data", scope="module")


@pytest.fixture(autouse=True)
def isolated_settings(tmp_path, monkeypatch):
    """No user config file or REWINDTUI_* variables leak into a test."""
    return isolate(tmp_path, monkeypatch)


@pytest.fixture
def run(capsys, server):
    """``run("send", "hi")``: the CLI against the module's server; returns rc, stdout, stderr."""

    def run(*argv: str, connect: bool = True) -> Result:
        args = list(argv) + (["--url", server.agent_url, "--api", server.api_url] if connect else [])
        capsys.readouterr()
        rc = cli.main(args)
        captured = capsys.readouterr()
        return Result(rc, captured.out, captured.err)

    return run


def closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def new_session(run, *texts: str) -> tuple[str, list[str]]:
    """A session with one turn per text; returns its id and the turns' invocation ids."""
    session = None
    for text in texts:
        extra = ["--session", session] if session else []
        r = run("send", "--json", *extra, text)
        assert r.rc == 0, r.err
        session = r.records()[0]["session"]
    assert session is not None
    return session, invocations(run, session)


def invocations(run, session: str) -> list[str]:
    seen: list[str] = []
    for rec in run("history", "--json", "--session", session).records():
        if rec["invocation_id"] not in seen:
            seen.append(rec["invocation_id"])
    return seen


def history_texts(run, session: str) -> list[tuple[str, str]]:
    r = run("history", "--json", "--session", session)
    assert r.rc == 0, r.err
    return [(rec["role"], rec["text"]) for rec in r.records()]


# -- send / history ----------------------------------------------------------------------------
def test_send_then_history(run) -> None:
    r = run("send", "hello", "there")
    assert r.rc == 0, r.err
    assert r.lines[0].startswith("session: ")
    session = r.lines[0].split()[1]
    assert r.lines[1].startswith("--- invocation e-")
    assert "user: hello there" in r.lines
    assert "demo: You said: hello there (turn 1; history: ['hello there']; weather_calls=0)" in r.lines
    assert r.err == ""

    h = run("history", "--session", session)
    assert h.rc == 0
    assert h.lines == r.lines[1:]  # the same turn, as the server has it

    r = run("send", "--session", session, "again")
    assert r.rc == 0 and r.lines[0] == f"session: {session}"
    assert "demo: You said: again (turn 2; history: ['hello there', 'again']; weather_calls=0)" in r.lines
    assert len(run("history", "--session", session).lines) == 6


def test_json_lines_have_the_fields(run) -> None:
    r = run("send", "--json", "json please")
    assert r.rc == 0
    header, *records = r.records()
    assert set(header) == {"session"}
    assert [rec["role"] for rec in records] == ["user", "agent"]
    for rec in records:
        assert set(rec) == MESSAGE_KEYS
        assert rec["kind"] == "message" and rec["message_id"] and rec["invocation_id"].startswith("e-")
    assert records[0]["invocation_id"] == records[1]["invocation_id"]
    assert records[1]["author"] == "demo" and records[1]["text"].startswith("You said: json please")
    # history gives the same messages, with the same ids
    h = run("history", "--json", "--session", header["session"]).records()
    assert [x["message_id"] for x in h] == [x["message_id"] for x in records]


def test_send_reads_stdin(run, monkeypatch) -> None:
    monkeypatch.setattr(sys, "stdin", io.StringIO("from stdin\n"))
    r = run("send", "-")
    assert r.rc == 0 and "user: from stdin" in r.lines


def test_weather_shows_the_tool_call(run) -> None:
    r = run("send", "--json", "what is the weather in Tokyo")
    assert r.rc == 0, r.err
    tools = [t for rec in r.records()[1:] for t in rec.get("tools", ())]
    assert len(tools) == 1
    assert tools[0]["name"] == "get_weather" and tools[0]["args"] == {"city": "Tokyo"}
    assert tools[0]["result"]["city"] == "Tokyo" and "temp_c" in tools[0]["result"]
    assert "weather_calls=1" in r.records()[-1]["text"]

    text = run("history", "--session", r.records()[0]["session"])
    tool_line = next(i for i, line in enumerate(text.lines) if line.strip().startswith("tool get_weather("))
    assert text.lines[tool_line].strip() == 'tool get_weather({"city": "Tokyo"})'
    assert text.lines[tool_line + 1].strip().startswith('-> {"city": "Tokyo"')


def test_terminal_control_sequences_are_neutralised(run) -> None:
    evil = "\x1b]0;pwned\x07hi \x1b[31mred\x1b[0m \x07"
    r = run("send", evil)
    assert r.rc == 0
    assert "\x1b" not in r.out and "\x07" not in r.out
    assert "user: hi red \u2407" in r.lines
    j = run("history", "--json", "--session", r.lines[0].split()[1])
    assert "\x1b" not in j.out and "\\u001b" in j.out
    assert j.records()[0]["text"] == evil  # JSON keeps the text exact


# -- rewind ------------------------------------------------------------------------------------
def test_rewind_before_turn_two(run) -> None:
    session, turns = new_session(run, "one", "two", "three")
    assert len(turns) == 3
    r = run("rewind", "--session", session, "--before", turns[1])
    assert r.rc == 0, r.err
    assert r.lines[0] == f"session: {session}"
    assert "user: one" in r.lines and "user: two" not in r.out and "three" not in r.out
    assert [t for _, t in history_texts(run, session)] == [
        "one",
        "You said: one (turn 1; history: ['one']; weather_calls=0)",
    ]
    # the model no longer sees turns 2-3
    r = run("send", "--session", session, "four")
    assert "demo: You said: four (turn 2; history: ['one', 'four']; weather_calls=0)" in r.lines


def test_rewind_with_text_and_json(run) -> None:
    session, turns = new_session(run, "first", "what is the weather in Oslo")
    r = run("rewind", "--json", "--session", session, "--before", turns[1], "--text", "redo")
    assert r.rc == 0, r.err
    header, *records = r.records()
    # the edit can be undone: the header says how (the rewind's task, by a prefix)
    assert header.pop("undo").startswith(f"rewindtui redo --session {session[:8]} --rewind-task ")
    assert header == {"session": session, "rewound_before": turns[1]}
    assert [rec["text"] for rec in records if rec["role"] == "user"] == ["first", "redo"]
    assert records[-1]["text"] == "You said: redo (turn 2; history: ['first', 'redo']; weather_calls=0)"
    assert records[-1]["invocation_id"] not in turns
    assert [t for role, t in history_texts(run, session) if role == "user"] == ["first", "redo"]


def test_rewind_unknown_invocation_changes_nothing(run) -> None:
    session, turns = new_session(run, "keep", "me")
    before = run("history", "--json", "--session", session).out
    r = run("rewind", "--session", session, "--before", "e-00000000-not-a-turn")
    assert r.rc == 1 and r.out == ""
    assert r.err.count("\n") == 1
    assert "no invocation 'e-00000000-not-a-turn' in session" in r.err
    assert run("history", "--json", "--session", session).out == before
    r = run("fork", "--session", session, "--before", "header_update")
    assert r.rc == 1 and r.err.count("\n") == 1
    assert run("history", "--json", "--session", session).out == before


# -- fork and sessions -------------------------------------------------------------------------
def test_fork_leaves_the_original(run) -> None:
    session, turns = new_session(run, "alpha", "beta")
    original = run("history", "--json", "--session", session).out
    r = run("fork", "--json", "--session", session, "--before", turns[1])
    assert r.rc == 0, r.err
    header, *records = r.records()
    forked = header["session"]
    assert forked != session and header["forked_from"] == session and header["name"].startswith("Fork of")
    assert [rec["text"] for rec in records if rec["role"] == "user"] == ["alpha"]
    assert run("history", "--json", "--session", session).out == original
    assert [t for role, t in history_texts(run, forked) if role == "user"] == ["alpha"]

    text = run("fork", "--session", session, "--before", turns[1])
    assert text.rc == 0 and text.lines[0].endswith(f" (fork of {session})")

    listed = run("sessions", "--json")
    assert listed.rc == 0
    ids = [rec["id"] for rec in listed.records()]
    assert session in ids and forked in ids
    plain = run("sessions")
    assert any(line.startswith(forked + "  ") and line.endswith(header["name"]) for line in plain.lines)


# -- errors ------------------------------------------------------------------------------------
def test_history_of_unknown_session(run) -> None:
    r = run("history", "--session", "no-such-session")
    assert r.rc == 1 and r.out == ""
    assert r.err == "rewindtui: error: session 'no-such-session' does not exist on this server\n"


def test_unreachable_url(run) -> None:
    url = f"http://127.0.0.1:{closed_port()}/api/a2a/x/y/"
    r = run("history", "--session", "s", "--url", url, connect=False)
    assert r.rc == 1 and r.out == ""
    assert url in r.err and "is the server running?" in r.err and r.err.count("\n") == 1
    assert "Traceback" not in r.err


def test_usage_errors_exit_2(run) -> None:
    r = run("rewind", "--session", "s", connect=False)
    assert r.rc == 2 and "--before --turn is required" in r.err, r.err  # one of them
    r = run("send", "--rewind", "sometimes", "hi", connect=False)
    assert (
        r.rc == 2
        and r.err == "rewindtui: error: --rewind: rewind mode must be one of a2a, rest, off, auto, got 'sometimes'\n"
    )
    r = run("frobnicate", connect=False)
    assert r.rc == 2 and "invalid choice" in r.err
    assert run("--version", connect=False).rc == 0


def test_bad_config_file_is_one_line(run, isolated_settings) -> None:
    isolated_settings.write_text("url = [\n")
    r = run("sessions", connect=False)
    assert r.rc == 2 and r.err.count("\n") == 1
    assert str(isolated_settings) in r.err and "not valid TOML" in r.err


def test_keyboard_interrupt_is_quiet(run, monkeypatch) -> None:
    async def interrupted(*a, **k):
        raise KeyboardInterrupt

    monkeypatch.setattr(commands, "run_command", interrupted)  # cli.main imports it when a command runs
    r = run("sessions")
    assert (r.rc, r.out, r.err) == (130, "", "")


def test_unexpected_error_is_one_line(run, monkeypatch) -> None:
    async def broken(*a, **k):
        raise RuntimeError("boom\nsecond line")

    monkeypatch.setattr(commands, "run_command", broken)
    r = run("sessions")
    assert (
        r.rc == 1
        and r.err
        == "rewindtui: error: unexpected RuntimeError: boom second line (set REWINDTUI_DEBUG=1 for the traceback)\n"
    )


def _stock_kagent(request: httpx.Request) -> httpx.Response:
    """A stock kagent 0.10.4 agent replayed from the wire captures: its card, and a turn that fails."""
    name = "01_agent_card.txt" if request.method == "GET" else "07_failed_no_parts.txt"
    body = (FIXTURES / name).read_bytes().split(b"### RESPONSE\n", 1)[1].split(b"\n\n", 1)[1]
    kind = "application/json" if request.method == "GET" else "text/event-stream"
    return httpx.Response(200, content=body, headers={"content-type": kind})


def test_send_exits_1_when_the_turn_fails(run, monkeypatch) -> None:
    def client(config, http=None):
        return A2AClient(config, http=httpx.AsyncClient(transport=httpx.MockTransport(_stock_kagent)))

    monkeypatch.setattr("rewindtui.config.connection.A2AClient", client)
    r = run("send", "--url", "http://stock.test/", "hi", connect=False)
    assert r.rc == 1
    assert r.lines[0].startswith("session: ") and "error: No parts in the new_message." in r.lines
    assert r.err == "rewindtui: error: the turn failed: No parts in the new_message.\n"
    # and a stock server is never asked to rewind: the reason is its card, said before anything is sent
    r = run("rewind", "--url", "http://stock.test/", "--session", "s1", "--before", "e-1", connect=False)
    assert (
        r.rc == 1
        and r.err == "rewindtui: error: echo_agent does not support rewind (its agent card does not advertise it)\n"
    )


# -- dispatch ----------------------------------------------------------------------------------
def test_no_command_runs_the_app(run, monkeypatch) -> None:
    seen = []
    monkeypatch.setattr("rewindtui.tui.app.run_app", lambda settings: seen.append(settings) or 0)
    r = run("--url", "http://a.test/x/", "--session", "S1", "--theme", "nord", "--header", "A: b", connect=False)
    assert r.rc == 0
    (settings,) = seen
    assert (settings.url, settings.session, settings.theme, settings.headers) == (
        "http://a.test/x/",
        "S1",
        "nord",
        {"A": "b"},
    )


def test_serve_passes_its_arguments_on(run, monkeypatch) -> None:
    seen = []
    monkeypatch.setattr("rewindtui.server.process.serve.main", lambda argv: seen.append(argv) or 0)
    assert run("serve", "--port", "0", "--data-dir", "d", connect=False).rc == 0
    assert seen == [["--port", "0", "--data-dir", "d"]]


# -- out of the box: no --url, the CLI starts its own embedded server --------------------------
def test_out_of_the_box_with_the_embedded_server(tmp_path, isolated_settings) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("REWINDTUI_")}
    env["REWINDTUI_CONFIG"] = str(isolated_settings)
    data = tmp_path / "data"

    def rewindtui(*argv: str) -> subprocess.CompletedProcess:
        return subprocess.run(
            [sys.executable, "-m", "rewindtui", *argv, "--data-dir", str(data)],
            capture_output=True,
            text=True,
            env=env,
            timeout=120,
        )

    sent = rewindtui("send", "hi")
    assert sent.returncode == 0, sent.stderr
    session = sent.stdout.splitlines()[0].removeprefix("session: ")
    assert "demo: You said: hi (turn 1; history: ['hi']; weather_calls=0)" in sent.stdout
    shown = rewindtui("history", "--session", session)
    assert shown.returncode == 0, shown.stderr
    assert shown.stdout.splitlines() == sent.stdout.splitlines()[1:]
    assert (data / "server.log").exists()  # it really ran on --data-dir
    missing = rewindtui("history", "--session", "nope")
    assert missing.returncode == 1 and missing.stderr.count("\n") == 1 and "Traceback" not in missing.stderr


def test_dialect_and_user_id_are_used(run) -> None:
    r = run("send", "--json", "--dialect", "0.3", "--user-id", "bob", "old dialect")
    assert r.rc == 0, r.err
    session = r.records()[0]["session"]
    assert r.records()[-1]["text"].startswith("You said: old dialect (turn 1;")
    assert run("history", "--user-id", "bob", "--session", session).rc == 0
    # sessions belong to their user: another user cannot see it
    other = run("history", "--user-id", "carol", "--session", session)
    assert other.rc == 1 and "does not exist" in other.err
    assert session not in run("sessions", "--user-id", "carol").out
    assert session in run("sessions", "--user-id", "bob").out


# -- words that tell the truth -----------------------------------------------------------------
def session_ids(run) -> list[str]:
    return [rec["id"] for rec in run("sessions", "--json").records()]


def test_send_and_history_json_agree_on_every_field(run) -> None:
    for text in ("plain words", "what is the weather in Oslo"):
        sent = run("send", "--json", text)
        assert sent.rc == 0, sent.err
        header, *records = sent.records()
        history = run("history", "--json", "--session", header["session"]).records()
        assert records == history  # every field of every message, the user's included (author ...)
        assert records[0]["author"] == "user"


def test_unknown_session_says_it_does_not_exist(run) -> None:
    before = session_ids(run)
    for argv in (("send", "--session", "no-such-id", "hi"), ("rewind", "--session", "no-such-id", "--before", "e-1")):
        r = run(*argv)
        assert r.rc == 1 and r.out == ""
        assert r.err == "rewindtui: error: session 'no-such-id' does not exist on this server\n"
    assert session_ids(run) == before


def test_any_unique_prefix_of_a_session_id(run) -> None:
    session, _ = new_session(run, "prefix me")
    others = [s for s in session_ids(run) if s != session]
    size = next(n for n in range(4, len(session)) if not any(o.startswith(session[:n]) for o in others))
    r = run("history", "--session", session[:size])
    assert r.rc == 0 and "user: prefix me" in r.lines
    s = run("send", "--json", "--session", session[:size], "and more")
    assert s.rc == 0 and s.records()[0] == {"session": session}


def test_rewind_off_in_the_settings_says_so(run) -> None:
    session, turns = new_session(run, "one", "two")
    r = run("rewind", "--rewind", "off", "--session", session, "--before", turns[1])
    assert r.rc == 1 and r.err == "rewindtui: error: rewind is off for this server in your settings\n"
    f = run("fork", "--rewind", "off", "--session", session, "--before", turns[1])
    assert f.rc == 1 and "off for this server in your settings" in f.err
    assert len(invocations(run, session)) == 2  # nothing was rewound


def test_a_send_to_a_wrong_url_prints_its_error_once_and_leaves_no_session(run, server) -> None:
    before = session_ids(run)
    # a port with nothing on it
    url = f"http://127.0.0.1:{closed_port()}/api/a2a/x/y/"
    r = run("send", "--url", url, "hello?", connect=False)
    assert r.rc == 1 and r.out == "" and r.err.count("\n") == 1 and "user:" not in r.err
    # the right server, the wrong agent path
    wrong = server.base_url + "/api/a2a/local/nobody/"
    r = run("send", "--url", wrong, "--api", server.api_url, "hello?", connect=False)
    assert r.rc == 1 and r.out == "" and r.err.count("\n") == 1
    assert "no A2A agent card" in r.err
    assert session_ids(run) == before


async def test_a_new_session_exists_only_after_its_first_message(server) -> None:
    from rewindtui.chat import Chat

    async with A2AClient(ServerConfig(url=server.agent_url, api=server.api_url)) as client:
        chat = Chat(client)
        before = {s.id for s in await client.list_sessions()}
        await chat.open(None)
        assert chat.session_id is None
        assert {s.id for s in await client.list_sessions()} == before
        await chat.send("now it exists")
        assert {s.id for s in await client.list_sessions()} == before | {chat.session_id}
