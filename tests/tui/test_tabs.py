"""Tabs: several agents at once in the app (issue 34). Two tabs on two different servers (two
embedded servers, real HTTP over loopback, real SQLite): one streams a slow reply while hidden,
the other rewinds; both end as their servers hold them."""

from __future__ import annotations

import pytest

from kit.apps import connector_for, make_app, new_app
from kit.pilot import SIZE, notifications, send, server_tasks, settle, user_texts_of, wait_until
from kit.servers import embedded_fixture
from rewindtui.chat import Chat
from rewindtui.config.connection import AppConnector
from rewindtui.config.settings import load_settings
from rewindtui.model import ItemKind
from rewindtui.tui.app import RewindApp
from rewindtui.tui.screens.confirm import ConfirmScreen
from rewindtui.tui.screens.new_tab import NewTabScreen
from rewindtui.tui.tabs import FIRST_MODE
from rewindtui.tui.widgets.tab_strip import TabStrip

#: the demo model waits this long between streamed deltas: the long reply below takes seconds
slow = embedded_fixture("tabs-slow", demo_delay=0.3)
LONG = " ".join(["and tell it at length"] * 10)


def users(chat: Chat) -> list[str]:
    return [it.text for it in chat.conversation.items if it.kind is ItemKind.MESSAGE and it.role == "user"]


def agent_texts(chat: Chat) -> list[str]:
    return [it.text for it in chat.conversation.items if it.kind is ItemKind.MESSAGE and it.role != "user" and it.text]


def strip_of(app: RewindApp) -> TabStrip:
    return app.chat_screen.query_one(TabStrip)


def app_with_saved_agent(tmp_path, first_url: str, second_url: str) -> RewindApp:
    """The app on ``first_url`` as ``rewindtui --url`` starts it, a config file saving the agent
    ``second`` at ``second_url`` (what ctrl+t offers)."""
    config = tmp_path / "config.toml"
    config.write_text(f'[agents.second]\nurl = "{second_url}"\n', encoding="utf-8")
    data = tmp_path / "data"
    settings = load_settings({"url": first_url, "config": str(config), "data_dir": str(data)}, env={})
    return new_app(AppConnector(settings), data_dir=data)


@pytest.mark.slow
async def test_two_tabs_on_two_servers_one_streams_while_the_other_rewinds(slow, server, tmp_path):
    app = app_with_saved_agent(tmp_path, slow.agent_url, server.agent_url)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        first = app.tabs.current
        assert len(app.tabs) == 1 and not app.chat_screen.query(TabStrip)  # one tab: the app as before
        await send(app, pilot, "a1")
        # ctrl+t: the list offers this agent and the saved one; Esc backs out with no tab
        await pilot.press("ctrl+t")
        await wait_until(pilot, lambda: isinstance(app.screen, NewTabScreen))
        await pilot.press("escape")
        await pilot.pause()
        assert len(app.tabs) == 1 and app.screen is first.screen
        await pilot.press("ctrl+t")
        await wait_until(pilot, lambda: isinstance(app.screen, NewTabScreen))
        await pilot.press("down", "enter")
        await wait_until(pilot, lambda: len(app.tabs) == 2 and app.chat is not None)
        second = app.tabs.current
        assert second is not first and second.agent == "second" and app.current_mode != FIRST_MODE
        assert second.chat is not None and second.chat.client.config.url == server.agent_url
        assert first.chat is not None and first.chat.client.config.url == slow.agent_url
        await settle(app, pilot)
        await send(app, pilot, "b1")
        await send(app, pilot, "b2")
        assert [e.shown for e in strip_of(app).entries] == [False, True]
        # tab 1 (ctrl+PgUp): a slow reply starts, then tab 2 is shown again while it streams
        await pilot.press("ctrl+pageup")
        await pilot.pause()
        assert app.tabs.current is first and app.chat is first.chat and app.screen is first.screen
        first.screen.composer.text = f"a2 {LONG}"
        await pilot.press("enter")
        await wait_until(pilot, lambda: any(it.streaming for it in first.chat.conversation.items))
        await pilot.press("ctrl+pagedown")
        await pilot.pause()
        assert app.tabs.current is second and app.screen is second.screen
        await wait_until(pilot, lambda: strip_of(app).entries[0].news == "streaming")
        # tab 2 rewinds its last turn (the preview, then Enter) while tab 1 streams, hidden
        screen = second.screen
        await pilot.press("alt+up")
        await pilot.pause()
        assert screen.rewind_mode
        await pilot.press("enter")
        await wait_until(pilot, lambda: not screen.rewinding and users(second.chat) == ["b1"], timeout=30)
        streamed = agent_texts(first.chat)[-1]
        assert first.screen.replying, "tab 1's reply ended before tab 2's rewind did: the test proves nothing"
        assert user_texts_of(await server_tasks(server, second.chat.session_id)) == ["b1"]  # the server's truth
        # tab 1's reply went on growing, unseen, and ends as its server holds it
        await wait_until(pilot, lambda: not first.screen.replying, timeout=60)
        await wait_until(pilot, lambda: strip_of(app).entries[0].news == "news")
        a_tasks = await server_tasks(slow, first.chat.session_id)
        assert user_texts_of(a_tasks) == ["a1", f"a2 {LONG}"] == users(first.chat)
        assert [t["status"]["state"] for t in a_tasks] == ["completed", "completed"]
        assert len(agent_texts(first.chat)[-1]) > len(streamed) and LONG in agent_texts(first.chat)[-1]
        assert users(second.chat) == ["b1"] and second.chat.session_id != first.chat.session_id
        # back to tab 1: its news is read
        await pilot.press("ctrl+pageup")
        await pilot.pause()
        assert app.tabs.current is first and [e.news for e in strip_of(app).entries] == ["", ""]
        # tab 2 kept its own undo across the switches: ctrl+z there brings its rewound turn back
        await pilot.press("ctrl+pagedown")
        await pilot.pause()
        assert "undo the rewind" in second.screen.status.undo
        await pilot.press("ctrl+z")
        await wait_until(pilot, lambda: not screen.rewinding and users(second.chat) == ["b1", "b2"], timeout=30)
        assert user_texts_of(await server_tasks(server, second.chat.session_id)) == ["b1", "b2"]
        assert users(first.chat) == ["a1", f"a2 {LONG}"]  # tab 1 untouched by it


