"""A rewind asks what to do with the queued messages (issue 33): send them after it, keep them
queued, or put them into the composer -- nothing is lost, and Esc rewinds nothing. Messages come to
wait at rest when a stopped turn's question is answered "Keep queued". Against the real embedded
server (its demo model paced, so a reply stays in flight)."""

from __future__ import annotations

import pytest

from kit.apps import make_app
from kit.pilot import SIZE, notifications, server_users, settle, wait_until
from rewindtui.chat import Action
from rewindtui.tui.app import RewindApp
from rewindtui.tui.screens.confirm import ConfirmScreen
from rewindtui.tui.screens.queue_choice import QueueChoiceScreen

LONG = " ".join(["and tell it at length"] * 8)  # the demo model echoes it slowly: seconds of streaming


def users(app: RewindApp) -> list[str]:
    return [i.text.split(f" {LONG}")[0] for i in app.chat.conversation.items if i.role == "user" and i.rewound is None]


async def queued_at_rest(app: RewindApp, pilot, *queued: str) -> None:
    """One finished turn, then a reply with ``queued`` typed during it, stopped, and its question
    answered "Keep queued": the queue waits at rest."""
    screen = app.chat_screen
    screen.composer.text = "first"
    await pilot.press("enter")
    await settle(app, pilot)
    screen.composer.text = f"second {LONG}"
    await pilot.press("enter")
    await wait_until(pilot, lambda: screen.turn_bar.kind == "replying")
    for text in queued:
        screen.composer.text = text
        await pilot.press("enter")
        await pilot.pause()
    assert screen.queue.texts == list(queued)
    await pilot.press("escape")  # stop: the question about the queue
    await wait_until(pilot, lambda: isinstance(app.screen, ConfirmScreen) and bool(app.screen.query("#confirm-also")))
    await pilot.press("k")
    await wait_until(pilot, lambda: app.screen is screen)
    await settle(app, pilot)
    assert screen.queue.texts == list(queued) and not screen.replying


async def rewind_last_turn(app: RewindApp, pilot) -> None:
    await pilot.press("alt+up")
    await wait_until(pilot, lambda: app.chat_screen.rewind_mode)
    await pilot.press("enter")
    await wait_until(pilot, lambda: isinstance(app.screen, QueueChoiceScreen))
    await pilot.pause()


@pytest.mark.slow  # streams a paced reply: seconds
async def test_a_rewind_asks_and_sends_the_queue_after_it(slow_server):
    app = make_app(slow_server)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        await queued_at_rest(app, pilot, "q one", "q two")
        await rewind_last_turn(app, pilot)
        assert users(app) == ["first", "second"]  # nothing rewound while it asks
        await pilot.press("s")
        await wait_until(pilot, lambda: users(app) == ["first", "q one", "q two"], timeout=60)
        await settle(app, pilot)
        assert [u.split(f" {LONG}")[0] for u in await server_users(slow_server, app)] == ["first", "q one", "q two"]
        assert not app.chat_screen.queue


@pytest.mark.slow  # streams a paced reply: seconds
async def test_a_rewind_puts_the_queue_into_the_composer_or_keeps_it_and_esc_rewinds_nothing(slow_server):
    app = make_app(slow_server)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        screen = app.chat_screen
        await queued_at_rest(app, pilot, "q one", "q two")
        await rewind_last_turn(app, pilot)
        await pilot.press("escape")  # no rewind; the queue as it was
        await settle(app, pilot)
        assert users(app) == ["first", "second"] and screen.queue.texts == ["q one", "q two"]
        assert [u.split(f" {LONG}")[0] for u in await server_users(slow_server, app)] == ["first", "second"]

        await rewind_last_turn(app, pilot)
        await pilot.press("k")  # rewound; the queue still waits
        await settle(app, pilot)
        assert users(app) == ["first"] and screen.queue.texts == ["q one", "q two"]

        await rewind_last_turn(app, pilot)
        await pilot.press("c")  # into the composer, in order; nothing sent
        await settle(app, pilot)
        assert users(app) == [] and not screen.queue
        assert screen.composer.text == "q one\nq two"
        assert await server_users(slow_server, app) == []


# -- alt+↑ right after a turn that ended in a tool call ----------------------------------------------
@pytest.mark.parametrize("prompt", ["weather in Oslo", "please delete notes.txt"])
async def test_alt_up_right_after_a_tool_call_turn_previews_at_once(server, prompt):
    """Seen in a real terminal: after a turn ending in a tool call, alt+↑ kept saying "Wait for the
    current turn to finish". The preview is the gate's: once the turn has ended (after its tool
    call, or after an approved one), the first alt+↑ shows what would go, never a wait."""
    app = make_app(server)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        screen = app.chat_screen
        screen.composer.text = prompt
        await pilot.press("enter")
        if "delete" in prompt:
            await wait_until(pilot, lambda: screen.turn_bar.kind == "question", timeout=20)
            await pilot.press("alt+y")
        await wait_until(pilot, lambda: app.chat.conversation.turn_state == "completed", timeout=20)
        await wait_until(pilot, lambda: not screen.ops.busy, timeout=20)
        assert screen.ops.why_not(Action.REWIND) == ""
        await pilot.press("alt+up")
        await pilot.pause()
        assert screen.rewind_mode
        banner = screen.banner.text
        assert "go, on the server too" in banner and "wait" not in banner.lower()
        assert not any("wait for" in n.lower() for n in notifications(app))
