"""The kagent 1.0 profile through what the app and the commands use: ``connect()`` picks it when the
controller answers kagent 1.0's gRPC API (or ``kagent_version = "1"``), the Chat sends turns over
A2A, rewinds by forking from a checkpoint and undoes by going back to the original, and the
headless commands list and read sessions -- against the controller double and the embedded agent."""

from __future__ import annotations

import pytest

from clirun import Result, isolate
from rewindtui.chat import Chat, RewindFailed, TurnRefused
from rewindtui.chat.kagent1_hook import rewind_preview
from rewindtui.cli import main as cli
from rewindtui.config.connection import connect
from rewindtui.config.kagent1_profile import kagent1_client
from rewindtui.config.settings import load_settings
from rewindtui.kagent1.client import Kagent1Client
from rewindtui.model import ItemKind

AGENT = "kagent/helper"


@pytest.fixture(autouse=True)
def isolated(tmp_path, monkeypatch):
    isolate(tmp_path, monkeypatch)


def settings_for(base: str, **more: str):
    return load_settings({"kagent": base, "agent": AGENT, "user_id": "alice", **more})


def users(chat: Chat) -> list[str]:
    return [i.text for i in chat.conversation.items if i.kind is ItemKind.MESSAGE and i.role == "user"]


def last_answer(chat: Chat) -> str:
    return [i.text for i in chat.conversation.items if i.kind is ItemKind.MESSAGE and i.role == "agent"][-1]


async def test_the_profile_is_chosen_when_the_controller_answers(kagent1):
    double, base = kagent1
    conn = await connect(settings_for(base))
    try:
        assert isinstance(conn.client, Kagent1Client)
        assert conn.client.url.endswith("/agents/kagent/helper/")
        assert conn.capabilities.can_rewind and conn.capabilities.redo
    finally:
        await conn.aclose()
    assert await kagent1_client(settings_for(base, kagent_version="0.10")) is None  # the 0.10 REST profile, as told


async def test_a_0_10_controller_is_not_taken_for_1_0(tmp_path):
    """The 0.10 double (release/v0.10.x) answers the gRPC-Web probe with gorilla's 404."""
    import sys
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "kagent"))
    from kagent_double import Agent, KagentController

    from asgi_thread import ServeInThread

    with ServeInThread(KagentController({}).app()) as served:
        assert await kagent1_client(load_settings({"kagent": served.url, "agent": AGENT})) is None
    assert Agent  # the double's agent row type is what conftest builds from


async def test_chat_rewind_is_a_fork_and_undo_goes_back(kagent1):
    double, base = kagent1
    conn = await connect(settings_for(base))
    try:
        chat = await chat_after(conn, ["one", "two", "three"])
        original = chat.session_id
        assert original in double.sessions
        turns = chat.conversation.turn_invocations()
        assert rewind_preview(3) == "kagent forks: a new session from turn 2; the original is kept"
        await chat.rewind(turns[2])
        assert chat.session_id != original and chat.session_id in double.sessions
        assert users(chat) == ["one", "two"]
        await chat.send("again")
        assert "history: ['one', 'two', 'again']" in last_answer(chat)  # the agent saw the history before turn 3
        await chat.redo()  # undo: back to the original, kept as it was
        assert chat.session_id == original and users(chat) == ["one", "two", "three"]
        assert isinstance(conn.client, Kagent1Client) and "fork" in conn.client.rewinder.costs()
    finally:
        await conn.aclose()


async def test_a_failed_fork_leaves_the_view_unchanged_with_the_reason(kagent1):
    double, base = kagent1
    conn = await connect(settings_for(base))
    try:
        chat = await chat_after(conn, ["one", "two"])
        sid = chat.session_id
        shown = [(i.key, i.text) for i in chat.conversation.items]
        double.fail_next_fork = "out of sandbox capacity"
        with pytest.raises(RewindFailed) as info:
            await chat.rewind(chat.conversation.turn_invocations()[1])
        assert "out of sandbox capacity" in str(info.value) and str(info.value).endswith(
            "the conversation is unchanged"
        )
        assert chat.session_id == sid and [(i.key, i.text) for i in chat.conversation.items] == shown
    finally:
        await conn.aclose()


async def test_auto_checkpoints_off_offers_only_existing_checkpoints(kagent1):
    double, base = kagent1
    conn = await connect(settings_for(base, kagent_checkpoints="false"))
    try:
        chat = await chat_after(conn, ["one", "two"])
        assert not [c for c in double.checkpoints.values() if c.session_id == chat.session_id]
        with pytest.raises(RewindFailed, match="auto-checkpoints are off"):
            await chat.rewind(chat.conversation.turn_invocations()[1])
        assert users(chat) == ["one", "two"]
    finally:
        await conn.aclose()