@pytest.mark.slow
async def test_close_tab_keeps_its_draft_and_a_tab_of_one_says_so(server, tmp_path):
    data = tmp_path / "data"
    app = make_app(server, data_dir=data)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        await pilot.press("alt+w")  # one tab: nothing to close
        await pilot.pause()
        assert len(app.tabs) == 1 and "This is the only tab; ctrl+q quits." in notifications(app)
        await send(app, pilot, "first tab")
        app.chat_screen.composer.text = "/tab"  # as ctrl+t: no saved agents (a given connector), this agent
        await pilot.press("enter")
        await wait_until(pilot, lambda: len(app.tabs) == 2 and app.chat is not None)
        await settle(app, pilot)
        second = app.tabs.current
        assert second.chat.session_id != app.tabs.tabs[0].chat.session_id
        await send(app, pilot, "second tab")
        session = second.chat.session_id
        second.screen.composer.text = "unsent words"
        await pilot.press("alt+w")
        await wait_until(pilot, lambda: len(app.tabs) == 1)
        await settle(app, pilot)
        assert app.current_mode == FIRST_MODE and app.screen is app.tabs.current.screen
        assert not app.chat_screen.query(TabStrip)  # one tab again: no strip
        assert second.closed and second.closer is None  # its connection was released
        # the draft was kept for its session (the composer's store): opening it again brings it back
        assert app.draft_store is not None
        assert app.draft_store.load(second.chat.client.config.url, session) == "unsent words"
        # /tabclose closes as alt+w does
        await pilot.press("ctrl+t")
        await wait_until(pilot, lambda: len(app.tabs) == 2 and app.chat is not None)
        await settle(app, pilot)
        app.chat_screen.composer.text = "/tabclose"
        await pilot.press("enter")
        await wait_until(pilot, lambda: len(app.tabs) == 1)


async def test_a_click_on_the_strip_shows_that_tab():
    """Two tabs over the kagent 0.10.4 captures (no server): a click on the first tab's name."""
    from kit.offline import offline_app, offline_chat

    second = offline_chat(["03_turn_with_tool_call"])
    app = offline_app(offline_chat(["02_turn_plain_text"]))
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        await app.open_tab(None, chat=second, agent="second")
        await pilot.pause()
        assert app.tabs.index == 1 and app.chat is second
        await pilot.click(TabStrip, offset=(3, 0))
        await pilot.pause()
        assert app.tabs.index == 0 and app.chat is not second and app.screen is app.tabs.current.screen


@pytest.mark.slow
async def test_closing_a_tab_during_a_reply_asks_then_stops_it(slow, tmp_path):
    app = make_app(slow, data_dir=tmp_path / "data")
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        await pilot.press("ctrl+t")
        await wait_until(pilot, lambda: len(app.tabs) == 2 and app.chat is not None)
        await settle(app, pilot)
        second = app.tabs.current
        second.screen.composer.text = f"long {LONG}"
        await pilot.press("enter")
        await wait_until(pilot, lambda: any(it.streaming for it in second.chat.conversation.items))
        await pilot.press("alt+w")
        await pilot.pause()
        assert isinstance(app.screen, ConfirmScreen) and app.screen.purpose == "close-tab"
        await pilot.press("escape")  # stay: nothing closed, the reply goes on
        await pilot.pause()
        assert len(app.tabs) == 2 and second.screen.replying
        await pilot.press("alt+w")
        await pilot.pause()
        await pilot.press("y")
        await wait_until(pilot, lambda: len(app.tabs) == 1, timeout=30)
        # the reply was stopped on its server, not left running behind a closed tab
        tasks = await server_tasks(slow, second.chat.session_id)
        assert [t["status"]["state"] for t in tasks] == ["canceled"]


