"""A headless send the server refuses prints its error and nothing else: no ``session:`` line for
a new session the server never created (the context id is the client's until the server takes
the first message), none for a turn."""

from __future__ import annotations

import json

from proxy import Fault, is_turn

from clirun import isolate, runner

REFUSAL = json.dumps({"error": "refused by the test"}).encode()


def test_a_refused_first_send_prints_no_session_line(server, proxy, capsys, tmp_path, monkeypatch):
    isolate(tmp_path, monkeypatch)
    run = runner(capsys, "--url", proxy.rewrite(server.agent_url), "--api", proxy.rewrite(server.api_url))
    proxy.add(Fault(is_turn, status=400, body=REFUSAL))
    refused = run("send", "hello")
    assert refused.rc == 1, refused
    assert refused.out == "", refused.out  # no session line: the session was never made
    assert "refused by the test" in refused.err
    taken = run("send", "hello again")  # the same command, not refused: the line comes first
    assert taken.rc == 0, taken
    assert taken.lines[0].startswith("session: ")


def test_a_refused_first_send_prints_no_session_record_with_json(server, proxy, capsys, tmp_path, monkeypatch):
    isolate(tmp_path, monkeypatch)
    run = runner(capsys, "--url", proxy.rewrite(server.agent_url), "--api", proxy.rewrite(server.api_url))
    proxy.add(Fault(is_turn, status=400, body=REFUSAL))
    refused = run("send", "hello", "--json")
    assert refused.rc == 1, refused
    records = refused.records()
    assert [list(r) for r in records] == [["error"]], records
