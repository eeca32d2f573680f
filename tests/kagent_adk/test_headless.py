"""rewindtui's headless commands and its Chat (the code the app and the commands share) against
the real kagent-adk 0.10.4 runtime, with and without the kagent-rewind add-on.

kagent-adk serves A2A 0.3 only (``message/stream``, ``tasks/get``; no session or task listing), so
a session's history is read back with ``tasks/get`` on the task ids rewindtui's local sessions
store remembered for it.
"""

from __future__ import annotations

import json
from typing import Any

import httpx
import pytest

from kagent_adk.kagent_proc import REWIND_KEY, KagentAgent
from rewindtui.chat import Chat, RedoFailed, RewindFailed
from rewindtui.cli import main as cli
from rewindtui.client.a2a_client import A2AClient, ServerConfig, Unsupported
from rewindtui.model import Conversation, ItemKind


def run_cli(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, list[Any], str]:
    code = cli.main(list(args))
    out, err = capsys.readouterr()
    return code, [json.loads(line) for line in out.splitlines() if line.startswith("{")], err


def send(capsys: pytest.CaptureFixture[str], url: str, text: str, session: str | None = None) -> tuple[str, list[Any]]:
    args = ["send", "--url", url, "--json"] + (["--session", session] if session else []) + [text]
    code, records, err = run_cli(capsys, *args)
    assert code == 0, err
    return records[0]["session"], records[1:]


def three_turns_headless(capsys: pytest.CaptureFixture[str], url: str) -> tuple[str, list[str], list[Any]]:
    session, turn = send(capsys, url, "first")
    invocations = [turn[0]["invocation_id"]]
    for text in ("weather in Oslo", "third"):
        _, turn = send(capsys, url, text, session)
        invocations.append(turn[-1]["invocation_id"])
    return session, invocations, turn


# -- headless commands ---------------------------------------------------------------------------
def test_headless_send_three_turns(capsys: pytest.CaptureFixture[str], with_addon: KagentAgent) -> None:
    control = len(with_addon.control_messages())
    session, invocations, last = three_turns_headless(capsys, with_addon.url)
    assert len(set(invocations)) == 3 and all(inv.startswith("e-") for inv in invocations)
    assert [r["text"] for r in last] == [
        "third",
        "You said: third (turn 3; history: ['first', 'weather in Oslo', 'third']; weather_calls=1)",
    ]
    assert len(with_addon.control_messages()) == control


def test_headless_rewind_history_and_rewind_and_send(
    capsys: pytest.CaptureFixture[str], with_addon: KagentAgent
) -> None:
    session, invocations, _ = three_turns_headless(capsys, with_addon.url)
    code, records, err = run_cli(
        capsys, "rewind", "--url", with_addon.url, "--session", session, "--before", invocations[1], "--json"
    )
    assert code == 0, err
    assert [r["text"] for r in records[1:] if r["role"] == "user"] == ["first"]
    _, turn = send(capsys, with_addon.url, "again", session)
    assert turn[-1]["text"] == "You said: again (turn 2; history: ['first', 'again']; weather_calls=0)"
    code, records, err = run_cli(capsys, "history", "--url", with_addon.url, "--session", session, "--json")
    assert code == 0 and [r["text"] for r in records if r["role"] == "user"] == ["first", "again"], err
    code, records, err = run_cli(
        capsys,
        "rewind",
        "--url",
        with_addon.url,
        "--session",
        session,
        "--before",
        turn[-1]["invocation_id"],
        "--text",
        "weather in Lima",
        "--json",
    )
    assert code == 0, err
    assert "'city': 'Lima'" in records[-1]["text"] and "weather_calls=1" in records[-1]["text"]