@pytest.mark.slow
async def test_sessions_panel_opens_a_session_in_a_new_tab(server, tmp_path):
    app = make_app(server, data_dir=tmp_path / "data")
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        await send(app, pilot, "older session")
        older = app.chat.session_id
        await pilot.press("ctrl+n")
        await settle(app, pilot)
        await send(app, pilot, "newer session")
        newer = app.chat.session_id
        await pilot.press("f2")
        await settle(app, pilot)
        panel = app.chat_screen.sessions
        panel.highlighted = [s.id for s in panel.sessions].index(older)
        await pilot.press("t")
        await wait_until(pilot, lambda: len(app.tabs) == 2 and app.chat is not None)
        await settle(app, pilot)
        assert app.chat.session_id == older and users(app.chat) == ["older session"]
        assert app.tabs.tabs[0].chat.session_id == newer  # the first tab still has its session
        # the same session again: the tab that has it is shown, no third tab
        await pilot.press("ctrl+pageup")
        await pilot.pause()
        first_panel = app.chat_screen.sessions
        if not app.chat_screen.panel.shown:
            await pilot.press("f2")
            await settle(app, pilot)
        first_panel.focus()
        first_panel.highlighted = [s.id for s in first_panel.sessions].index(older)
        await pilot.press("t")
        await wait_until(pilot, lambda: app.tabs.index == 1)
        assert len(app.tabs) == 2 and "That session is open in tab 2." in notifications(app)


async def test_new_tab_on_a_given_connection_says_why_not(server):
    from kit.servers import connected_chat

    chat = await connected_chat(server)
    await chat.open(None)
    app = RewindApp(None, chat=chat, live=False)
    app.animation_level = "none"
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        await pilot.press("ctrl+t")
        await pilot.pause()
        assert len(app.tabs) == 1
        assert "This app was given its connection; it cannot open another tab." in notifications(app)
    await chat.client.aclose()


def test_tab_list_order_and_news():
    from rewindtui.tui.tabs import Tab, Tabs

    tabs = Tabs([Tab(FIRST_MODE)])
    second, third = Tab(tabs.new_mode()), Tab(tabs.new_mode())
    assert tabs.add(second) == 1
    tabs.index = 1
    assert tabs.add(third) == 2 and [t.mode for t in tabs] == [FIRST_MODE, "tab-1", "tab-2"]
    assert tabs.step(1) == 2 and tabs.step(2) == 0 and tabs.step(-2) == 2
    tabs.index = 2
    assert tabs.remove(third) == 1 and tabs.current is second  # the shown one goes: its neighbour
    tabs.index = 1
    assert tabs.remove(tabs.tabs[0]) == 0 and tabs.current is second  # one before it goes: it stays shown
    assert tabs.news(second) == ""  # shown: never marked
    assert Tabs().new_mode() == "tab-1" and tabs.new_mode() == "tab-3"  # a closed tab's mode is not reused
    assert connector_for  # the kit's connector is what make_app uses (imported for the tests above)


@pytest.mark.slow
async def test_quit_keeps_a_hidden_tabs_draft_and_asks_while_a_hidden_tab_streams(slow, tmp_path):
    app = make_app(slow, data_dir=tmp_path / "data")
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        await send(app, pilot, "first")
        first = app.tabs.current
        await pilot.press("ctrl+t")
        await wait_until(pilot, lambda: len(app.tabs) == 2 and app.chat is not None)
        await settle(app, pilot)
        second = app.tabs.current
        await send(app, pilot, "second")
        second.screen.composer.text = f"long {LONG}"
        await pilot.press("enter")
        await wait_until(pilot, lambda: any(it.streaming for it in second.chat.conversation.items))
        second.screen.composer.text = "draft in the hidden tab"
        await pilot.press("ctrl+pageup")  # the first shown; the second hidden, streaming, with a draft
        await pilot.pause()
        first.screen.composer.text = "draft in the shown tab"
        await pilot.press("ctrl+q")
        await pilot.pause()
        assert isinstance(app.screen, ConfirmScreen) and app.screen.purpose == "quit"
        assert "still under way in tab 2" in app.screen.title_text
        await pilot.press("escape")  # stay: nothing is kept away or cleared
        await pilot.pause()
        assert first.screen.composer.text == "draft in the shown tab"
        assert second.screen.composer.text == "draft in the hidden tab" and second.screen.replying
        await pilot.press("ctrl+q")
        await pilot.pause()
        await pilot.press("y")
        await wait_until(pilot, lambda: app.return_code is not None, timeout=10)
    drafts = app.draft_store
    assert drafts is not None
    assert drafts.load(first.chat.client.config.url, first.chat.session_id) == "draft in the shown tab"
    assert drafts.load(second.chat.client.config.url, second.chat.session_id) == "draft in the hidden tab"


