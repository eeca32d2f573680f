"""The approval question headless, against the embedded server in both dialects: ``send`` ends
with the question on stderr (exit 0: the agent waits, nothing failed), ``send --approve`` /
``--reject`` answers it, and ``history`` shows the turn as the server keeps it."""

from __future__ import annotations

import pytest

from clirun import isolate, runner


@pytest.fixture
def run(capsys, server, tmp_path, monkeypatch):
    isolate(tmp_path, monkeypatch)
    return runner(capsys, "--url", server.agent_url, "--api", server.api_url)


@pytest.mark.parametrize("decision", ["approve", "reject"])
def test_send_then_answer(run, dialect, decision) -> None:
    asked = run("send", "--dialect", dialect, "please", "delete", "report.pdf")
    assert asked.rc == 0, asked.err
    session = asked.lines[0].split()[1]
    assert "user: please delete report.pdf" in asked.lines
    assert any("delete_file" in line and "report.pdf" in line for line in asked.lines), asked.out
    assert 'the agent asks: Delete report.pdf? (delete_file {"name": "report.pdf"})' in asked.err
    assert f"send --session {session} --approve" in asked.err

    answered = run("send", "--dialect", dialect, "--session", session, f"--{decision}")
    assert answered.rc == 0, answered.err
    assert answered.lines[0] == f"session: {session}"
    words = "Approved" if decision == "approve" else "Rejected"
    status = "deleted" if decision == "approve" else "rejected"
    assert f"user: {words}" in answered.lines
    assert any(
        line.startswith("demo: Tool delete_file returned: {") and f"'status': '{status}'" in line
        for line in answered.lines
    ), answered.out
    assert answered.err == ""

    history = run("history", "--session", session)
    assert history.rc == 0
    assert [line for line in history.lines if line.startswith("user:")] == [
        "user: please delete report.pdf",
        f"user: {words}",
    ]
    # answered: nothing is waiting any more
    again = run("send", "--session", session, "--approve")
    assert again.rc == 1 and "nothing to answer" in again.err and "no question is waiting" in again.err


def test_answer_needs_a_session_and_no_text(run) -> None:
    r = run("send", "--approve")
    assert r.rc == 2 and "--session" in r.err  # a usage error, like argparse's
    r = run("send", "--session", "x", "--reject", "and some text")
    assert r.rc == 2 and "no TEXT" in r.err
    r = run("send", "--approve", "--reject", "--session", "x")
    assert r.rc == 2  # argparse: not both