def test_headless_rewind_without_the_add_on_sends_nothing(
    capsys: pytest.CaptureFixture[str], without_addon: KagentAgent
) -> None:
    session, invocations, _ = three_turns_headless(capsys, without_addon.url)
    code, _, err = run_cli(
        capsys, "rewind", "--url", without_addon.url, "--session", session, "--before", invocations[1]
    )
    assert code == 1 and err.startswith("rewindtui: error:")
    assert without_addon.control_messages() == []
    _, turn = send(capsys, without_addon.url, "again", session)
    assert "history: ['first', 'weather in Oslo', 'third', 'again']" in turn[-1]["text"]


# -- Chat: the app's and the commands' operations -------------------------------------------------
def users(chat: Chat) -> list[str]:
    return [it.text for it in chat.conversation.items if it.kind is ItemKind.MESSAGE and it.role == "user"]


def last_answer(chat: Chat) -> str:
    return [it.text for it in chat.conversation.items if it.kind is ItemKind.MESSAGE and it.role == "agent"][-1]


async def three_turns(chat: Chat) -> list[str]:
    await chat.open(None)
    for text in ("first", "weather in Oslo", "third"):
        await chat.send(text)
    return chat.conversation.turn_invocations()


def tasks_get(url: str, task_id: str) -> dict[str, Any]:
    """A2A 0.3 ``tasks/get`` (all kagent-adk offers to read a task back)."""
    body = {"jsonrpc": "2.0", "id": "1", "method": "tasks/get", "params": {"id": task_id}}
    result: dict[str, Any] = httpx.post(url, json=body, timeout=30).json()["result"]
    return result


async def test_rewind_before_turn_two(with_addon: KagentAgent) -> None:
    async with A2AClient(ServerConfig(url=with_addon.url)) as client:
        chat = Chat(client)
        invocations = await three_turns(chat)
        assert client.capabilities is not None and client.capabilities.rewind_mode == "a2a"
        sent_before = len(with_addon.control_messages())
        await chat.rewind(invocations[1])
        assert users(chat) == ["first"]
        assert last_answer(chat) == "You said: first (turn 1; history: ['first']; weather_calls=0)"
        # every message left can be rewound from, the user's too
        assert chat.conversation.turn_invocations() == invocations[:1]
        assert all(it.invocation_id == invocations[0] for it in chat.conversation.items)
        control = with_addon.control_messages()[sent_before:]
        assert len(control) == 1 and control[0]["metadata"][REWIND_KEY] == invocations[1]
        assert control[0]["contextId"] == chat.session_id and "taskId" not in control[0]
        # the model no longer sees turns 2-3, and the tool's state went back
        await chat.send("again")
        assert last_answer(chat) == "You said: again (turn 2; history: ['first', 'again']; weather_calls=0)"


async def test_the_rewind_task_reads_back_as_the_rewound_view(with_addon: KagentAgent) -> None:
    async with A2AClient(ServerConfig(url=with_addon.url)) as client:
        chat = Chat(client)
        invocations = await three_turns(chat)
        await chat.rewind(invocations[1])
        rewind_task_id = chat.conversation.current_task_id
        assert rewind_task_id is not None
    reloaded = Conversation(chat.session_id)
    reloaded.load_tasks([tasks_get(with_addon.url, rewind_task_id)])
    assert [(it.role, it.text) for it in reloaded.items] == [(it.role, it.text) for it in chat.conversation.items]


async def test_rewind_and_send(with_addon: KagentAgent) -> None:
    async with A2AClient(ServerConfig(url=with_addon.url)) as client:
        chat = Chat(client)
        invocations = await three_turns(chat)
        await chat.rewind(invocations[1], "weather in Lima")
        assert users(chat) == ["first", "weather in Lima"]
        assert last_answer(chat) == (
            "Tool get_weather returned: {'city': 'Lima', 'forecast': 'sunny', 'call_no': 1} (weather_calls=1)"
        )
        assert chat.conversation.turn_state == "completed"
        await chat.send("next")
        assert "history: ['first', 'weather in Lima', 'next']; weather_calls=1" in last_answer(chat)


