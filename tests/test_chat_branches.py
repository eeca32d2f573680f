"""Redo, rewound turns, fork from a branch, rename/delete, export -- through Chat and the headless
commands, against a real embedded server on loopback (and, for what a server refuses or does not
offer, a loopback server replaying canned answers, asserting what was sent)."""

from __future__ import annotations

import ast
import json
from pathlib import Path

import pytest

from clirun import isolate, runner
from fakeserver import FakeServer, Reply
from kit.servers import chat_for, embedded_fixture
from rewindtui.a2a import contract
from rewindtui.chat import ANSWER_TAIL, Chat, RedoFailed, RewindOutcomeUnknown
from rewindtui.cli import main as cli
from rewindtui.client.a2a_client import REWIND_EXTENSION, A2AClient, ServerConfig, Unsupported
from rewindtui.output.export import json_document, markdown

CARD = "/.well-known/agent-card.json"


server = embedded_fixture("branches", scope="module")


def users(chat: Chat) -> list[str]:
    return [i.text for i in chat.conversation.items if i.role == "user" and i.rewound is None]


def seen(answer: str) -> tuple[list[str], int]:
    history = ast.literal_eval(answer.split("history: ", 1)[1].rsplit("; weather_calls", 1)[0])
    return history, int(answer.rsplit("weather_calls=", 1)[1].rstrip(")"))


def last_answer(chat: Chat) -> str:
    return next(i.text for i in reversed(chat.conversation.items) if i.role == "agent" and i.text)


async def three(chat: Chat) -> list[str]:
    for text in ("hello", "weather in Oslo", "third"):
        await chat.send(text)
    return chat.conversation.turn_invocations()


# -- redo through Chat ----------------------------------------------------------------------------
async def test_redo_brings_the_turns_and_the_state_back(server):
    chat = await chat_for(server)
    invocations = await three(chat)
    await chat.rewind(invocations[1])
    assert users(chat) == ["hello"]
    assert chat.why_not_redo() == "" and chat.permissions().can_restore
    await chat.redo()
    assert users(chat) == ["hello", "weather in Oslo", "third"]
    assert chat.conversation.turn_invocations() == invocations
    await chat.send("after")
    assert seen(last_answer(chat)) == (["hello", "weather in Oslo", "third", "after"], 1)
    with pytest.raises(RedoFailed, match="nothing to redo"):
        await chat.redo()  # a turn came after: nothing changed
    assert users(chat) == ["hello", "weather in Oslo", "third", "after"]
    await chat.client.aclose()


async def test_rewound_turns_shown_restored_and_forked(server):
    chat = await chat_for(server)
    invocations = await three(chat)
    await chat.rewind(invocations[1])
    await chat.send("other")
    shown = await chat.show_rewound()
    assert shown == 5  # the weather turn: question, tool call (its result folded in), answer; then 2
    rewound = [i for i in chat.conversation.items if i.rewound is not None]
    assert [i.text for i in rewound if i.role == "user"] == ["weather in Oslo", "third"]
    assert [i.text for i in chat.conversation.items if i.role == "user"] == [
        "hello",
        "weather in Oslo",
        "third",
        "other",
    ]
    assert users(chat) == ["hello", "other"]
    by = rewound[0].rewound.by
    assert by and all(i.rewound.by == by for i in rewound)

    # fork the branch up to and including "weather in Oslo": a new session, the original untouched
    weather = next(i for i in rewound if i.text == "weather in Oslo")
    original = chat.session_id
    forked = (await chat.fork_branch(weather.rewound.fork_before)).session
    assert forked is not None
    assert forked.raw[contract.SESSION_FORKED_FROM_FIELD] == original
    assert users(chat) == ["hello", "weather in Oslo"]
    await chat.send("in the fork")
    assert seen(last_answer(chat)) == (["hello", "weather in Oslo", "in the fork"], 1)

    # back in the original: bring the rewound branch back; "other" becomes a rewound branch
    await chat.open(original)
    await chat.redo(by)
    assert users(chat) == ["hello", "weather in Oslo", "third"]
    await chat.show_rewound()
    assert [i.text for i in chat.conversation.items if i.rewound is not None and i.role == "user"] == ["other"]
    chat.hide_rewound()
    assert not chat.conversation.shows_rewound
    await chat.client.aclose()


