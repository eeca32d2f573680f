"""rewindtui against kagent's controller API as kagent's Go code shapes it (the double in
kagent_double.py), driven by the headless commands: sessions of one agent, sessions created with
``agent_ref``, the A2A proxy, history with tool calls paired, rewind only where the agent says it
can, and errors that name the real cause."""

from __future__ import annotations

import pytest

from clirun import Result, isolate
from fakeserver import closed_port
from rewindtui.cli import main as cli


@pytest.fixture(autouse=True)
def isolated(tmp_path, monkeypatch):
    isolate(tmp_path, monkeypatch)


@pytest.fixture
def run(capsys, controller):
    double, base = controller

    def run(*argv: str, agent: str = "kagent/helper", user: str = "alice", kagent: str | None = None) -> Result:
        capsys.readouterr()
        rc = cli.main([*argv, "--kagent", kagent or base, "--agent", agent, "--user-id", user])
        out, err = capsys.readouterr()
        return Result(rc, out, err)

    return run


def test_send_creates_the_session_with_agent_ref_and_talks_through_the_proxy(run, controller):
    double, _ = controller
    double.requests.clear()
    r = run("send", "--json", "hello kagent")
    assert r.rc == 0, r.err
    header, *records = r.records()
    session = header["session"]
    assert [(x["role"], x["text"].split(" (")[0]) for x in records] == [
        ("user", "hello kagent"),
        ("agent", "You said: hello kagent"),
    ]
    row = double.sessions[session]
    assert row["agent_id"] == "kagent__NS__helper" and row["user_id"] == "alice" and row["name"] == "hello kagent"
    created = [p for m, p in double.requests if m == "POST" and p == "/api/sessions"]
    assert created == ["/api/sessions"]
    a2a = [p for m, p in double.requests if m == "POST" and "/a2a" in p]
    expected = "/api/a2a-sandboxes/kagent/helper/" if double.flavor == "ae5a948" else "/api/a2a/kagent/helper/"
    assert a2a == [expected]


def test_history_and_sessions_of_the_agent(run, controller):
    double, _ = controller
    first = run("send", "--json", "what is the weather in Oslo").records()[0]["session"]
    sent = run("send", "--json", "--session", first, "and tomorrow?")
    assert sent.rc == 0, sent.err
    h = run("history", "--json", "--session", first)
    assert h.rc == 0, h.err
    records = h.records()
    assert [r["role"] for r in records] == ["user", "agent", "agent", "user", "agent"]
    tool = records[1]["tools"][0]
    assert tool["name"] == "get_weather" and tool["result"]["city"] == "Oslo"  # the call and its result, paired
    text = run("history", "--session", first)
    assert text.lines[0].startswith("--- invocation e-") and "user: what is the weather in Oslo" in text.lines
    # the agent's sessions, newest first, from GET /api/sessions/agent/{namespace}/{name}
    double.requests.clear()
    listed = run("sessions", "--json")
    assert listed.rc == 0
    ids = [r["id"] for r in listed.records()]
    assert ids[0] == first and all(not r["gone"] for r in listed.records())
    assert ("GET", "/api/sessions/agent/kagent/helper") in double.requests
    # another user sees none of them (kagent leaves an empty data out of the envelope)
    other = run("sessions", "--json", user="bob")
    assert other.rc == 0 and other.out == ""


def test_unknown_session_on_the_controller(run):
    r = run("history", "--session", "not-a-session")
    assert r.rc == 1 and r.err == "rewindtui: error: session 'not-a-session' does not exist on this server\n"


def test_rewind_with_the_add_on(run):
    session = run("send", "--json", "one").records()[0]["session"]
    run("send", "--session", session, "two")
    turns = list(dict.fromkeys(r["invocation_id"] for r in run("history", "--json", "--session", session).records()))
    r = run("rewind", "--json", "--session", session, "--before", turns[1])
    assert r.rc == 0, r.err
    assert [x["text"] for x in r.records()[1:] if x["role"] == "user"] == ["one"]
    again = run("history", "--json", "--session", session)
    assert [x["text"] for x in again.records() if x["role"] == "user"] == ["one"]


def test_a_stock_agent_is_never_asked_to_rewind(run, controller):
    double, _ = controller
    session = run("send", "--json", "one", agent="kagent/stock-agent").records()[0]["session"]
    run("send", "--session", session, "two", agent="kagent/stock-agent")
    double.requests.clear()
    r = run("rewind", "--session", session, "--before", "e-whatever", agent="kagent/stock-agent")
    assert r.rc == 1
    assert r.err == (
        "rewindtui: error: this kagent agent (kagent/stock-agent) does not support rewind: enable the rewind "
        'add-on on it (see the README, "Rewind on your kagent agents")\n'
    )
    assert not [p for m, p in double.requests if m == "POST"]  # nothing was sent