async def test_a_read_only_share_opens_read_only(kagent1):
    double, base = kagent1
    conn = await connect(settings_for(base))
    try:
        chat = Chat(conn.client)
        await chat.open(None)
        await chat.send("one")
        sid = chat.session_id
        assert isinstance(conn.client, Kagent1Client)
        token = (await conn.client.kagent1.share(sid, read_only=True))[1]
    finally:
        await conn.aclose()
    client = await kagent1_client(
        load_settings({"kagent": base, "agent": AGENT, "user_id": "carol"}), share_token=token
    )
    assert client is not None
    try:
        assert isinstance(client, Kagent1Client) and client.read_only
        chat = Chat(client)
        before = len(double.a2a_headers)
        await chat.open(sid)
        assert users(chat) == ["one"]
        # the share rides in X-Share-Token beside the user, never as a credential; every A2A call
        # asks for kagent's human-in-the-loop extension, as kagent's UI does
        read = double.a2a_headers[before:]
        assert read and all(h.get("x-share-token") == token and h.get("x-user-id") == "carol" for h in read)
        assert all(token not in h.get("authorization", "") for h in read)
        assert all(h.get("a2a-extensions") == "https://kagent.dev/extensions/hitl/v1" for h in read)
        with pytest.raises(TurnRefused, match="not sent: this session was opened from a read-only share"):
            await chat.send("two")
        assert users(chat) == ["one"]
    finally:
        await client.aclose()


async def chat_after(conn, texts: list[str]) -> Chat:
    """A new session on the connection with these turns sent."""
    chat = Chat(conn.client)
    await chat.open(None)
    for text in texts:
        await chat.send(text)
    return chat


def run(capsys, *argv: str, base: str) -> Result:
    capsys.readouterr()
    rc = cli.main([*argv, "--kagent", base, "--agent", AGENT, "--user-id", "dora"])
    out, err = capsys.readouterr()
    return Result(rc, out, err)


def test_headless_commands_on_kagent_1(capsys, kagent1):
    double, base = kagent1
    sent = run(capsys, "send", "--json", "hello kagent one", base=base)
    assert sent.rc == 0, sent.err
    session = sent.records()[0]["session"]
    assert session in double.sessions and double.sessions[session].name == "hello kagent one"
    listed = run(capsys, "sessions", "--json", base=base)
    assert listed.rc == 0, listed.err
    assert session in [r["id"] for r in listed.records()]
    history = run(capsys, "history", "--json", "--session", session, base=base)
    assert history.rc == 0, history.err
    assert [r["role"] for r in history.records()] == ["user", "agent"]


async def test_edit_is_a_fork_then_send(kagent1):
    double, base = kagent1
    conn = await connect(settings_for(base))
    try:
        chat = await chat_after(conn, ["one", "two", "three"])
        original = chat.session_id
        await chat.rewind(chat.conversation.turn_invocations()[1], "edited")
        assert chat.session_id != original and users(chat) == ["one", "edited"]
        assert "history: ['one', 'edited']" in last_answer(chat)
        # the fork got its own checkpoint after the new turn: it can be rewound in turn
        assert [c for c in double.checkpoints.values() if c.session_id == chat.session_id]
    finally:
        await conn.aclose()


async def test_a_session_that_fails_to_be_created_says_why(kagent1):
    double, base = kagent1
    conn = await connect(settings_for(base))
    try:
        double.fail_next_create = ("SandboxUnavailable", "no sandbox capacity in namespace kagent")
        chat = Chat(conn.client)
        await chat.open(None)
        with pytest.raises(TurnRefused) as info:
            await chat.send("hello")
        assert "no sandbox capacity in namespace kagent" in str(info.value)
        assert users(chat) == []  # nothing shown that the server does not have
    finally:
        await conn.aclose()


def test_sessions_says_which_are_suspended(capsys, kagent1):
    import asyncio

    from rewindtui.kagent1.controller import Kagent1Controller

    double, base = kagent1

    async def made() -> tuple[str, str]:
        async with Kagent1Controller(base, user_id="dora") as c:
            asleep = await c.wait_ready((await c.create_session(AGENT, name="asleep")).id)
            awake = await c.wait_ready((await c.create_session(AGENT, name="awake")).id)
            await c.suspend(asleep.id)
            return asleep.id, awake.id

    asleep, awake = asyncio.run(made())
    listed = run(capsys, "sessions", base=base)
    assert listed.rc == 0, listed.err
    lines = {line.split()[0]: line for line in listed.out.splitlines()}
    assert lines[asleep].endswith("asleep  (suspended)")
    assert lines[awake].endswith("awake")
    records = {r["id"]: r for r in run(capsys, "sessions", "--json", base=base).records()}
    assert records[asleep]["state"] == "suspended" and records[awake]["state"] == "ready"


