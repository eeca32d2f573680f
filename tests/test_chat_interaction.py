"""The interaction model's core, against a real embedded server on loopback: the one undo (what it
says, that it survives a restart, that it belongs to its session, that a send is never undone, that
an edit can be undone), stop keeping what came, approvals surviving rewind/undo/redo/reload, a
question's answer being part of its turn, the one permissions gate, and refusals in the app's
words."""

from __future__ import annotations

import asyncio

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kit.servers import chat_for, embedded_fixture
from rewindtui.chat import (
    QUESTION_FIRST,
    Action,
    Chat,
    Outcome,
    Permissions,
    QuestionWaiting,
    RedoFailed,
    UndoFailed,
)
from rewindtui.client.errors import APP, CLI, ClientError, user_message
from rewindtui.output.export import markdown
from rewindtui.output.turn_list import turn_entries

server = embedded_fixture("interaction", scope="module")


slow_server = embedded_fixture("interaction-slow", scope="module", demo_delay=0.1)


def users(chat: Chat) -> list[str]:
    return [i.text for i in chat.conversation.items if i.role == "user" and i.rewound is None and not i.is_answer]


async def sent(chat: Chat, *texts: str) -> list[str]:
    for text in texts:
        await chat.send(text)
    return chat.conversation.turn_invocations()


# -- the one undo ---------------------------------------------------------------------------------
async def test_a_rewind_says_what_undo_undoes_and_the_undo_survives_a_restart(server):
    chat = await chat_for(server)
    turns = await sent(chat, "one", "two", "three")
    assert chat.undo_label() is None and chat.why_not(Action.UNDO) == "nothing to undo"
    outcome = await chat.rewind(turns[1])
    assert isinstance(outcome, Outcome) and outcome.action is Action.REWIND
    assert (outcome.turns_gone, outcome.said) == (2, "Rewound 2 turns.")
    assert outcome.undo_label == chat.undo_label() == "undo the rewind of 2 turns"
    assert chat.permissions().undo_label == "undo the rewind of 2 turns"
    sid = chat.session_id
    await chat.client.aclose()

    again = await chat_for(server, sid)  # a restart: the undo is read from the server
    assert again.undo_label() == "undo the rewind of 2 turns"
    undone = await again.undo()
    assert undone.action is Action.UNDO and undone.turns_back == 2 and undone.undo_label is None
    assert users(again) == ["one", "two", "three"]
    assert again.undo_label() is None
    with pytest.raises(UndoFailed, match="nothing to undo"):
        await again.undo()
    await again.client.aclose()


async def test_a_send_is_never_undone_and_ends_the_rewinds_undo(server):
    chat = await chat_for(server)
    turns = await sent(chat, "one", "two")
    await chat.rewind(turns[1])
    assert chat.undo_label() == "undo the rewind of 1 turn"
    await chat.send("instead")
    assert chat.undo_label() is None  # the send is not undoable, and the rewind is done with
    with pytest.raises(UndoFailed):
        await chat.undo()
    assert users(chat) == ["one", "instead"]
    reread = await chat_for(server, chat.session_id)
    assert reread.undo_label() is None and users(reread) == ["one", "instead"]
    await chat.client.aclose()
    await reread.client.aclose()


async def test_an_edit_can_be_undone_and_the_edited_turn_becomes_a_branch(server):
    chat = await chat_for(server)
    turns = await sent(chat, "one", "two", "three")
    assert chat.begin_edit(turns[1]) == "two"
    outcome = await chat.send("two, edited")
    assert outcome is not None and outcome.action is Action.EDIT
    assert users(chat) == ["one", "two, edited"]
    label = chat.undo_label()
    assert label is not None and label.startswith("undo the edit (2 turns back")
    # after a restart too
    again = await chat_for(server, chat.session_id)
    assert again.undo_label() == label
    undone = await again.undo()
    assert users(again) == ["one", "two", "three"]
    assert undone.turns_back == 2 and undone.turns_gone == 1
    await again.show_rewound()
    rewound = [i.text for i in again.conversation.items if i.rewound is not None and i.role == "user"]
    assert "two, edited" in rewound  # nothing lost: the edited turn is a rewound branch
    await chat.client.aclose()
    await again.client.aclose()


