"""Rewinds through broken networks and against refusals (a fault proxy in front of the real
embedded server). A clear refusal rolls the view back exactly; an unknown outcome re-reads the
server and shows that. Afterwards the view is always what the server holds."""

from __future__ import annotations

import asyncio
import json

import pytest
from faultkit import view
from proxy import Fault, is_a2a_rewind, is_rest

from rewindtui.chat import Busy, Chat, Outcome, RewindFailed, RewindOutcomeUnknown, freshness


async def three_turns(make_chat) -> tuple[str, list[str]]:
    chat = await make_chat(direct=True)
    await chat.open(None)
    for text in ("one", "two", "three"):
        await chat.send(text)
    assert chat.session_id
    return chat.session_id, chat.conversation.turn_invocations()


def users(chat: Chat) -> list[str]:
    return [t for _, r, t, _ in view(chat.conversation) if r == "user"]


# -- the answer is lost: re-read ------------------------------------------------------------------
@pytest.mark.parametrize(
    "fault, rewound",
    [
        (dict(reset=True), True),  # reset after the server committed
        (dict(status=500, forward=True, body=b'{"error": "proxy died after the answer"}'), True),  # 5xx after commit
        (dict(status=503, body=b"<html><h1>503</h1></html>", content_type="text/html"), False),  # 5xx, never reached
        (dict(delay=1.5), True),  # slower than the client's timeout (0.5 s)
        (dict(frames=lambda frames: []), True),  # the stream ends without the answer
    ],
    ids=["reset-after-commit", "500-after-commit", "503-not-forwarded", "timeout", "no-answer"],
)
async def test_lost_answer_rereads_the_server(make_chat, proxy, truth, fault, rewound):
    sid, turns = await three_turns(make_chat)
    chat = await make_chat(timeout=0.5)
    await chat.open(sid)
    proxy.add(Fault(is_a2a_rewind, **fault))
    with pytest.raises(RewindOutcomeUnknown) as info:
        await chat.rewind(turns[1])
    text = str(info.value)
    assert "\n" not in text and "answer was lost" in text
    assert ("is rewound" in text) is rewound
    assert users(chat) == (["one"] if rewound else ["one", "two", "three"])
    assert view(chat.conversation) == await truth(sid)
    assert not chat.rewinding


async def test_lost_answer_and_failed_reread_say_which_failed(make_chat, proxy, truth):
    """The answer lost and the re-read failing too (the server killed and restarting): the words
    name the failed re-read, not a server without history, and the view stays until it answers."""
    sid, turns = await three_turns(make_chat)
    chat = await make_chat(timeout=0.5)
    await chat.open(sid)
    proxy.add(Fault(is_a2a_rewind, reset=True))
    proxy.add(Fault(lambda req: not is_a2a_rewind(req), status=503, body=b"restarting", times=1000))
    with pytest.raises(RewindOutcomeUnknown) as info:
        await chat.rewind(turns[1])
    text = str(info.value)
    assert "reading the session again failed too" in text and "cannot give its history" not in text
    assert not info.value.reread
    assert users(chat) == ["one", "two", "three"]  # as before the rewind: nothing read to show
    proxy.clear()
    await chat.open(sid)  # what the words advise: the server's truth, the rewind it made
    assert users(chat) == ["one"]
    assert view(chat.conversation) == await truth(sid)


async def test_lost_rest_answer_rereads_the_server(make_chat, proxy, truth):
    sid, turns = await three_turns(make_chat)
    chat = await make_chat(rewind="rest")
    await chat.open(sid)
    proxy.add(Fault(is_rest("POST", "/rewind"), reset=True))
    with pytest.raises(RewindOutcomeUnknown, match="is rewound"):
        await chat.rewind(turns[2])
    assert users(chat) == ["one", "two"]
    assert view(chat.conversation) == await truth(sid)


# -- a clear refusal: roll back -------------------------------------------------------------------
@pytest.mark.parametrize(
    "status, body",
    [
        (409, b'{"error": "a turn is running on session"}'),
        (400, b'{"error": "bad invocation"}'),
        (404, b'{"error": "Session not found"}'),
    ],
)
async def test_rest_refusal_rolls_back_exactly(make_chat, proxy, truth, status, body):
    sid, turns = await three_turns(make_chat)
    chat = await make_chat(rewind="rest")
    await chat.open(sid)
    before = list(chat.conversation.items)
    proxy.add(Fault(is_rest("POST", "/rewind"), status=status, body=body))
    with pytest.raises(RewindFailed) as info:
        await chat.rewind(turns[1])
    assert json.loads(body)["error"] in str(info.value)
    assert chat.conversation.items == before  # the very same items, back in place
    assert view(chat.conversation) == await truth(sid)