def test_errors_name_the_real_cause(run, controller):
    double, base = controller
    missing = run("send", "hi", agent="kagent/nobody")
    assert missing.rc == 1 and missing.out == ""
    assert missing.err.startswith(f"rewindtui: error: agent kagent/nobody is not on the kagent controller at {base} ")
    said = "Agent sandboxes/kagent/nobody not found" if double.flavor == "ae5a948" else "Agent kagent/nobody not found"
    assert f"(it answered: {said})" in missing.err and "check --agent" in missing.err
    down = run("sessions", kagent=f"http://127.0.0.1:{closed_port()}")
    assert down.rc == 1 and "cannot reach the kagent controller" in down.err and "check --kagent" in down.err
    assert down.err.count("\n") == 1


async def test_the_controllers_shapes_as_the_client_reads_them(controller):
    """The envelope, ``{"session", "events"}``, ``agent_ref`` and a left-out empty ``data``."""
    from rewindtui.client.a2a_client import A2AClient, HTTPStatusFailed, ServerConfig

    double, base = controller
    async with A2AClient(
        ServerConfig(
            url=base + "/api/a2a-sandboxes/kagent/helper/",
            api=base + "/api",
            user_id="carol",
            agent_ref="kagent/helper",
        )
    ) as client:
        assert await client.list_sessions() == []
        created = await client.create_session(name="by hand")
        assert created.name == "by hand" and double.sessions[created.id]["agent_id"] == "kagent__NS__helper"
        got = await client.get_session(created.id)
        assert (got.id, got.name, got.user_id) == (created.id, "by hand", "carol")
        assert await client.session_tasks(created.id) == []
        renamed = await client.rename_session(created.id, "renamed")
        assert renamed.name == "renamed"
        await client.delete_session(created.id)
        with pytest.raises(HTTPStatusFailed) as info:
            await client.get_session(created.id)
        assert info.value.status == 404 and info.value.detail.startswith("Session not found")
    async with A2AClient(ServerConfig(url=base + "/api/a2a-sandboxes/kagent/helper/", api=base + "/api")) as client:
        with pytest.raises(HTTPStatusFailed) as info:
            await client._api("POST", "/sessions", json={})
        assert info.value.status == 400 and info.value.detail == "agent_ref is required"


def test_tasks_are_asked_for_with_a2a_version_1_0(run, controller):
    """``GET /api/sessions/{id}/tasks`` negotiates the wire on the release branch: the client asks
    for A2A 1.0 shapes with ``A2A-Version: 1.0``."""
    double, _ = controller
    session = run("send", "--json", "one").records()[0]["session"]
    double.requests.clear()
    double.versions.clear()
    h = run("history", "--json", "--session", session)
    assert h.rc == 0, h.err
    asked = [
        v for (m, p), v in zip(double.requests, double.versions, strict=True) if p == f"/api/sessions/{session}/tasks"
    ]
    assert asked and set(asked) == {"1.0"}


def test_0_3_task_shapes_still_read(run, controller, monkeypatch):
    """An older controller ignores the header and answers A2A 0.3 shapes (the release branch does the
    same with no header): history reads them the same."""
    from rewindtui.a2a import kagent

    double, _ = controller
    if double.flavor == "ae5a948":
        pytest.skip("ae5a948 answers 1.0 shapes only")
    session = run("send", "--json", "what is the weather in Oslo").records()[0]["session"]
    with_header = run("history", "--json", "--session", session).records()
    monkeypatch.setattr(kagent, "TASKS_WIRE", {})
    without = run("history", "--json", "--session", session).records()
    assert [(r["role"], r["text"]) for r in without] == [(r["role"], r["text"]) for r in with_header]
    assert without[1]["tools"][0]["name"] == "get_weather"


async def test_the_release_branch_negotiates_the_tasks_wire(controller):
    """The double itself, as ``HandleListTasksForSession`` at 03e950f6e answers each header."""
    import httpx

    double, base = controller
    if double.flavor == "ae5a948":
        pytest.skip("ae5a948 does not negotiate")
    async with httpx.AsyncClient() as http:
        made = await http.post(
            f"{base}/api/sessions", json={"agent_ref": "kagent/helper"}, headers={"X-User-Id": "dave"}
        )
        sid = made.json()["data"]["id"]
        bad = await http.get(f"{base}/api/sessions/{sid}/tasks", headers={"X-User-Id": "dave", "A2A-Version": "2.0"})
        assert bad.status_code == 400 and bad.json() == {
            "error": 'Unsupported A2A version: unsupported A2A version "2.0"'
        }
