"""Two apps on one session, as two terminals on one data dir use it: each keeps to its own queue,
its own draft and its own edit while the live view follows what the other one does. The real
apps on one embedded server over loopback (its demo model paced, so a reply stays in flight),
both with the same data dir, as two ``rewindtui`` on one ``--data-dir`` are."""

from __future__ import annotations

import asyncio
import os
import signal

import pytest

from kit.apps import connector_for, new_app
from kit.pilot import SIZE, notifications, server_users, settle, texts, turns, user_texts, wait_until
from kit.servers import chat_for, settings_in
from rewindtui.config.connection import AppConnector
from rewindtui.tui.app import RewindApp
from rewindtui.tui.last_session import LastSession
from rewindtui.tui.screens.confirm import ConfirmScreen

pytestmark = pytest.mark.slow  # real turns on the embedded server, two apps at once: seconds

LONG = " ".join(["and tell it at length"] * 8)  # the demo model echoes it slowly: seconds of streaming


def app_on(server, data_dir, session_id: str | None = None, *, live: bool = False) -> RewindApp:
    return new_app(connector_for(server.agent_url, server.api_url), session_id=session_id, data_dir=data_dir, live=live)


async def check_now(app: RewindApp, pilot) -> None:
    """Make the live view's check due and let one tick run it (its own timer is stopped)."""
    assert app.live is not None
    app.live.due = app.live.clock()
    app.live.tick()
    await settle(app, pilot)


async def test_another_apps_queued_message_is_not_taken_or_offered(slow_server, tmp_path):
    first = app_on(slow_server, tmp_path, live=True)
    async with first.run_test(size=SIZE) as pilot:
        await turns(first, pilot, "one")
        first.live.stop()  # the test ticks by hand
        session = first.chat.session_id
        other = app_on(slow_server, tmp_path, session)
        async with other.run_test(size=SIZE) as other_pilot:
            await settle(other, other_pilot)
            screen = other.chat_screen
            screen.composer.text = f"two {LONG}"
            await other_pilot.press("enter")
            await wait_until(other_pilot, lambda: screen.turn_bar.kind == "replying", timeout=30)
            screen.composer.text = "queued in the other app"
            await other_pilot.press("enter")  # queued: kept on disk for a restart of that app
            await other_pilot.pause()
            assert screen.queue.texts == ["queued in the other app"]
            await check_now(first, pilot)  # the first app follows the other app's running turn
            assert "1 turn came" in " ".join(first.live.said)
            assert not first.chat_screen.queue  # the other app's queue is not this app's
            assert not isinstance(first.screen, ConfirmScreen)  # nothing offered "from before the app closed"
            await wait_until(
                other_pilot, lambda: "queued in the other app" in user_texts(other) and not screen.replying, timeout=90
            )
            await settle(other, other_pilot)
        await wait_until(pilot, lambda: not first.chat_screen.replying, timeout=60)
        await check_now(first, pilot)
        assert not any("before the app closed" in n for n in notifications(first))
        assert not isinstance(first.screen, ConfirmScreen) and not first.chat_screen.queue
        assert (await server_users(slow_server, first)).count("queued in the other app") == 1


async def test_a_queue_kept_at_rest_is_not_asked_about_again_when_the_view_follows(slow_server, tmp_path):
    app = app_on(slow_server, tmp_path, live=True)
    async with app.run_test(size=SIZE) as pilot:
        await turns(app, pilot, "one")
        app.live.stop()
        screen = app.chat_screen
        screen.composer.text = f"two {LONG}"
        await pilot.press("enter")
        await wait_until(pilot, lambda: screen.turn_bar.kind == "replying", timeout=30)
        screen.composer.text = "later"
        await pilot.press("enter")
        await pilot.pause()
        await pilot.press("escape")  # stopped: the app asks about the queue
        await wait_until(
            pilot, lambda: isinstance(app.screen, ConfirmScreen) and bool(app.screen.query("#confirm-also"))
        )
        await pilot.press("k")  # keep it queued
        await wait_until(pilot, lambda: app.screen is screen)
        await settle(app, pilot)
        other = await chat_for(slow_server, app.chat.session_id)
        try:
            await other.send("three")
        finally:
            await other.client.aclose()
        await check_now(app, pilot)
        assert "Another client sent a turn in this session: 1 turn came." in app.live.said
        assert app.screen is screen  # not asked again, and not "from before the app closed"
        assert screen.queue.texts == ["later"]