async def test_rename_and_delete(server):
    chat = await chat_for(server)
    await chat.send("to be renamed")
    sid = chat.session_id
    assert sid
    renamed = await chat.rename_session(sid, "Renamed")
    assert renamed.name == "Renamed" and chat.session is not None and chat.session.name == "Renamed"
    with pytest.raises(Unsupported, match="open session"):
        await chat.delete_session(sid)
    await chat.open(None)
    await chat.delete_session(sid)
    assert sid not in {s.id for s in await chat.list_sessions()}  # gone on the server, forgotten here
    await chat.client.aclose()


# -- servers that refuse, lose the answer, or do not offer redo ----------------------------------------
def _card(redo: bool, api: str) -> dict:
    params = {contract.PARAM_REWIND: [contract.MODE_REST], contract.PARAM_FORK: True, contract.PARAM_API: api}
    if redo:
        params[contract.PARAM_REDO] = True
    return {
        "name": "helper",
        "protocolVersion": "0.3.0",
        "capabilities": {"extensions": [{"uri": REWIND_EXTENSION, "params": params}]},
    }


async def _fake_chat(fake: FakeServer, *, redo: bool) -> Chat:
    fake.route("GET", CARD, Reply.json(_card(redo, fake.url + "/api")))
    fake.route("GET", "/api/sessions/s1", Reply.json({"error": False, "data": {"id": "s1", "name": "x"}}))
    tasks = {
        "error": False,
        "data": [
            {
                "kind": "task",
                "id": "t1",
                "status": {"state": "completed"},
                "history": [
                    {
                        "kind": "message",
                        "messageId": "m1",
                        "role": "user",
                        "parts": [{"kind": "text", "text": "hi"}],
                        "metadata": {"kagent_invocation_id": "e-1"},
                    }
                ],
            }
        ],
    }
    fake.route("GET", "/api/sessions/s1/tasks", Reply.json(tasks))
    client = A2AClient(ServerConfig(url=fake.url + "/"))
    await client.connect()
    chat = Chat(client)
    await chat.open("s1")
    return chat


def _redo_requests(fake: FakeServer) -> list:
    return [r for r in fake.requests if r.path.endswith("/redo")]


async def test_redo_is_not_sent_to_a_server_that_does_not_offer_it():
    with FakeServer() as fake:
        chat = await _fake_chat(fake, redo=False)
        reason = chat.why_not_redo()
        assert "does not offer redo" in reason and not chat.permissions().can_restore
        with pytest.raises(Unsupported, match="does not offer redo"):
            await chat.redo()
        assert _redo_requests(fake) == []
        await chat.client.aclose()


async def test_a_refused_redo_changes_nothing_and_a_lost_answer_rereads():
    with FakeServer() as fake:
        chat = await _fake_chat(fake, redo=True)
        before = [i.text for i in chat.conversation.items]
        fake.route("POST", "/api/sessions/s1/redo", Reply.json({"error": "nothing to redo"}, status=409))
        with pytest.raises(RedoFailed, match="nothing to redo"):
            await chat.redo()
        assert [i.text for i in chat.conversation.items] == before
        reads = len([r for r in fake.requests if r.path.endswith("/tasks") and "include_rewound" not in r.query])

        fake.route("POST", "/api/sessions/s1/redo", Reply.json({"error": "boom"}, status=502))
        with pytest.raises(RewindOutcomeUnknown, match="server's view is shown"):
            await chat.redo("r-1")
        assert json.loads(_redo_requests(fake)[-1].body) == {
            contract.REST_REDO_FIELD: "r-1",
            contract.REST_HISTORY_LENGTH_FIELD: ANSWER_TAIL,
        }
        assert (
            len([r for r in fake.requests if r.path.endswith("/tasks") and "include_rewound" not in r.query])
            == reads + 1
        )  # re-read (the undo page aside)
        assert not chat.rewinding
        await chat.client.aclose()