async def test_the_undo_belongs_to_its_session(server):
    """Switching sessions never lets undo act on another session's rewind."""
    chat = await chat_for(server)
    a_turns = await sent(chat, "a1", "a2")
    await chat.rewind(a_turns[1])
    a = chat.session_id
    assert chat.undo_label() == "undo the rewind of 1 turn"

    await chat.open(None)  # a new session: nothing of A's to undo here
    assert chat.undo_label() is None
    with pytest.raises(UndoFailed):
        await chat.undo()
    b_turns = await sent(chat, "b1", "b2", "b3")
    b = chat.session_id
    assert chat.undo_label() is None  # A's rewind is not B's undo, even after B's sends
    await chat.rewind(b_turns[2])
    assert chat.undo_label() == "undo the rewind of 1 turn"
    await chat.undo()  # B's own
    assert users(chat) == ["b1", "b2", "b3"]

    a_view = await chat_for(server, a)
    assert users(a_view) == ["a1"]  # A was never touched
    assert a_view.undo_label() == "undo the rewind of 1 turn"
    await chat.open(a)  # back in A: its undo is there again, and acts on A only
    assert chat.undo_label() == "undo the rewind of 1 turn"
    await chat.undo()
    assert users(chat) == ["a1", "a2"]
    b_view = await chat_for(server, b)
    assert users(b_view) == ["b1", "b2", "b3"]
    for c in (chat, a_view, b_view):
        await c.client.aclose()


async def test_an_undo_offered_before_another_client_acted_undoes_nothing(server):
    chat = await chat_for(server)
    turns = await sent(chat, "one", "two")
    await chat.rewind(turns[1])
    other = await chat_for(server, chat.session_id)
    await other.send("from elsewhere")  # the session changed on the server since the label
    assert chat.undo_label() == "undo the rewind of 1 turn"
    with pytest.raises(UndoFailed, match="changed on the server"):
        await chat.undo()
    assert chat.undo_label() is None
    check = await chat_for(server, chat.session_id)
    assert users(check) == ["one", "from elsewhere"]
    for c in (chat, other, check):
        await c.client.aclose()


async def test_after_undoing_a_rewind_that_followed_an_edit_the_edits_undo_is_offered(server):
    """Edit, rewind, undo: the edit's undo is offered next, as a restart reads it (before: the undo
    point was read with the histories cut, and the turn after the undo's Task, whose messages say it
    is an edit's, was not read whole: nothing to undo, until a restart)."""
    chat = await chat_for(server)
    turns = await sent(chat, "t0", "t1")
    chat.begin_edit(turns[-1])
    await chat.send("e0")
    edit_label = chat.undo_label()
    assert edit_label is not None and edit_label.startswith("undo the edit")
    await chat.rewind(chat.conversation.turn_invocations()[-1])
    await chat.undo()
    assert users(chat) == ["t0", "e0"] and chat.undo_label() == edit_label
    restarted = await chat_for(server, chat.session_id)
    assert restarted.undo_label() == edit_label
    await chat.undo()
    assert users(chat) == ["t0", "t1"]
    for c in (chat, restarted):
        await c.client.aclose()


OPS = st.lists(st.sampled_from(["send", "rewind", "undo", "edit"]), min_size=1, max_size=5)


@settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(ops=OPS)
def test_undo_always_returns_to_the_turns_before_what_it_names(server, ops):
    """Any sequence of sends, rewinds, edits and undos: the label is what a restart reads too,
    and an undo brings back exactly the turns there were before the rewind or edit it names
    (rewinds in a row undo one by one, newest first; a send ends them all)."""

    async def run() -> None:
        chat = await chat_for(server)
        await sent(chat, "t0", "t1")
        undoable: list[list[str]] = []  # the turns before each rewind or edit that can be undone
        for n, op in enumerate(ops):
            turns = chat.conversation.turn_invocations()
            if op == "send":
                await chat.send(f"s{n}")
                undoable.clear()
            elif op in ("rewind", "edit") and turns:
                snapshot = users(chat)
                if op == "rewind":
                    await chat.rewind(turns[-1])
                else:
                    chat.begin_edit(turns[-1])
                    await chat.send(f"e{n}")
                undoable.append(snapshot)
            elif op == "undo":
                if chat.undo_label() is None:
                    with pytest.raises((UndoFailed, RedoFailed)):
                        await chat.undo()
                    continue
                await chat.undo()
                assert undoable and users(chat) == undoable.pop()
            assert (chat.undo_label() is None) == (not undoable)
            restarted = await chat_for(server, chat.session_id)
            assert restarted.undo_label() == chat.undo_label()
            await restarted.client.aclose()
        await chat.client.aclose()

    asyncio.run(run())