async def test_an_edit_refused_because_another_client_sent_gives_the_draft_back(server, tmp_path):
    app = app_on(server, tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await turns(app, pilot, "one", "two")
        screen = app.chat_screen
        screen.composer.text = "my draft"
        await pilot.press("alt+up", "alt+e")  # edit "two": the draft is set aside
        await settle(app, pilot)
        assert app.chat.edit is not None and screen.composer.text == "two"
        other = await chat_for(server, app.chat.session_id)
        try:
            await other.send("from elsewhere")
        finally:
            await other.client.aclose()
        screen.composer.text = "two, edited"
        await pilot.press("enter")  # refused: the session changed elsewhere (reloaded, nothing sent)
        await settle(app, pilot)
        assert any("changed elsewhere" in n for n in notifications(app))
        assert app.chat.edit is None and user_texts(app) == ["one", "two", "from elsewhere"]
        assert screen.composer.text == "two, edited\nmy draft"  # the edit's text and the draft set aside
        assert not screen.memory.stash.holding
        key = screen._history_key()
        assert screen.memory.keep_draft()  # as ctrl+q keeps it: the composer's text, both parts
        assert key is not None and app.draft_store.load(*key) == "two, edited\nmy draft"


async def test_quitting_a_new_session_with_a_draft_says_why_it_cannot_be_kept(server, tmp_path):
    app = app_on(server, tmp_path)  # a data dir: drafts are kept, per session
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        assert app.chat.session_id is None  # nothing sent yet: no session to keep it for
        app.chat_screen.composer.text = "a first thought"
        await pilot.press("ctrl+q")
        await wait_until(pilot, lambda: isinstance(app.screen, ConfirmScreen))
        asked = app.screen
        assert asked.purpose == "quit" and "no data dir" not in asked.text
        assert "Nothing was sent in this session yet" in asked.text
        await pilot.press("escape")  # stay: the draft is where it was
        await pilot.pause()
        assert app.chat_screen.composer.text == "a first thought"


async def test_two_apps_quitting_with_drafts_on_one_session_keep_both(server, tmp_path):
    first = app_on(server, tmp_path)
    async with first.run_test(size=SIZE) as pilot:
        await turns(first, pilot, "one")
        session = first.chat.session_id
        other = app_on(server, tmp_path, session)
        async with other.run_test(size=SIZE) as other_pilot:
            await settle(other, other_pilot)
            first.chat_screen.composer.text = "the first app's draft"
            other.chat_screen.composer.text = "the other app's draft"
            await pilot.press("ctrl+q")  # kept, and the first app quits
            await wait_until(pilot, lambda: first.return_code is not None)
            await other_pilot.press("ctrl+q")  # kept too: the first one's stays
            await wait_until(other_pilot, lambda: other.return_code is not None)
    again = app_on(server, tmp_path, session)
    async with again.run_test(size=SIZE) as pilot:
        await settle(again, pilot)
        assert again.chat_screen.composer.text == "the first app's draft\nthe other app's draft"
        await pilot.press("enter")  # sent: the kept draft is forgotten
        await settle(again, pilot)
        assert user_texts(again)[-1] == "the first app's draft\nthe other app's draft"
        key = again.chat_screen._history_key()
        assert key is not None and again.draft_store.load(*key) == ""


async def test_a_message_queued_behind_another_clients_turn_is_sent_when_it_ends(slow_server, tmp_path):
    app = app_on(slow_server, tmp_path, live=True)
    async with app.run_test(size=SIZE) as pilot:
        await turns(app, pilot, "one")
        app.live.stop()
        screen = app.chat_screen
        other = await chat_for(slow_server, app.chat.session_id)
        try:
            sending = asyncio.create_task(other.send(f"two {LONG}"))  # streams for seconds
            await wait_until(pilot, lambda: len(other.conversation.turn_invocations()) == 2, timeout=30)
            app.live.due = app.live.clock()
            app.live.tick()  # a check: the view follows the other client's running turn
            await wait_until(pilot, lambda: screen.replying, timeout=30)
            screen.composer.text = "queued behind it"
            await pilot.press("enter")  # Enter during a reply queues, as behind a turn of ours
            await pilot.pause()
            assert screen.queue.texts == ["queued behind it"]
            await sending
        finally:
            await other.client.aclose()
        await wait_until(pilot, lambda: "queued behind it" in user_texts(app) and not screen.replying, timeout=60)
        await settle(app, pilot)
        assert not screen.queue and not isinstance(app.screen, ConfirmScreen)
        assert (await server_users(slow_server, app))[-1] == "queued behind it"


async def test_after_a_refused_edit_the_other_clients_running_turn_is_followed(slow_server, tmp_path):
    app = app_on(slow_server, tmp_path, live=True)
    async with app.run_test(size=SIZE) as pilot:
        await turns(app, pilot, "one", "two")
        app.live.stop()
        screen = app.chat_screen
        await pilot.press("alt+up", "alt+e")  # edit "two"
        await settle(app, pilot)
        other = await chat_for(slow_server, app.chat.session_id)
        try:
            sending = asyncio.create_task(other.send(f"three {LONG} {LONG}"))  # streams for seconds
            await wait_until(pilot, lambda: len(other.conversation.turn_invocations()) == 3, timeout=30)
            screen.composer.text = "two, edited"
            await pilot.press("enter")  # refused: changed elsewhere; reloaded with the running turn
            await wait_until(pilot, lambda: any("changed elsewhere" in n for n in notifications(app)), timeout=30)
            await wait_until(pilot, lambda: not screen.busy, timeout=30)
            assert not sending.done()  # the other client's turn still runs
            app.live.due = app.live.clock()
            app.live.tick()  # the next check: the view follows that turn, as on opening the session
            await wait_until(pilot, lambda: screen.replying or sending.done(), timeout=30)
            assert screen.replying and screen.status.turn != "not sent"
            await sending
        finally:
            await other.client.aclose()
        await wait_until(pilot, lambda: not screen.replying, timeout=60)
        await settle(app, pilot)
        assert texts(app)[-1] == next(t for t in reversed(texts_of_chat(other)))


def texts_of_chat(chat) -> list[tuple[str, str]]:
    return [(it.role, it.text) for it in chat.conversation.items if it.text and it.kind.name == "MESSAGE"]


async def test_a_session_deleted_elsewhere_is_said_and_a_send_does_not_bring_it_back(server, tmp_path):
    app = app_on(server, tmp_path)  # no live view: the check before the send finds it
    async with app.run_test(size=SIZE) as pilot:
        await turns(app, pilot, "one", "two")
        session = app.chat.session_id
        other = await chat_for(server)
        try:
            await other.client.delete_session(session)  # as the other app's F2, d
        finally:
            await other.client.aclose()
        screen = app.chat_screen
        screen.composer.text = "three"
        await pilot.press("enter")
        await settle(app, pilot)
        assert any("no longer on the server" in n for n in notifications(app))
        assert screen.composer.text == "three"  # kept, not sent into a session of the same id
        async with (await chat_for(server)).client as client:
            assert session not in [s.id for s in await client.list_sessions()]


async def test_the_live_view_says_a_session_was_deleted_elsewhere_and_keeps_the_draft(server, tmp_path):
    app = app_on(server, tmp_path, live=True)
    async with app.run_test(size=SIZE) as pilot:
        await turns(app, pilot, "one")
        app.live.stop()
        session = app.chat.session_id
        screen = app.chat_screen
        screen.composer.text = "half typed"
        other = await chat_for(server)
        try:
            await other.client.delete_session(session)
        finally:
            await other.client.aclose()
        await check_now(app, pilot)
        assert any("no longer on the server for you" in s for s in app.live.said)
        assert app.chat.session_id is None and user_texts(app) == []  # the view is the server's: gone
        assert screen.composer.text == "half typed"
        await pilot.press("enter")  # a new session, not the deleted one again
        await settle(app, pilot)
        assert app.chat.session_id not in (None, session) and user_texts(app) == ["half typed"]


async def test_the_status_says_the_turn_the_view_shows_after_it_followed_a_change(server, tmp_path):
    app = app_on(server, tmp_path, live=True)
    async with app.run_test(size=SIZE) as pilot:
        await turns(app, pilot, "one", "two")
        app.live.stop()
        screen = app.chat_screen
        await pilot.press("alt+up", "alt+e")
        await settle(app, pilot)
        other = await chat_for(server, app.chat.session_id)
        try:
            await other.send("three")
            screen.composer.text = "two, edited"
            await pilot.press("enter")  # refused: changed elsewhere
            await settle(app, pilot)
            assert screen.status.turn == "not sent"  # what became of the edit, said once
            await other.send("four")
        finally:
            await other.client.aclose()
        await check_now(app, pilot)
        assert "Another client sent a turn in this session: 1 turn came." in app.live.said
        assert screen.status.turn == app.chat.conversation.turn_state  # the session's turn, as the view shows it


async def test_an_edit_open_when_the_embedded_server_died_ends_with_the_draft_back(tmp_path):
    connector = AppConnector(settings_in(tmp_path))
    app = new_app(connector, hint=connector.hint, new_session=True, live=True)
    async with app.run_test(size=SIZE) as pilot:
        await turns(app, pilot, "one", "two")
        screen = app.chat_screen
        screen.composer.text = "my precious draft"
        await pilot.press("alt+up", "alt+e")  # editing "two": the draft is set aside
        await settle(app, pilot)
        assert app.chat.edit is not None and screen.banner.kind == "edit"
        os.kill(connector.connection.server.pid, signal.SIGKILL)
        restarted = "The embedded server was restarted and the app is connected again."
        await wait_until(pilot, lambda: restarted in app.live.said, timeout=60)
        await settle(app, pilot)
        assert app.chat.edit is None  # the session was opened again: no edit is open
        assert screen.banner.kind == ""  # and none is offered ("Enter resends")
        assert not screen.memory.stash.holding
        assert screen.composer.text == "my precious draft\ntwo"  # the draft back, the edit's text kept


def in_terminal(app: RewindApp, data_dir, terminal: str) -> RewindApp:
    """The app as started in ``terminal`` (its tty): which session it reopens is kept per terminal."""
    app.last_session = LastSession(data_dir, terminal=terminal)
    return app


async def test_two_apps_restarted_each_reopen_their_own_session_and_draft(server, tmp_path):
    first = in_terminal(app_on(server, tmp_path), tmp_path, "/dev/pts/1")
    async with first.run_test(size=SIZE) as pilot:
        await turns(first, pilot, "the first app's session")
        mine = first.chat.session_id
        other = in_terminal(app_on(server, tmp_path), tmp_path, "/dev/pts/2")
        async with other.run_test(size=SIZE) as other_pilot:
            await turns(other, other_pilot, "the other app's session")
            theirs = other.chat.session_id
            first.chat_screen.composer.text = "the first app's draft"
            other.chat_screen.composer.text = "the other app's draft"
            await pilot.press("ctrl+q")
            await wait_until(pilot, lambda: first.return_code is not None)
            await other_pilot.press("ctrl+q")
            await wait_until(other_pilot, lambda: other.return_code is not None)
    for terminal, session, draft in (
        ("/dev/pts/1", mine, "the first app's draft"),
        ("/dev/pts/2", theirs, "the other app's draft"),
    ):
        again = in_terminal(
            new_app(connector_for(server.agent_url, server.api_url), new_session=False, data_dir=tmp_path),
            tmp_path,
            terminal,
        )
        async with again.run_test(size=SIZE) as pilot:
            await settle(again, pilot)
            assert again.chat.session_id == session
            assert again.chat_screen.composer.text == draft


async def test_the_search_finds_a_turn_another_client_rewound_while_it_was_open(server, tmp_path):
    from rewindtui.tui.widgets.search_bar import SearchBar

    app = app_on(server, tmp_path, live=True)
    async with app.run_test(size=SIZE) as pilot:
        await turns(app, pilot, "one", "two zebra")
        app.live.stop()
        await pilot.press("ctrl+f", *"zebra")
        await settle(app, pilot)
        box = app.chat_screen.query_one(SearchBar)
        assert "no rewound turns in this session" in box.count_text
        other = await chat_for(server, app.chat.session_id)
        try:
            await other.rewind(other.conversation.turn_invocations()[1])  # "two zebra" is rewound
        finally:
            await other.client.aclose()
        await check_now(app, pilot)
        assert "Another client rewound this session: 1 turn went." in app.live.said
        await settle(app, pilot)  # the rewound turns are read again
        assert "no rewound turns" not in box.count_text and "rewound turns included" in box.count_text
        hit = app.chat_screen.search.current
        assert hit is not None and hit.rewound, box.count_text  # found where it now is: in a rewound turn