# -- export --------------------------------------------------------------------------------------
async def test_export_markdown_and_json(server):
    chat = await chat_for(server)
    invocations = await three(chat)
    await chat.rewind(invocations[2])
    await chat.show_rewound()
    items = chat.conversation.items
    md = markdown(items, session_id=chat.session_id, title="Weather", times=chat.conversation.task_times)
    assert md.startswith("# Weather\n")
    assert "### You\n\nweather in Oslo" in md
    assert '- tool `get_weather({"city": "Oslo"})`' in md
    assert "### You — rewound" in md and "(not part of the conversation)" in md
    assert md.count("\n---\n") == 3  # three turns shown: two current, one rewound
    doc = json.loads(
        json_document(items, session_id=chat.session_id, title="Weather", times=chat.conversation.task_times)
    )
    assert doc["session"] == {"id": chat.session_id, "name": "Weather"}
    assert [m["text"] for m in doc["messages"] if m["role"] == "user"] == ["hello", "weather in Oslo", "third"]
    assert [("rewound" in m) for m in doc["messages"] if m["role"] == "user"] == [False, False, True]
    assert all(m["time"] for m in doc["messages"])
    await chat.client.aclose()


def test_export_is_terminal_safe():
    from rewindtui.model import Conversation

    conversation = Conversation("s")
    conversation.load_tasks(
        [
            {
                "kind": "task",
                "id": "t",
                "status": {"state": "completed"},
                "history": [
                    {
                        "kind": "message",
                        "messageId": "m",
                        "role": "agent",
                        "parts": [{"kind": "text", "text": "hi \x1b]52;c;ZXZpbA==\x07 there\x1b[2J"}],
                    }
                ],
            }
        ]
    )
    md = markdown(conversation.items, session_id="s")
    assert "\x1b" not in md and "hi  there" in md
    assert "\\u001b" in json_document(conversation.items, session_id="s")


# -- the headless commands -----------------------------------------------------------------------------
@pytest.fixture
def run(capsys, server, tmp_path, monkeypatch):
    isolate(tmp_path, monkeypatch)
    return runner(capsys, "--url", server.agent_url, "--api", server.api_url)


def test_cli_redo_history_include_rewound_and_export(run, tmp_path: Path):
    first = run("send", "--json", "hello")
    sid = first.records()[0]["session"]
    run("send", "--session", sid, "weather in Oslo")
    invocations = [
        line.split()[2] for line in run("history", "--session", sid).lines if line.startswith("--- invocation")
    ]
    assert run("rewind", "--session", sid, "--before", invocations[1]).rc == 0

    history = run("history", "--session", sid, "--include-rewound")
    assert history.rc == 0
    opening = next(line for line in history.lines if line.startswith("=== rewound"))
    assert "not part of the conversation" in opening and "redo --rewind-task" in opening
    assert history.lines[history.lines.index(opening) + 2] == "user: weather in Oslo"
    records = run("history", "--session", sid, "--include-rewound", "--json").records()
    assert [r.get("rewound") is not None for r in records if r["role"] == "user"] == [False, True]
    assert "rewound" not in run("history", "--session", sid, "--json").records()[0]

    redo = run("redo", "--session", sid[:8], "--json")
    assert redo.rc == 0, redo.err
    header, *items = redo.records()
    assert header["session"] == sid and header["redo"]
    assert [i["text"] for i in items if i["role"] == "user"] == ["hello", "weather in Oslo"]
    again = run("redo", "--session", sid)
    assert again.rc == 1 and "nothing to redo" in again.err.lower() and again.out == ""

    out = tmp_path / "t.md"
    exported = run("export", "--session", sid, "--format", "md", "--output", str(out))
    assert exported.rc == 0 and exported.out == "" and str(out) in exported.err
    assert "### You\n\nweather in Oslo" in out.read_text()
    as_json = run("export", "--session", sid, "--format", "json")
    assert [m["text"] for m in json.loads(as_json.out)["messages"] if m["role"] == "user"] == [
        "hello",
        "weather in Oslo",
    ]


def test_cli_redo_on_a_server_without_redo_sends_nothing(capsys, tmp_path, monkeypatch):
    isolate(tmp_path, monkeypatch)
    with FakeServer() as fake:
        fake.route("GET", CARD, Reply.json(_card(False, fake.url + "/api")))
        rc = cli.main(["redo", "--session", "s1", "--url", fake.url + "/"])
        err = capsys.readouterr().err
        assert rc == 1 and "does not offer redo" in err
        assert [r.path for r in fake.requests] == [CARD]