# -- stop keeps what came -------------------------------------------------------------------------
async def _stop_midway(chat: Chat) -> str:
    turn = asyncio.ensure_future(chat.send("tell me a long story about the sea and its ships"))
    for _ in range(400):
        await asyncio.sleep(0.02)
        live = [i for i in chat.conversation.items if i.role == "agent" and i.streaming and len(i.text) > 15]
        if live:
            break
    else:
        raise AssertionError("the reply never streamed")
    await chat.stop()
    await turn
    return live[0].text


async def test_stopping_keeps_the_streamed_reply_under_its_author(slow_server):
    chat = await chat_for(slow_server)
    await chat.send("hello")
    shown = await _stop_midway(chat)
    assert chat.conversation.turn_state == "canceled"
    reply = [i for i in chat.conversation.items if i.role == "agent"][-1]
    assert reply.author == "demo" and reply.stopped and reply.text.startswith(shown)
    assert not any(i.text == "The turn was canceled." for i in chat.conversation.items)
    # the server keeps it: a reload shows it the same way
    again = await chat_for(slow_server, chat.session_id)
    kept = [i for i in again.conversation.items if i.role == "agent"][-1]
    assert kept.author == "demo" and kept.stopped and kept.text.startswith(shown)
    await chat.client.aclose()
    await again.client.aclose()


@pytest.mark.parametrize("cancel_delay", [0.0, 0.5], ids=["cancel-at-once", "deltas-after-the-stop"])
async def test_a_stop_on_a_server_that_keeps_less_shows_its_text_and_what_was_shown(
    slow_server, monkeypatch, cancel_delay
):
    from rewindtui.server.service import turns

    async def keeps_nothing(self) -> None:  # fault injection: a server that stores no partial reply
        await self._finish("canceled", "The turn was canceled.")

    monkeypatch.setattr(turns._Turn, "_stopped", keeps_nothing)
    chat = await chat_for(slow_server)
    cancel = chat.client.cancel_task

    async def slow_cancel(task_id: str) -> object:  # the reply streams on while the cancel travels
        await asyncio.sleep(cancel_delay)
        return await cancel(task_id)

    monkeypatch.setattr(chat.client, "cancel_task", slow_cancel)
    shown = await _stop_midway(chat)
    task_id = next(i.task_id for i in reversed(chat.conversation.items) if i.role == "user")
    assert chat.conversation.stopped_shown[task_id] == shown
    note = chat.conversation.items[-1]
    assert note.text.startswith("Stopped. The server kept less") and note.text.endswith(shown)
    await chat.client.aclose()


# -- approvals ------------------------------------------------------------------------------------
async def test_a_question_survives_rewind_undo_redo_and_reload(server):
    chat = await chat_for(server)
    turns = await sent(chat, "hello", "delete temp.txt")
    assert chat.pending_confirmation() is not None and chat.permissions().can_confirm
    await chat.rewind(turns[1])
    assert chat.pending_confirmation() is None
    await chat.undo()
    assert chat.pending_confirmation() is not None, "the question is back with its turn"
    assert chat.permissions().allows(Action.ANSWER)
    reloaded = await chat_for(server, chat.session_id)
    assert reloaded.pending_confirmation() is not None
    await reloaded.rewind(turns[1])
    await reloaded.redo()
    assert reloaded.pending_confirmation() is not None
    await reloaded.confirm(True)
    assert reloaded.conversation.turn_state == "completed"
    assert "deleted" in [i for i in reloaded.conversation.items if i.role == "agent"][-1].text
    for c in (chat, reloaded):
        await c.client.aclose()


async def test_a_send_while_a_question_waits_says_how_to_answer_and_sends_nothing(server):
    chat = await chat_for(server)
    await sent(chat, "delete notes.txt")
    before = len(await chat.client.session_tasks(chat.session_id or ""))
    assert chat.why_not(Action.SEND) == QUESTION_FIRST
    with pytest.raises(QuestionWaiting) as info:
        await chat.send("what now?")
    assert user_message(info.value) == QUESTION_FIRST
    assert "--approve" in user_message(info.value, CLI)
    assert len(await chat.client.session_tasks(chat.session_id or "")) == before
    assert users(chat) == ["delete notes.txt"]
    status = chat.turn_status()  # the refusal changed nothing: the status is the turn's, not "failed"
    assert status.waiting and not status.failed and status.words == "a question waits for your answer"
    await chat.confirm(False)
    status = chat.turn_status()
    assert (status.state, status.failed, status.waiting, status.words) == ("completed", False, False, "")
    await chat.client.aclose()


