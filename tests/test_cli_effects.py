"""`rewindtui rewind` says what it did not take back (issue 33): the delete the embedded agent
marks as acting outside it, in the JSON header (``not_undone``, which MCP's rewind returns too) and
as a note on stderr; a turn whose calls changed only the session says nothing."""

from __future__ import annotations

import pytest

from clirun import isolate, runner
from kit.servers import embedded_fixture

server = embedded_fixture("cli-effects", scope="module")
DELETE = "delete_file(name='temp.txt') ran; it acts outside the agent: rewinding does not undo it"


@pytest.fixture(autouse=True)
def isolated_settings(tmp_path, monkeypatch):
    return isolate(tmp_path, monkeypatch)


@pytest.fixture
def run(capsys, server):
    return runner(capsys, "--url", server.agent_url, "--api", server.api_url)


def turns_of(run, session: str) -> list[str]:
    seen: list[str] = []
    for rec in run("history", "--json", "--session", session).records():
        if rec["invocation_id"] not in seen:
            seen.append(rec["invocation_id"])
    return seen


def test_rewind_names_the_delete_it_cannot_undo(run):
    r = run("send", "--json", "what is the weather in Oslo")
    session = r.records()[0]["session"]
    assert run("send", "--json", "--session", session, "please delete temp.txt").rc == 0
    assert run("send", "--json", "--session", session, "--approve").rc == 0
    first, second = turns_of(run, session)

    r = run("rewind", "--json", "--session", session, "--before", second)
    assert r.rc == 0, r.err
    assert r.records()[0]["not_undone"] == [DELETE]

    # only the weather turn is left: get_weather changed the session's state only -- nothing said
    r = run("rewind", "--session", session, "--before", first)
    assert r.rc == 0, r.err
    assert "outside the agent" not in r.err and "outside the agent" not in r.out


def test_rewind_text_mode_says_it_as_a_note(run):
    r = run("send", "--json", "please delete temp.txt")
    session = r.records()[0]["session"]
    assert run("send", "--json", "--session", session, "--approve").rc == 0
    [turn] = turns_of(run, session)
    r = run("rewind", "--session", session, "--before", turn)
    assert r.rc == 0, r.err
    assert f"note: {DELETE}" in r.err