async def test_a_hidden_tabs_question_waits_in_that_tab():
    """A dialog a tab not shown opens (as its features do with ``app.push_screen``, e.g. queued
    messages after its reply failed) goes on that tab's stack; the strip marks the tab with ?."""
    from kit.offline import offline_app, offline_chat

    second = offline_chat(["03_turn_with_tool_call"])
    app = offline_app(offline_chat(["02_turn_plain_text"]))
    answers: list[bool | None] = []
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        first = app.tabs.current
        await app.open_tab(None, chat=second, agent="second")
        await pilot.pause()
        question = ConfirmScreen("Send the queued messages?", "", go="Send", purpose="queued")
        first.screen.call_later(lambda: app.push_screen(question, answers.append))  # from the hidden tab
        await wait_until(pilot, lambda: strip_of(app).entries[0].news == "asks")
        assert app.screen is app.tabs.current.screen and app.tabs.current is not first  # not over tab 2
        await pilot.press("ctrl+pageup")
        await pilot.pause()
        assert app.tabs.current is first and app.screen is question
        await pilot.press("y")
        await pilot.pause()
        assert answers == [True] and app.screen is first.screen


async def test_the_first_tab_can_be_closed_and_the_other_goes_on():
    from kit.offline import offline_app, offline_chat

    second = offline_chat(["03_turn_with_tool_call"])
    app = offline_app(offline_chat(["02_turn_plain_text"]))
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        first = app.tabs.current
        await app.open_tab(None, chat=second, agent="second")
        await pilot.press("ctrl+pageup")
        await pilot.pause()
        assert app.tabs.current is first
        await pilot.press("alt+w")
        await wait_until(pilot, lambda: len(app.tabs) == 1)
        await pilot.pause()
        assert first.closed and app.chat is second and app.screen is app.chat_screen is app.tabs.current.screen
        assert app.current_mode != FIRST_MODE and not app.chat_screen.query(TabStrip)
        app.chat_screen.composer.text = "still typing here"
        await pilot.press("ctrl+pagedown")  # one tab: it says so, nothing moves
        await pilot.pause()
        assert app.screen is app.tabs.current.screen and app.chat_screen.composer.text == "still typing here"
        assert "This is the only tab (ctrl+t opens another)." in notifications(app)


async def test_a_hidden_tabs_notice_names_its_tab():
    from kit.offline import offline_app, offline_chat

    app = offline_app(offline_chat(["02_turn_plain_text"]))
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        first = app.tabs.current
        await app.open_tab(None, chat=offline_chat(["03_turn_with_tool_call"]), agent="second")
        await pilot.pause()
        first.screen.call_later(lambda: first.screen.notify("Stopped: the turn is canceled.", title="Stop"))
        app.tabs.current.screen.call_later(lambda: app.tabs.current.screen.notify("Shown tab's own notice."))
        await wait_until(pilot, lambda: len(app._notifications) >= 2)
        titles = {n.message: n.title for n in app._notifications}
        assert titles["Stopped: the turn is canceled."] == "Tab 1 · Stop"
        assert titles["Shown tab's own notice."] == ""  # the shown tab's notices are as they were


@pytest.mark.slow
async def test_a_tab_that_cannot_connect_offers_to_close_itself(server, tmp_path):
    """A saved agent nobody answers at: its tab's connect screen offers Close tab (not Quit), and
    Esc closes that tab alone; the first tab is as it was."""
    from rewindtui.tui.screens.connect_error import ConnectErrorScreen

    app = app_with_saved_agent(tmp_path, server.agent_url, "http://127.0.0.1:9/")
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        first = app.tabs.current
        first.screen.composer.text = "kept as it was"
        await pilot.press("ctrl+t")
        await wait_until(pilot, lambda: isinstance(app.screen, NewTabScreen))
        await pilot.press("down", "enter")
        await wait_until(pilot, lambda: isinstance(app.screen, ConnectErrorScreen), timeout=30)
        assert len(app.tabs) == 2 and app.screen.leave == "Close tab"
        await pilot.press("escape")
        await wait_until(pilot, lambda: len(app.tabs) == 1)
        await pilot.pause()
        assert app.return_code is None and app.tabs.current is first and app.screen is first.screen
        assert first.screen.composer.text == "kept as it was" and first.chat is not None
