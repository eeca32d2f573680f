"""A turn that pauses for input a second time after an approved tool call: the question answered
first is never offered again. Core level: ``Chat`` against the loopback replay server
(tests/fakeserver.py), with kagent's shapes as ``test_chat.py`` builds them (the
``adk_request_confirmation`` call as a data part with ``kagent_type: function_call``; the answer
resumes the same task). The streams do not echo the user's messages (a replay cannot know the id
the client gives them; kagent echoes them under that same id, so the view holds one item either
way): the answer is the client's own item."""

from __future__ import annotations

import pytest

from fakeserver import FakeServer, Reply, sse_body
from rewindtui.client.a2a_client import Unsupported
from test_chat import CARD, card, connected, msg, sent_messages, status


@pytest.fixture
def server():
    with FakeServer() as s:
        yield s


def confirmation(call_id: str, pod: str) -> dict:
    return {
        "kind": "data",
        "data": {
            "name": "adk_request_confirmation",
            "id": call_id,
            "args": {
                "originalFunctionCall": {"name": "delete_pod", "args": {"pod": pod}, "id": f"f-{call_id}"},
                "toolConfirmation": {"hint": f"Delete {pod}?"},
            },
        },
        "metadata": {"kagent_type": "function_call"},
    }


def asking() -> bytes:
    question = msg("q1", "agent", "", task="t-ask", inv="e-t-ask", parts=[confirmation("c1", "web-1")])
    return sse_body(
        [
            status("t-ask", "submitted"),
            status("t-ask", "working", question),
            status("t-ask", "input-required", final=True),
        ]
    )


def approved_then_paused(second: dict) -> bytes:
    """The approval's stream: the answer echoed, the tool's result, then the same task waits again."""
    return sse_body(
        [
            status("t-ask", "submitted"),
            status("t-ask", "working"),
            status("t-ask", "working", msg("r1", "agent", "deleted web-1", task="t-ask", inv="e-t-ask")),
            status("t-ask", "working", second),
            status("t-ask", "input-required", final=True),
        ]
    )


async def test_a_second_pause_with_a_plain_question_offers_no_approval_again(server) -> None:
    again = msg("q2", "agent", "Which namespace next?", task="t-ask", inv="e-t-ask")
    server.route("GET", CARD, Reply.json(card()))
    server.route("POST", "/", Reply.sse(asking()), Reply.sse(approved_then_paused(again)))
    chat = await connected(server)
    await chat.open(None)
    await chat.send("clean up")
    assert chat.pending_confirmation() is not None
    await chat.confirm(True)

    assert chat.conversation.turn_state == "input-required"  # waiting again, for words this time
    assert chat.pending_confirmation() is None, "the approved question is offered again"
    assert not chat.permissions().can_confirm
    with pytest.raises(Unsupported, match="no question"):
        await chat.confirm(True)
    assert len(sent_messages(server)) == 2  # nothing was sent for the refused answer


async def test_a_second_pause_with_a_new_approval_offers_that_one(server) -> None:
    again = msg("q2", "agent", "", task="t-ask", inv="e-t-ask", parts=[confirmation("c2", "web-2")])
    server.route("GET", CARD, Reply.json(card()))
    server.route("POST", "/", Reply.sse(asking()), Reply.sse(approved_then_paused(again)))
    chat = await connected(server)
    await chat.open(None)
    await chat.send("clean up")
    await chat.confirm(True)

    pending = chat.pending_confirmation()
    assert pending is not None and (pending.call_id, pending.args) == ("c2", {"pod": "web-2"})
    assert chat.permissions().can_confirm
