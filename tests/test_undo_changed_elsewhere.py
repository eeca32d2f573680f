"""The one undo checks the server first: when another client made a *different* rewind after the
undo's label was read, the undo undoes nothing, says what the server holds now, the view is re-read
from the server, and the session stays as the other client left it. (Another client's send -- "nothing
to undo now" -- is
``test_an_undo_offered_before_another_client_acted_undoes_nothing`` in test_chat_interaction.py.)
Core level: two ``Chat``s on the embedded server over loopback."""

from __future__ import annotations

import pytest

from kit.servers import chat_for, embedded_fixture
from rewindtui.chat import Chat, UndoFailed

server = embedded_fixture("undo-elsewhere", scope="module")


def users(chat: Chat) -> list[str]:
    return [i.text for i in chat.conversation.items if i.role == "user" and i.rewound is None and not i.is_answer]


async def test_an_undo_read_before_another_clients_different_rewind_undoes_nothing(server) -> None:
    chat = await chat_for(server)
    for text in ("one", "two", "three"):
        await chat.send(text)
    turns = chat.conversation.turn_invocations()
    await chat.rewind(turns[2])  # this client: "three" goes
    assert chat.undo_label() == "undo the rewind of 1 turn"
    mine = chat.undo_point()

    other = await chat_for(server, chat.session_id)
    assert users(other) == ["one", "two"]
    await other.rewind(turns[1])  # another client: "two" goes too, a rewind of its own
    theirs = other.undo_point()
    assert theirs is not None and mine is not None and theirs.rewind_task_id != mine.rewind_task_id

    assert chat.undo_label() == "undo the rewind of 1 turn"  # the label this client still shows
    with pytest.raises(UndoFailed, match="changed on the server since; nothing was undone") as refused:
        await chat.undo()
    assert "now: undo the rewind of 1 turn" in str(refused.value)
    assert chat.undo_point() == theirs  # the label follows the server: the other client's rewind
    assert users(chat) == ["one"]  # and so does the view: re-read from the server

    check = await chat_for(server, chat.session_id)
    assert users(check) == ["one"], "the undo changed the session although it said nothing was undone"
    for c in (chat, other, check):
        await c.client.aclose()