async def test_a_refused_rewind_rolls_the_view_back_and_changes_nothing(with_addon: KagentAgent) -> None:
    async with A2AClient(ServerConfig(url=with_addon.url)) as client:
        chat = Chat(client)
        await three_turns(chat)
        # an id the server does not know for this session: the server refuses, the view comes back
        item = chat.conversation.items[2]
        item.invocation_id = "e-not-an-invocation-of-this-session"
        before = [(it.key, it.text) for it in chat.conversation.items]
        with pytest.raises(RewindFailed, match="is not an invocation of this session"):
            await chat.rewind(item.invocation_id)
        assert [(it.key, it.text) for it in chat.conversation.items] == before
        await chat.send("fourth")
        assert "history: ['first', 'weather in Oslo', 'third', 'fourth']; weather_calls=1" in last_answer(chat)


async def test_without_the_add_on_rewind_is_disabled_and_nothing_is_sent(without_addon: KagentAgent) -> None:
    async with A2AClient(ServerConfig(url=without_addon.url)) as client:
        chat = Chat(client)
        invocations = await three_turns(chat)
        assert client.capabilities is not None and not client.capabilities.can_rewind
        shown = [(it.key, it.text) for it in chat.conversation.items]
        with pytest.raises(Unsupported, match="does not support rewind"):
            await chat.rewind(invocations[1])
        with pytest.raises(Unsupported):
            chat.begin_edit(invocations[1])
        assert [(it.key, it.text) for it in chat.conversation.items] == shown
    assert without_addon.control_messages() == []


async def test_another_client_rewound_first_the_refusal_reads_once_and_the_view_is_re_read(
    with_addon: KagentAgent, tmp_path: Any
) -> None:
    """Two clients on one session: B rewinds a turn A already rewound away. The add-on refuses
    (``invalid_invocation``); B says so once and shows the server's conversation, not the dropped turn."""
    config = ServerConfig(url=with_addon.url, local_store=tmp_path / "sessions.db")
    async with A2AClient(config) as one, A2AClient(config) as two:
        a = Chat(one)
        invocations = await three_turns(a)
        b = Chat(two)
        await b.open(a.session_id)
        assert users(b) == ["first", "weather in Oslo", "third"]
        await a.rewind(invocations[1])
        with pytest.raises(RewindFailed) as info:
            await b.rewind(invocations[2])
        said = str(info.value)
        assert said.count("rewind refused") == 1 and "was already rewound" in said, said
        assert said.endswith("the server's conversation is shown now")
        assert users(b) == ["first"]


async def test_redo_brings_the_rewound_turns_back(with_addon: KagentAgent) -> None:
    """The add-on's redo (advertised in its card): the control message naming the rewind's own
    event; ADK's rewind_async before it gives the model the rewound turns again, state included,
    and the stored tasks read back as the whole conversation."""
    async with A2AClient(ServerConfig(url=with_addon.url)) as client:
        chat = Chat(client)
        invocations = await three_turns(chat)
        assert client.capabilities is not None and client.capabilities.redo
        await chat.rewind(invocations[1])
        assert users(chat) == ["first"]
        rewind_task_id = chat.conversation.current_task_id
        await chat.redo()
        assert users(chat) == ["first", "weather in Oslo", "third"]
        control = with_addon.control_messages()[-1]
        assert control["metadata"][REWIND_KEY] != invocations[1]  # the rewind's own invocation
        await chat.send("fourth")
        assert "history: ['first', 'weather in Oslo', 'third', 'fourth']; weather_calls=1" in last_answer(chat)
        # a second redo of the same rewind: nothing left to undo, said once, nothing changed
        shown = [(it.key, it.text) for it in chat.conversation.items]
        with pytest.raises(RedoFailed) as info:
            await chat.redo(rewind_task_id)
        assert str(info.value).count("redo refused") == 1 and "nothing to redo" in str(info.value)
        assert [(it.key, it.text) for it in chat.conversation.items] == shown
