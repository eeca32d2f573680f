"""The live view's core (``rewindtui.chat.live``): a second ``Chat`` on the same session, on the
real embedded server, makes a turn, a rewind, a redo or answers a question; the first one's watch
notices it with one small read, re-reads the session and says what changed. One's own turns and
rewinds are never taken for another client's."""

from __future__ import annotations

import pytest
from faultkit import view

from rewindtui.chat.live import LiveWatch, can_follow

pytestmark = pytest.mark.timeout(60)


def _users(chat) -> list[str]:
    return [text for kind, role, text, _ in view(chat.conversation) if role == "user"]


async def _pair(make_chat, *texts: str):
    mine = await make_chat(direct=True)
    for text in texts:
        await mine.send(text)
    other = await make_chat(direct=True)
    await other.open(mine.session_id)
    return mine, other, LiveWatch(mine)


async def test_nothing_changed_is_nothing(make_chat):
    mine, _, watch = await _pair(make_chat, "one")
    assert can_follow(mine)
    assert await watch.check() is None
    assert await watch.check() is None
    assert watch.checks == 2


async def test_another_clients_turn_is_followed(make_chat, truth):
    mine, other, watch = await _pair(make_chat, "one")
    assert await watch.check() is None
    await other.send("two")
    followed = await watch.check()
    assert followed is not None
    assert followed.said == "Another client sent a turn in this session: 1 turn came."
    assert _users(mine) == ["one", "two"]
    assert view(mine.conversation) == await truth(mine.session_id)
    assert await watch.check() is None  # seen once


async def test_another_clients_rewind_and_redo_are_followed(make_chat, truth):
    mine, other, watch = await _pair(make_chat, "one", "two", "three")
    await other.rewind(other.conversation.turn_invocations()[1])  # before "two"
    followed = await watch.check()
    assert followed is not None and followed.said == "Another client rewound this session: 2 turns went."
    assert _users(mine) == ["one"]
    await other.redo()
    followed = await watch.check()
    assert followed is not None and followed.said == "Another client brought rewound turns back (redo): 2 turns came."
    assert _users(mine) == ["one", "two", "three"]
    assert view(mine.conversation) == await truth(mine.session_id)


async def test_own_turns_and_rewinds_are_not_taken_for_changes(make_chat):
    mine, _, watch = await _pair(make_chat, "one", "two")
    assert await watch.check() is None
    await mine.send("three")
    assert await watch.check() is None
    await mine.rewind(mine.conversation.turn_invocations()[2])
    assert await watch.check() is None
    await mine.redo()
    assert await watch.check() is None


async def test_an_answer_by_another_client_is_followed(make_chat):
    mine, other, watch = await _pair(make_chat)
    await mine.send("please delete live.txt")
    assert mine.conversation.pending_confirmation() is not None
    assert await watch.check() is None
    await other.open(mine.session_id)
    await other.confirm(True)
    followed = await watch.check()
    assert followed is not None and followed.said.startswith("Another client answered the question")
    assert mine.conversation.pending_confirmation() is None


async def test_an_answer_before_the_first_look_is_followed_too(make_chat):
    mine, other, watch = await _pair(make_chat)
    await mine.send("please delete early.txt")
    await other.open(mine.session_id)
    await other.confirm(True)
    followed = await watch.check()  # the first look: same task, but no longer waiting
    assert followed is not None and followed.said.startswith("Another client answered the question")
