"""Issue item 4: another client's rewind is seen. Two Chats on one real embedded server: one
rewinds under the other; the other's next send (or rewind) re-reads the session and says so
instead of acting on its stale view."""

from __future__ import annotations

import pytest
from faultkit import view

from rewindtui.chat import RewindFailed, TurnRefused
from rewindtui.chat.freshness import CHANGED

pytestmark = pytest.mark.timeout(60)


async def _session(chat, *texts: str) -> tuple[str, list[str]]:
    for text in texts:
        await chat.send(text)
    assert chat.session_id is not None
    return chat.session_id, chat.conversation.turn_invocations()


def _users(chat) -> list[str]:
    return [text for kind, role, text, _ in view(chat.conversation) if role == "user"]


async def test_a_send_after_another_clients_rewind_reloads_instead(make_chat, truth):
    app = await make_chat(direct=True)
    sid, turns = await _session(app, "one", "two", "three")
    cli = await make_chat(direct=True)
    await cli.open(sid)
    await cli.rewind(turns[1])  # before "two"
    with pytest.raises(TurnRefused, match="changed elsewhere: reloaded"):
        await app.send("four")
    assert _users(app) == ["one"]  # the server's view, reloaded; "four" not sent
    assert view(app.conversation) == await truth(sid)
    await app.send("four")  # now it goes, on the fresh view
    assert _users(app) == ["one", "four"]
    assert view(app.conversation) == await truth(sid)


async def test_a_rewind_after_another_clients_send_reloads_instead(make_chat, truth):
    app = await make_chat(direct=True)
    sid, turns = await _session(app, "one", "two")
    other = await make_chat(direct=True)
    await other.open(sid)
    await other.send("three")
    with pytest.raises(RewindFailed, match=CHANGED.split(":")[0]):
        await app.rewind(turns[1])
    assert _users(app) == ["one", "two", "three"]
    assert view(app.conversation) == await truth(sid)


async def test_ones_own_turns_and_rewinds_are_not_taken_for_changes(make_chat, truth):
    app = await make_chat(direct=True)
    sid, turns = await _session(app, "one", "two", "three")
    await app.rewind(turns[2])
    await app.send("again")  # no false "changed elsewhere" after its own rewind
    await app.rewind(app.conversation.turn_invocations()[1], "edited")
    await app.send("last")
    assert _users(app) == ["one", "edited", "last"]
    assert view(app.conversation) == await truth(sid)
