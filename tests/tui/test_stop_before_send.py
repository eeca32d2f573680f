"""ctrl+c (or Esc) right after Enter, while the send is still being prepared -- its freshness check,
one request before the message leaves -- stops the send: nothing reaches the server, the text comes
back to the composer, and ctrl+c does not say "again to quit" (it did: the composer was empty and no
reply was streaming yet). Enter in that window queues, as it does during a reply. The core's side
(``Chat.stop`` before the message left) is in ``tests/test_chat_stop_before_send.py``."""

from __future__ import annotations

import pytest

from kit.apps import make_app
from kit.fakes import HoldStreamEnd, freshness_gate
from kit.offline import offline_app
from kit.pilot import SIZE, notifications, send, server_users, settle, wait_until
from kit.servers import embedded_fixture
from rewindtui.tui.interrupt_key import QUIT_HINT

server = embedded_fixture("stop-before-send")


async def _enter_held(app, pilot, gate, text: str) -> None:
    """``text`` sent with Enter, held in its freshness check (the message has not left)."""
    gate.arm()
    app.chat_screen.composer.text = text
    await pilot.press("enter")
    await wait_until(pilot, gate.held.is_set)
    assert app.chat_screen.composer.text == ""  # taken from the composer, not yet sent


@pytest.mark.parametrize("key", ["ctrl+c", "escape"])
async def test_a_stop_right_after_enter_stops_the_send_before_it_leaves(server, key):
    gate = freshness_gate()
    app = make_app(server, transport=gate)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        await send(app, pilot, "one")
        screen = app.chat_screen
        await _enter_held(app, pilot, gate, "two, never sent")
        await pilot.press(key)
        await pilot.pause()
        assert screen.banner.kind != "hint" or QUIT_HINT not in str(screen.banner.render())
        assert not screen.interrupt.arming  # a second ctrl+c would not quit
        gate.open()
        await settle(app, pilot)
        assert await server_users(server, app) == ["one"]  # the server never got it
        assert screen.composer.text == "two, never sent"  # back in the composer
        said = notifications(app)
        assert any("Stopped before it was sent" in n and "back in the composer" in n for n in said), said
        assert not any(n.startswith("Stopped: the turn is") for n in said), said  # no claim of a stopped reply
        assert [it.text for it in app.chat.conversation.items if it.role == "user"] == ["one"]
        # the next send goes as usual (nothing of the stop is left over)
        await send(app, pilot, "three")
        assert await server_users(server, app) == ["one", "three"]


async def test_enter_while_a_send_is_prepared_queues_the_second_message(server):
    gate = freshness_gate()
    app = make_app(server, transport=gate)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        await send(app, pilot, "one")
        await _enter_held(app, pilot, gate, "two")
        app.chat_screen.composer.text = "three"
        await pilot.press("enter")
        await pilot.pause()
        assert "Queued: it is sent when the reply ends (ctrl+z or ↑ takes it back)." in notifications(app)
        gate.open()
        await settle(app, pilot)
        assert await server_users(server, app) == ["one", "two", "three"]
        assert app.chat_screen.composer.text == ""


async def test_enter_and_ctrl_c_in_one_burst_stop_the_send(server):
    """The keys of one burst: ctrl+c may come before the screen has taken Enter's text (the
    composer is empty already); it waits for it, then stops the send."""
    gate = freshness_gate()
    app = make_app(server, transport=gate)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        await send(app, pilot, "one")
        gate.arm()
        screen = app.chat_screen
        screen.composer.text = "two, in a burst"
        # Enter, and ctrl+c before the screen has handled Enter's message (what a terminal's burst
        # can give; Pilot's keys each wait for the app, so the two are called in one go here)
        screen.composer.action_submit()
        assert screen.interrupt.press() == "wait" and screen.composer.text == ""
        # ctrl+c stops, once it can (at once: the held check is not waited for), the text back
        await wait_until(pilot, lambda: app.chat_screen.composer.text == "two, in a burst")
        assert not app.chat_screen.interrupt.arming
        gate.open()
        await settle(app, pilot)
        assert app.chat_screen.composer.text == "two, in a burst"
        assert await server_users(server, app) == ["one"]
        assert any("Stopped before it was sent" in n for n in notifications(app))


async def test_ctrl_c_while_the_send_waits_for_the_last_turn_to_close_its_stream(server):
    """The send waits for the turn before it to close its stream (it has ended): ctrl+c then
    keeps the send from leaving, and the turn before stays as it ended (not marked stopped)."""
    holder = HoldStreamEnd()
    app = make_app(server, transport=holder)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        screen = app.chat_screen
        screen.composer.text = "one"
        await pilot.press("enter")
        await wait_until(pilot, holder.holding.is_set)
        await wait_until(pilot, lambda: not app.chat.conversation.busy)  # ended, stream still closing
        screen.composer.text = "two, waiting"
        await pilot.press("enter")
        await pilot.pause()
        assert app.chat_screen.ops.handing_over
        await pilot.press("ctrl+c")
        await pilot.pause()
        holder.open()
        await settle(app, pilot)
        assert await server_users(server, app) == ["one"]
        assert screen.composer.text == "two, waiting"
        assert app.chat.conversation.turn_state == "completed"  # the turn before, as it ended
        said = notifications(app)
        assert any("Stopped before it was sent" in n for n in said), said
        assert not any(n.startswith("Stopped: the turn is") for n in said), said


async def test_ctrl_c_waits_for_enters_text_a_bounded_time():
    """A text the screen never takes (injected: the composer counts one submission in flight)
    does not leave ctrl+c waiting for ever: after a bounded wait it does what it does on an empty
    composer."""
    app = offline_app()
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        screen = app.chat_screen
        screen.composer.submitting = 1
        assert screen.interrupt.press() == "wait"
        await wait_until(pilot, lambda: screen.interrupt.arming)  # the quit question, in the end
        assert QUIT_HINT in notifications(app) or screen.banner.kind == "hint"