async def test_json_rpc_error_refuses_the_a2a_rewind(make_chat, proxy, truth):
    sid, turns = await three_turns(make_chat)
    chat = await make_chat()
    await chat.open(sid)
    before = view(chat.conversation)
    error = json.dumps({"jsonrpc": "2.0", "id": 1, "error": {"code": -32602, "message": "no such invocation"}}).encode()
    proxy.add(Fault(is_a2a_rewind, status=200, body=error))
    with pytest.raises(RewindFailed, match="no such invocation"):
        await chat.rewind(turns[1])
    assert view(chat.conversation) == before == await truth(sid)


async def test_rewind_to_an_unknown_id_sends_nothing(make_chat, proxy, truth):
    sid, _ = await three_turns(make_chat)
    chat = await make_chat()
    await chat.open(sid)
    before = view(chat.conversation)
    with pytest.raises(RewindFailed, match="nothing was sent"):
        await chat.rewind("e-not-a-turn-here")
    assert not [r for r in proxy.seen_by(is_a2a_rewind) if "e-not-a-turn-here" in r.body.decode()]
    assert view(chat.conversation) == before == await truth(sid)


async def test_stale_view_rewind_is_refused_exactly(make_chat, truth, monkeypatch):
    """Another client rewound first: this client's target is gone on the server, which refuses
    (a failed status, ``invalid_invocation``) and changes nothing; the refusal reads once and the
    client re-reads what the server holds instead of keeping the dropped turn."""
    sid, turns = await three_turns(make_chat)
    a, b = await make_chat(), await make_chat()
    await a.open(sid)
    await b.open(sid)
    await a.rewind(turns[1])
    # the server's own refusal (for a client that does not check first: test_changed_elsewhere.py)
    assert b.client.capabilities is not None
    monkeypatch.setattr(freshness, "ensure_fresh", no_check)
    with pytest.raises(RewindFailed, match="rewind refused") as info:
        await b.rewind(turns[2])
    assert str(info.value).count("rewind refused") == 1 and str(info.value).endswith(
        "the server's conversation is shown now"
    )
    assert users(b) == users(a) == ["one"]
    assert view(b.conversation) == view(a.conversation) == await truth(sid)


async def test_two_rewinds_at_once(make_chat, truth):
    sid, turns = await three_turns(make_chat)
    chat = await make_chat()
    await chat.open(sid)
    # one chat: the second is refused locally while the first is in flight
    results = await asyncio.gather(chat.rewind(turns[2]), chat.rewind(turns[1]), return_exceptions=True)
    assert isinstance(results[0], Outcome) and isinstance(results[1], Busy)
    assert users(chat) == ["one", "two"]
    # two clients at once on one session: the server takes one, refuses the other
    a, b = await make_chat(), await make_chat()
    await a.open(sid)
    await b.open(sid)
    outcome = await asyncio.gather(a.rewind(turns[1]), b.rewind(turns[0]), return_exceptions=True)
    # each is taken or clearly refused (busy, or its turn already gone): never an unknown outcome
    assert all(isinstance(r, Outcome | RewindFailed) for r in outcome), outcome
    assert any(isinstance(r, Outcome) for r in outcome)
    final = await truth(sid)
    assert [t for _, r, t, _ in final if r == "user"] in (["one"], [])
    for c in (a, b):
        await c.refresh()  # no push from the server: a client sees another's rewind when it re-reads
    assert view(a.conversation) == view(b.conversation) == final


async def test_rewind_during_a_turn(make_chat, slow_server, truth):
    sender = await make_chat(direct=True, srv=slow_server)
    await sender.open(None)
    await sender.send("one")
    await sender.send("two")
    sid = sender.session_id
    assert sid
    turns = sender.conversation.turn_invocations()
    # the same chat: refused before anything is sent
    running = asyncio.ensure_future(sender.send("three"))
    while not sender.sending:
        await asyncio.sleep(0.01)
    with pytest.raises(Busy):
        await sender.rewind(turns[0])
    # another client while the turn runs: the server refuses (busy), the view rolls back
    other = await make_chat(direct=True, srv=slow_server)
    await other.open(sid)
    while not sender.conversation.busy:
        await asyncio.sleep(0.01)
    with pytest.raises(RewindFailed, match="running"):
        await other.rewind(turns[1])
    await running
    await other.refresh()
    assert users(other) == ["one", "two", "three"]
    assert view(other.conversation) == view(sender.conversation) == await truth(sid, srv=slow_server)


async def no_check(chat, error) -> None:
    """The client's freshness check, off: what the server itself refuses (client/freshness.py)."""