async def test_an_answer_is_part_of_its_turn(server):
    chat = await chat_for(server)
    await sent(chat, "hello", "delete temp.txt")
    await chat.confirm(False)
    answer = next(i for i in chat.conversation.items if i.role == "user" and i.text == "Rejected")
    assert answer.is_answer and answer.rewind_target is None
    assert len(chat.conversation.turn_invocations()) == 2
    assert len(turn_entries(chat.conversation)) == 2
    doc = markdown(chat.conversation.items, session_id=chat.session_id)
    assert "· 2 turns ·" in doc and doc.count("---\n") == 2  # a rule before each turn, not before the answer
    await chat.client.aclose()


# -- the gate and the words -----------------------------------------------------------------------
async def test_the_gate_answers_for_every_action(slow_server):
    chat = await chat_for(slow_server)  # a reply that streams for a while: the busy gate is read during it
    perms = chat.permissions()
    assert isinstance(perms, Permissions)
    assert set(perms.reasons) == set(Action)
    assert perms.why_not(Action.STOP) == "no turn is running"
    assert perms.why_not(Action.SEND) == ""
    assert perms.why_not(Action.LOAD_OLDER) == "the whole session is shown"
    assert perms.why_not(Action.UNDO) != ""
    await sent(chat, "one")
    running = asyncio.ensure_future(chat.send("two"))
    deadline = asyncio.get_running_loop().time() + 30  # a loaded machine: the send's checks come first
    while not chat.sending and not running.done() and asyncio.get_running_loop().time() < deadline:
        await asyncio.sleep(0.01)
    assert chat.sending, "the send never started streaming"
    busy = chat.permissions()
    assert busy.busy_reason and busy.only_busy(Action.REWIND) and busy.why_not(Action.SEND) == busy.busy_reason
    assert busy.allows(Action.STOP) and busy.can_stop
    await running
    assert chat.permissions().can_rewind and chat.permissions().rewind_reason == ""
    await chat.client.aclose()


def test_known_refusals_are_said_in_the_apps_words():
    raw = (
        "not sent: the server refused the message: JSON-RPC error -32602: Task ac267c16-0b2e-4c1d-9a3f-1b2c3d4e5f60 "
        'waits for approval of a tool call: answer it with a data part {"decision_type": "approve"}'
    )
    assert user_message(ClientError(raw)) == "Answer the question first: alt+y approves, alt+n rejects."
    redo = RedoFailed(
        "redo refused: nothing to redo: no rewind is the last thing done on this session; the conversation is unchanged"
    )
    said = user_message(redo, APP)
    assert "F4 shows rewound turns; Restore brings one back" in said and "task id" not in said
    other = user_message(ClientError("JSON-RPC error -32001: Task ac267c16-0b2e-4c1d-9a3f-1b2c3d4e5f60 is completed"))
    assert "ac267c16" not in other and "JSON-RPC" not in other


async def test_the_servers_redo_refusal_names_no_task_id(server):
    chat = await chat_for(server)
    await sent(chat, "one")
    with pytest.raises(RedoFailed) as info:
        await chat.redo()
    assert "task id" not in str(info.value)
    assert "F4 shows rewound turns" in user_message(info.value)
    await chat.client.aclose()


async def test_restore_brings_a_rewound_branch_back_up_to_a_turn(server):
    chat = await chat_for(server)
    turns = await sent(chat, "one", "two", "three")
    await chat.rewind(turns[1])
    await chat.send("other")
    await chat.show_rewound()
    two = next(i for i in chat.conversation.items if i.rewound is not None and i.text == "two")
    assert two.rewound is not None and two.rewound.by
    outcome = await chat.restore(two.rewound.by, up_to=turns[2])  # "two" back, "three" stays rewound
    assert outcome.action is Action.RESTORE and not outcome.warning
    assert users(chat) == ["one", "two"]
    assert (outcome.turns_back, outcome.turns_gone) == (1, 1)  # "other" went to the rewound turns
    assert outcome.said == "1 turn back, with the agent's state as it was; 1 turn went to the rewound turns."
    await chat.client.aclose()