def test_share_flag_and_setting_open_a_shared_session_read_only(capsys, kagent1, tmp_path):
    import asyncio

    double, base = kagent1

    async def shared() -> tuple[str, str]:
        conn = await connect(settings_for(base))
        try:
            chat = await chat_after(conn, ["one"])
            assert isinstance(conn.client, Kagent1Client) and chat.session_id
            return chat.session_id, (await conn.client.kagent1.share(chat.session_id, read_only=True))[1]
        finally:
            await conn.aclose()

    sid, token = asyncio.run(shared())
    history = run(capsys, "history", "--json", "--session", sid, "--share", token, base=base)  # dora reads alice's
    assert history.rc == 0, history.err
    assert [r["text"] for r in history.records() if r["role"] == "user"] == ["one"]
    refused = run(capsys, "send", "--session", sid, "--share", token, "two", base=base)
    assert refused.rc != 0 and "read-only share" in refused.err
    without = run(capsys, "history", "--json", "--session", sid, base=base)
    assert without.rc != 0  # not dora's session without the share
    config = tmp_path / "shared.toml"
    config.write_text(f'kagent_share = "{token}"\n')
    from_file = run(capsys, "history", "--json", "--session", sid, "--config", str(config), base=base)
    assert from_file.rc == 0, from_file.err
    sent = double.calls.count("CreateCheckpoint")
    assert run(capsys, "send", "--session", sid, "--config", str(config), "two", base=base).rc != 0
    assert double.calls.count("CreateCheckpoint") == sent  # nothing was sent, nothing checkpointed


def test_headless_rewind_then_redo_in_another_process_goes_back_to_the_original(capsys, kagent1):
    """Each command is a new client: only the fork records under the data dir say where the fork
    came from."""
    double, base = kagent1
    first = run(capsys, "send", "--json", "one", base=base)
    sid = first.records()[0]["session"]
    assert run(capsys, "send", "--json", "--session", sid, "two", base=base).rc == 0
    turns = [
        r["invocation_id"]
        for r in run(capsys, "history", "--json", "--session", sid, base=base).records()
        if r["role"] == "user"
    ]
    rewound = run(capsys, "rewind", "--json", "--session", sid, "--before", turns[1], base=base)
    assert rewound.rc == 0, rewound.err
    header = rewound.records()[0]
    fork, undo = header["session"], header["undo"]
    assert (
        fork != sid
        and fork in double.sessions
        and undo.startswith(f"rewindtui redo --session {fork[:8]} --rewind-task {sid[:8]}")
    )
    again = run(capsys, "redo", *undo.split()[2:], base=base)  # the printed undo, as given
    assert again.rc == 0, again.err
    assert f"session: {sid}" in again.out and "to undo this redo" not in again.err
    assert [line for line in again.out.splitlines() if "one" in line or "two" in line]


async def test_the_status_words_say_when_the_last_turn_got_no_checkpoint(kagent1):
    double, base = kagent1
    conn = await connect(settings_for(base))
    try:
        chat = await chat_after(conn, ["one"])
        assert chat.rewind_words().startswith("fork · 1 checkpoint, ")
        await chat.send("please delete notes.txt")  # the agent asks for approval: the turn is not finished
        assert chat.conversation.pending_confirmation() is not None
        assert chat.rewind_words().endswith(" · the last turn has no checkpoint")
        assert isinstance(conn.client, Kagent1Client) and "input-required" in conn.client.checkpoint_notes[-1]
    finally:
        await conn.aclose()


def test_kagent_command_lists_renames_forks_deletes_checkpoints_and_manages_shares(capsys, kagent1):
    """kagent 1.0's UI, headless: `rewindtui kagent ...`."""
    double, base = kagent1
    sent = run(capsys, "send", "--json", "one", base=base)
    sid = sent.records()[0]["session"]
    assert run(capsys, "send", "--session", sid, "two", base=base).rc == 0
    listed = run(capsys, "kagent", "checkpoints", "--session", sid, "--json", base=base)
    assert listed.rc == 0, listed.err
    rows = listed.records()
    assert [(r["after_turn"], r["name"], r["state"]) for r in rows] == [
        (1, "After turn 1", "ready"),
        (2, "After turn 2", "ready"),
    ]
    first = rows[0]["id"]
    renamed = run(capsys, "kagent", "rename-checkpoint", first[:8], "before the detour", "--session", sid, base=base)
    assert renamed.rc == 0 and renamed.out.strip() == f"checkpoint {first[:8]} is now named 'before the detour'"
    assert double.checkpoints[first].name == "before the detour"
    forked = run(capsys, "kagent", "fork", first[:8], "--session", sid, "--json", base=base)
    assert forked.rc == 0, forked.err
    fork = forked.records()[0]["session"]
    assert fork != sid and double.forked_from[fork] == first
    redo = run(capsys, "redo", "--session", fork, base=base)  # undo the fork: back to the original
    assert redo.rc == 0, redo.err
    unknown = run(capsys, "kagent", "delete-checkpoint", "zzzz", "--session", sid, base=base)
    assert unknown.rc != 0 and "no checkpoint of this session is 'zzzz'" in unknown.err
    second = rows[1]["id"]
    assert run(capsys, "kagent", "delete-checkpoint", second, "--session", sid, base=base).rc == 0
    assert second not in double.checkpoints
    made = run(capsys, "kagent", "share", "--session", sid, "--json", base=base).records()[0]
    assert made["permission"] == "read-only" and made["token"]
    shares = run(capsys, "kagent", "shares", "--session", sid, "--json", base=base).records()
    assert [s["id"] for s in shares] == [made["id"]]
    assert run(capsys, "kagent", "revoke", made["id"][:8], "--session", sid, base=base).rc == 0
    assert run(capsys, "kagent", "shares", "--session", sid, base=base).out == "no shares of this session\n"
