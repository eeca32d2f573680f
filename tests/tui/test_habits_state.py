"""The six places issue 33 found the app's state wrong, each as its steps reproduce it."""

from __future__ import annotations

import asyncio

import pytest

from kit.apps import connector_for, make_app, new_app
from kit.pilot import hold_escape_clock, send, settle, wait_until
from kit.servers import chat_for

SIZE = (100, 24)


@pytest.mark.slow  # streams a paced reply or restarts the app: seconds
async def test_1_a_restart_opens_the_session_that_was_open_not_the_newest(server, tmp_path):
    app = make_app(server, data_dir=tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        await send(app, pilot, "the older session")
        older = app.chat.session_id
        await pilot.press("ctrl+n")
        await settle(app, pilot)
        await send(app, pilot, "the newer session")
        assert app.chat.session_id != older
        app.chat_screen.switching.request(older)  # what F2 → Enter on it does
        await settle(app, pilot)
        app.chat_screen.composer.text = "a draft in the older one"
        await pilot.press("ctrl+q")  # keeps the draft
    again = new_app(connector_for(server.agent_url, server.api_url), new_session=False, data_dir=tmp_path)
    async with again.run_test(size=SIZE) as pilot:
        await settle(again, pilot)
        assert again.chat.session_id == older
        assert again.chat_screen.composer.text == "a draft in the older one"


async def test_2_a_new_fork_offers_no_undo_it_cannot_do(server):
    app = make_app(server)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        await send(app, pilot, "one")
        await send(app, pilot, "two")
        original = app.chat.session_id
        await send(app, pilot, "/fork 1")
        await settle(app, pilot)
        screen = app.chat_screen
        assert app.chat.session_id != original
        assert screen.status.undo == ""
        assert app.chat.undo_label() is None
        assert not screen.check_action("undo_rewind", ())
        fork = app.chat.session_id
    chat = await chat_for(server, fork)  # after a restart: still nothing to undo
    try:
        assert chat.undo_label() is None
    finally:
        await chat.client.aclose()


async def test_3_f2_pressed_while_connecting_fills_once_connected(server):
    seeded = await chat_for(server)  # a session to list, whatever ran before on this server
    await seeded.send("a session the panel lists")
    await seeded.client.aclose()
    connect = connector_for(server.agent_url, server.api_url)
    started = asyncio.Event()

    async def held():  # the connect waits until F2 was pressed: start-up as on a slow machine
        await started.wait()
        return await connect()

    app = new_app(held, new_session=False)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        await pilot.press("f2")
        assert app.chat is None  # pressed before the connect ended
        started.set()
        await settle(app, pilot)
        panel = app.chat_screen.sessions
        await wait_until(pilot, lambda: bool(panel.sessions))
        assert app.chat.session_id in {s.id for s in panel.sessions}


async def test_4_f2_highlights_the_open_session_after_a_new_one_and_a_fork(server):
    app = make_app(server)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        await send(app, pilot, "first session")
        await send(app, pilot, "its second turn")
        screen = app.chat_screen
        panel = screen.sessions
        await pilot.press("f2")
        await settle(app, pilot)
        assert panel.highlighted_session.id == app.chat.session_id
        await pilot.press("escape")
        await pilot.press("ctrl+n")
        await settle(app, pilot)
        await send(app, pilot, "second session")
        await pilot.press("f2")
        await settle(app, pilot)
        assert panel.highlighted_session.id == app.chat.session_id
        await pilot.press("escape")
        await send(app, pilot, "/fork 1")
        await settle(app, pilot)
        await pilot.press("f2")
        await settle(app, pilot)
        await wait_until(pilot, lambda: app.chat.session_id in {s.id for s in panel.sessions})
        assert panel.highlighted_session.id == app.chat.session_id


@pytest.mark.slow  # streams a paced reply or restarts the app: seconds
async def test_5_a_cleared_draft_does_not_come_back_after_a_fork(server, tmp_path):
    app = make_app(server, data_dir=tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        await send(app, pilot, "one")
        await send(app, pilot, "two")
        session = app.chat.session_id
        app.chat_screen.composer.text = "kept draft"
        await pilot.press("ctrl+q")
    again = make_app(server, session, data_dir=tmp_path)
    async with again.run_test(size=SIZE) as pilot:
        await settle(again, pilot)
        screen = again.chat_screen
        assert screen.composer.text == "kept draft"  # restored at start
        hold_escape_clock(again)
        await pilot.press("escape", "escape")
        await pilot.pause()
        assert screen.composer.text == ""
        await send(again, pilot, "/fork 1")
        await settle(again, pilot)
        assert again.chat.session_id != session
    third = make_app(server, session, data_dir=tmp_path)
    async with third.run_test(size=SIZE) as pilot:
        await settle(third, pilot)
        assert third.chat_screen.composer.text == ""


@pytest.mark.slow  # streams a paced reply or restarts the app: seconds
async def test_6_sending_while_scrolled_up_follows_the_new_turn_and_new_content_is_marked(slow_server):
    app = make_app(slow_server)
    async with app.run_test(size=(80, 16)) as pilot:
        await settle(app, pilot)
        for text in ("one", "two", "three", "four"):
            await send(app, pilot, text)
        screen = app.chat_screen
        transcript = screen.transcript
        marker = screen.query_one("#new-below")
        for _ in range(3):
            await pilot.press("pageup")
        await pilot.pause()
        assert not transcript.follow
        screen.composer.text = "five " + " ".join(["and more"] * 30)
        await pilot.press("enter")
        await wait_until(pilot, lambda: any(it.streaming for it in app.chat.conversation.items))
        await pilot.pause()
        assert transcript.follow  # the new turn is followed
        await pilot.press("pageup")  # reading above while the reply streams in
        await wait_until(pilot, lambda: marker.has_class("-shown"))
        assert "new below" in str(marker.render())
        await pilot.press("pagedown", "pagedown", "pagedown")
        await settle(app, pilot)
        await wait_until(pilot, lambda: transcript.follow)
        assert not marker.has_class("-shown")
