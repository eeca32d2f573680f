"""Redo means redo: after the one undo, redo does the same thing again on the server -- the same
rewind, or the same restore -- and a restore of a rewound branch can be undone. A redo on a
session another client changed since the undo does nothing and says so. Core level: ``Chat``s on
the embedded server over loopback."""

from __future__ import annotations

import pytest

from kit.servers import chat_for, embedded_fixture
from rewindtui.chat import Action, Chat, RedoFailed
from rewindtui.chat.live import LiveWatch

server = embedded_fixture("redo-after-undo", scope="module")


def users(chat: Chat) -> list[str]:
    return [i.text for i in chat.conversation.items if i.role == "user" and i.rewound is None and not i.is_answer]


async def server_users(server, chat: Chat) -> list[str]:
    check = await chat_for(server, chat.session_id)
    try:
        return users(check)
    finally:
        await check.client.aclose()


async def test_redo_after_undo_rewinds_the_server_again_and_undo_redo_cycle(server) -> None:
    chat = await chat_for(server)
    for text in ("one", "two", "three"):
        await chat.send(text)
    turns = chat.conversation.turn_invocations()
    await chat.rewind(turns[1])
    assert chat.why_not(Action.REAPPLY).startswith("nothing to redo")
    undone = await chat.undo()
    assert undone.turns_back == 2 and users(chat) == ["one", "two", "three"]
    assert chat.redo_label() == "redo the rewind of 2 turns"
    assert chat.permissions().redo_label == "redo the rewind of 2 turns"

    redone = await chat.reapply()
    assert redone.action is Action.REAPPLY and redone.turns_gone == 2
    assert redone.said == "Redid the rewind: 2 turns rewound again."
    assert users(chat) == ["one"]
    assert await server_users(server, chat) == ["one"]  # the server rewound again, not only the view
    assert chat.redo_label() is None and chat.undo_label() == "undo the rewind of 2 turns"

    await chat.undo()  # and round again: ctrl+z, ctrl+r, ctrl+z ...
    assert await server_users(server, chat) == ["one", "two", "three"]
    await chat.send("four")  # a new turn: what was undone stays undone
    assert chat.redo_label() is None
    with pytest.raises(RedoFailed, match="nothing to redo"):
        await chat.reapply()
    await chat.client.aclose()


async def test_a_redo_after_another_client_changed_the_session_does_nothing(server) -> None:
    chat = await chat_for(server)
    for text in ("one", "two", "three"):
        await chat.send(text)
    await chat.rewind(chat.conversation.turn_invocations()[2])
    await chat.undo()
    assert chat.redo_label() == "redo the rewind of 1 turn"

    other = await chat_for(server, chat.session_id)
    await other.send("from elsewhere")
    with pytest.raises(RedoFailed) as refused:
        await chat.reapply()
    assert "nothing was" in str(refused.value)
    assert chat.redo_label() is None
    assert await server_users(server, chat) == ["one", "two", "three", "from elsewhere"]  # nothing rewound
    assert users(chat) == ["one", "two", "three", "from elsewhere"]  # the view was re-read
    for c in (chat, other):
        await c.client.aclose()


async def test_redo_is_not_offered_once_the_view_shows_another_clients_change(server) -> None:
    """The live view re-reads the session after another client's turn: the redo the undo left
    would only be refused now, so the status line no longer offers it (nor does the gate)."""
    chat = await chat_for(server)
    for text in ("one", "two"):
        await chat.send(text)
    await chat.rewind(chat.conversation.turn_invocations()[1])
    await chat.undo()
    assert chat.permissions().redo_label == "redo the rewind of 1 turn"

    other = await chat_for(server, chat.session_id)
    await other.send("from elsewhere")
    followed = await LiveWatch(chat).check()  # what the app's live view runs while idle
    assert followed is not None and followed.came == 1
    assert chat.redo_label() is None and chat.permissions().redo_label is None
    assert chat.why_not(Action.REAPPLY) == "nothing to redo: the session changed since the undo"
    with pytest.raises(RedoFailed, match="changed since the undo"):
        await chat.reapply()
    assert await server_users(server, chat) == ["one", "two", "from elsewhere"]  # nothing rewound
    for c in (chat, other):
        await c.client.aclose()


async def test_the_redo_offer_does_not_walk_the_view_on_every_ask(server, monkeypatch) -> None:
    """The gate is asked for every key the footer shows; whether the redo is stale compares the
    view's turns (a walk over all its items: 20 ms at 50,000 messages) only when the view changed."""
    chat = await chat_for(server)
    for text in ("one", "two"):
        await chat.send(text)
    await chat.rewind(chat.conversation.turn_invocations()[1])
    await chat.undo()
    walks: list[int] = []
    conversation_type = type(chat.conversation)
    walk = conversation_type.turn_invocations
    monkeypatch.setattr(conversation_type, "turn_invocations", lambda self: walks.append(1) or walk(self))
    for _ in range(50):
        assert chat.permissions().redo_label == "redo the rewind of 1 turn"
    assert len(walks) <= 1
    await chat.open(chat.session_id)  # a re-read: a new view, looked at once
    assert chat.permissions().redo_label == "redo the rewind of 1 turn" and len(walks) <= 2
    await chat.client.aclose()


async def test_a_restore_can_be_undone_and_redone(server) -> None:
    chat = await chat_for(server)
    for text in ("one", "two", "three"):
        await chat.send(text)
    await chat.rewind(chat.conversation.turn_invocations()[1])
    await chat.show_rewound()
    by = next(i.rewound.by for i in chat.conversation.items if i.rewound is not None)
    assert by
    restored = await chat.restore(by)
    assert restored.turns_back == 2 and users(chat) == ["one", "two", "three"]
    assert chat.undo_label() == "undo the restore of 2 turns"

    undone = await chat.undo()
    assert undone.said == "Undid the restore: 2 turns went back to the rewound turns."
    assert await server_users(server, chat) == ["one"]
    assert chat.redo_label() == "redo the restore of 2 turns"

    await chat.reapply()
    assert await server_users(server, chat) == ["one", "two", "three"]
    assert chat.undo_label() == "undo the restore of 2 turns"
    await chat.client.aclose()


async def test_the_gate_holds_retry(server) -> None:
    chat = await chat_for(server)
    await chat.send("one")
    assert chat.why_not(Action.RETRY) == "nothing to retry: the last turn did not fail"
    await chat.client.aclose()
