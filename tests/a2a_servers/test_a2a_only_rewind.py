"""Headless history, rewind and fork over A2A alone: the embedded server behind a proxy that hides
its REST API and advertises rewind over A2A only (as a kagent agent with the rewind add-on would).
History comes from ListTasks, rewind from the control message, sessions from the local store; what
truly needs REST (fork) says which server feature is missing."""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest

from clirun import Result, isolate
from faults.proxy import Fault, FaultProxy, Seen, is_a2a_rewind
from rewindtui.cli import main as cli
from rewindtui.server import EmbeddedServer

FOREVER = 10**9


def a2a_only_card(body: bytes) -> bytes:
    card = json.loads(body)
    for ext in card.get("capabilities", {}).get("extensions", []):
        if isinstance(ext.get("params"), dict):
            ext["params"] = {"rewind": ["a2a"], "metadata_key": ext["params"].get("metadata_key")}
    return json.dumps(card).encode()


def is_card(req: Seen) -> bool:
    return req.method == "GET" and req.path.endswith("/.well-known/agent-card.json")


def is_rest_api(req: Seen) -> bool:
    return req.path.startswith("/api/sessions") or req.path.startswith("/api/tasks")


@pytest.fixture(scope="module")
def a2a_only(tmp_path_factory) -> Iterator[tuple[EmbeddedServer, FaultProxy]]:
    with EmbeddedServer(tmp_path_factory.mktemp("a2a-only")) as server, FaultProxy(server.base_url) as proxy:
        yield server, proxy


@pytest.fixture(autouse=True)
def hidden_rest(a2a_only, tmp_path, monkeypatch):
    _, proxy = a2a_only
    proxy.clear()
    proxy.add(Fault(is_card, times=FOREVER, reply=a2a_only_card))
    proxy.add(Fault(is_rest_api, times=FOREVER, status=404, body=b'{"error": "no REST API here"}'))
    isolate(tmp_path, monkeypatch)


@pytest.fixture
def run(capsys, a2a_only):
    server, proxy = a2a_only

    def run(*argv: str) -> Result:
        capsys.readouterr()
        rc = cli.main([*argv, "--url", proxy.rewrite(server.agent_url)])
        out, err = capsys.readouterr()
        return Result(rc, out, err)

    return run


def users(records: list[dict]) -> list[str]:
    return [r["text"] for r in records if r.get("role") == "user"]


def new_session(run, *texts: str) -> tuple[str, list[str]]:
    session = None
    for text in texts:
        r = run("send", "--json", *(["--session", session] if session else []), text)
        assert r.rc == 0, r.err
        session = r.records()[0]["session"]
    assert session
    history = run("history", "--json", "--session", session)
    assert history.rc == 0, history.err
    return session, list(dict.fromkeys(r["invocation_id"] for r in history.records()))


def test_history_and_sessions_without_rest(run, a2a_only):
    _, proxy = a2a_only
    session, turns = new_session(run, "one", "weather in Rome")
    h = run("history", "--json", "--session", session[:8])
    assert h.rc == 0 and h.err == ""
    records = h.records()
    assert users(records) == ["one", "weather in Rome"] and len(turns) == 2
    assert any(t["name"] == "get_weather" and t["result"] for r in records for t in r["tools"])
    assert proxy.seen_by(lambda r: r.rpc_method == "ListTasks")
    listed = run("sessions", "--json")
    assert listed.rc == 0 and [r["id"] for r in listed.records()] == [session]
    assert listed.records()[0]["name"] == "one"
    assert not [r for r in proxy.seen if is_rest_api(r) and r.method != "GET"]


def test_rewind_over_a2a_alone(run):
    session, turns = new_session(run, "one", "two", "three")
    r = run("rewind", "--json", "--session", session, "--before", turns[1])
    assert r.rc == 0, r.err
    assert users(r.records()[1:]) == ["one"]
    assert users(run("history", "--json", "--session", session).records()) == ["one"]


def test_rewind_and_send_over_a2a(run):
    session, turns = new_session(run, "one", "two")
    r = run("rewind", "--json", "--session", session, "--before", turns[1], "--text", "two again")
    assert r.rc == 0, r.err
    assert users(run("history", "--json", "--session", session).records()) == ["one", "two again"]


def test_a_server_that_rewinds_but_ignores_the_text_gets_it_as_the_next_turn(run, a2a_only):
    """Never show a message the server did not receive: the text goes again, as the next turn."""
    _, proxy = a2a_only
    session, turns = new_session(run, "one", "two")

    def drop_text(body: bytes) -> bytes:
        data = json.loads(body)
        for part in data["params"]["message"]["parts"]:
            part["text"] = ""  # an empty text: the server takes it as a rewind alone
        return json.dumps(data).encode()

    proxy.add(Fault(is_a2a_rewind, request=drop_text))
    r = run("rewind", "--json", "--session", session, "--before", turns[1], "--text", "two again")
    assert r.rc == 0, r.err
    history = run("history", "--json", "--session", session).records()
    assert users(history) == ["one", "two again"]  # once, as the server has it
    agents = [x["text"] for x in history if x["role"] == "agent"]
    assert agents[-1].startswith("You said: two again (turn 2;")


def test_fork_needs_rest_and_says_so(run, a2a_only):
    _, proxy = a2a_only
    session, turns = new_session(run, "one", "two")
    before = len(proxy.seen)
    r = run("fork", "--session", session, "--before", turns[1])
    assert r.rc == 1 and r.out == ""
    assert (
        r.err
        == "rewindtui: error: demo does not offer fork (it needs the server's REST API: POST /sessions/{id}/fork)\n"
    )
    assert not [x for x in proxy.seen[before:] if x.method == "POST"]


def test_a_plain_a2a_server_cannot_rewind_and_says_why(serve, capsys, tmp_path):
    server = serve()
    capsys.readouterr()
    assert cli.main(["send", "--json", "--url", server.url + "/", "hi"]) == 0
    session = json.loads(capsys.readouterr().out.splitlines()[0])["session"]
    rc = cli.main(["rewind", "--url", server.url + "/", "--session", session, "--before", "e-x"])
    _, err = capsys.readouterr()
    assert (
        rc == 1 and err == "rewindtui: error: echo-sdk does not support rewind (its agent card does not advertise it)\n"
    )
