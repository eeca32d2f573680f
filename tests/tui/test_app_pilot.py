"""The real app driven by Pilot against the real embedded server over loopback HTTP."""

from __future__ import annotations

from captures import load
from fakeserver import FakeServer, Reply
from kit.apps import connector_for, make_app
from kit.fakes import rewind_gate
from kit.pilot import (
    SIZE,
    header_offset,
    hold_escape_clock,
    notifications,
    screen_lines,
    send,
    server_tasks,
    server_users,
    settle,
    texts,
    three_turns,
    turns,
    user_texts,
    user_texts_of,
    wait_until,
)
from rewindtui.model import Change
from rewindtui.tui.app import RewindApp
from rewindtui.tui.widgets.transcript import Transcript


async def test_type_and_send(server):
    app = make_app(server)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        await pilot.press(*"hello there")
        await pilot.press("enter")
        await settle(app, pilot)
        assert texts(app)[0] == ("user", "hello there")
        assert texts(app)[1][0] == "agent" and texts(app)[1][1].startswith("You said: hello there (turn 1;")
        assert app.chat_screen.composer.text == ""
        assert app.chat.conversation.turn_state == "completed"
        assert app.chat_screen.status.turn == "completed"


async def test_click_rewind_previews_then_confirm_cuts_at_once_and_server_answer_becomes_the_view(server):
    gate = rewind_gate()
    app = make_app(server, transport=gate)
    async with app.run_test(size=SIZE) as pilot:
        invocations = await three_turns(app, pilot)
        assert len(invocations) == 3
        screen = app.chat_screen
        conv = app.chat.conversation
        transcript = screen.transcript
        before = list(conv.items)
        index = next(i for i, it in enumerate(conv.items) if it.invocation_id == invocations[1] and it.role == "agent")
        await pilot.pause()
        x, y = header_offset(transcript, index, "Rewind to here")
        await pilot.click(Transcript, offset=(x, y))
        await pilot.pause()
        # the click only previews: rewind mode, the turn selected, nothing cut, nothing sent
        assert screen.rewind_mode and transcript.preview
        assert transcript.selected().invocation_id == invocations[1]
        assert conv.items == before
        assert "2 turns" in screen.banner.text and "Rewind mode" in screen.banner.text
        assert not gate.held.is_set()
        # the banner's button confirms; the request is held at the gate (the server has not seen it)
        await pilot.click("#banner-confirm")
        await wait_until(pilot, gate.held.is_set)
        # optimistic: the view is cut at once, before the server answers, and says it is rewinding
        assert [it.invocation_id for it in conv.items] == [invocations[0], invocations[0]]
        assert conv.items == before[:2]  # the very same items: nothing re-read yet
        assert screen.status.turn == "rewinding…" and app.chat.rewinding
        assert user_texts_of(await server_tasks(server, app.chat.session_id)) == ["first", "weather in Oslo", "third"]
        gate.open()
        await settle(app, pilot)
        # final: the server's effective history is the view (new items, same content)
        assert user_texts(app) == ["first"]
        assert conv is not app.chat.conversation or conv.items[0] is not before[0]
        assert await server_users(server, app) == ["first"]
        assert screen.status.turn != "rewinding…"
        assert "Rewound 2 turns — ctrl+z undoes it." in notifications(app)
        # the model no longer sees turns 2-3, and the tool's state went back
        await send(app, pilot, "again")
        answer = texts(app)[-1][1]
        assert "history: ['first', 'again']" in answer and "weather_calls=0" in answer


async def test_keyboard_rewind_mode(server):
    app = make_app(server)
    async with app.run_test(size=SIZE) as pilot:
        invocations = await three_turns(app, pilot)
        screen = app.chat_screen
        transcript = screen.transcript
        hold_escape_clock(app)  # two Escs are a double however slowly they come
        # alt+up enters rewind mode on the last turn; up selects the turn before
        await pilot.press("alt+up")
        assert screen.rewind_mode and transcript.has_focus
        assert transcript.selected().invocation_id == invocations[2]
        await pilot.press("up")
        assert transcript.selected().invocation_id == invocations[1]
        await pilot.press("down")
        assert transcript.selected().invocation_id == invocations[2]
        await pilot.press("enter")
        await settle(app, pilot)
        assert user_texts(app) == ["first", "weather in Oslo"]
        assert not screen.rewind_mode and screen.composer.has_focus
        # Esc Esc on an empty composer enters rewind mode on the last turn; Enter confirms
        await pilot.press("escape", "escape")
        await pilot.pause()
        assert screen.rewind_mode and transcript.selected().invocation_id == invocations[1]
        assert await server_users(server, app) == ["first", "weather in Oslo"]  # nothing sent yet
        await pilot.press("enter")
        await settle(app, pilot)
        assert user_texts(app) == ["first"]
        assert await server_users(server, app) == ["first"]


def enter_says(app) -> str:
    """What the footer shows for Enter in the composer."""
    from textual.widgets._footer import FooterKey

    (key,) = [k for k in app.chat_screen.query(FooterKey) if k.action == "submit"]
    return key.description


async def test_edit_and_resend(server):
    app = make_app(server)
    async with app.run_test(size=SIZE) as pilot:
        await three_turns(app, pilot)
        await pilot.press("alt+up", "up", "alt+e")
        await pilot.pause()
        screen = app.chat_screen
        composer = screen.composer
        assert composer.text == "weather in Oslo" and composer.has_focus
        assert user_texts(app) == ["first"]  # set aside at once; nothing sent
        assert screen.status.mode == "edit" and "Editing" in screen.banner.text and "1 later turn" in screen.banner.text
        await wait_until(pilot, lambda: enter_says(app) == "Resend")  # as the banner: Enter resends
        composer.text = "weather in Lima"
        await pilot.press("enter")
        await settle(app, pilot)
        assert user_texts(app) == ["first", "weather in Lima"]
        assert "Lima" in texts(app)[-1][1] and "weather_calls=1" in texts(app)[-1][1]
        assert await server_users(server, app) == ["first", "weather in Lima"]
        assert "Rewound 2 turns and sent the edited message." in notifications(app)


async def test_edit_cancel_restores_view(server):
    app = make_app(server)
    async with app.run_test(size=SIZE) as pilot:
        invocations = await three_turns(app, pilot)
        before = [(it.key, it.text) for it in app.chat.conversation.items]
        item = next(
            it for it in app.chat.conversation.items if it.invocation_id == invocations[0] and it.role == "user"
        )
        assert enter_says(app) == "Send"
        app.chat_screen.handle_action("edit", item)
        await pilot.pause()
        assert app.chat.conversation.items == []
        await wait_until(pilot, lambda: enter_says(app) == "Resend")
        await pilot.press("escape")
        await pilot.pause()
        await wait_until(pilot, lambda: enter_says(app) == "Send")
        assert [(it.key, it.text) for it in app.chat.conversation.items] == before
        assert app.chat_screen.composer.text == "" and app.chat_screen.banner.kind == ""
        assert len(await server_users(server, app)) == 3


async def test_fork_switches_and_keeps_original(server):
    app = make_app(server)
    async with app.run_test(size=SIZE) as pilot:
        await three_turns(app, pilot)
        original = app.chat.session_id
        await pilot.press("alt+up", "alt+f")
        await settle(app, pilot)
        assert app.chat.session_id != original
        assert user_texts(app) == ["first", "weather in Oslo"]
        assert user_texts_of(await server_tasks(server, original)) == ["first", "weather in Oslo", "third"]
        # the original is listed in the sessions panel
        await pilot.press("f2")
        await settle(app, pilot)
        ids = [app.chat_screen.sessions.get_option_at_index(i).id for i in range(app.chat_screen.sessions.option_count)]
        assert original in ids and app.chat.session_id in ids


async def test_reopen_shows_rewound_view_at_its_latest_turn(server):
    app = make_app(server)
    async with app.run_test(size=SIZE) as pilot:
        invocations = await three_turns(app, pilot)
        session_id = app.chat.session_id
        await app.chat.rewind(invocations[1])
        await settle(app, pilot)
    again = make_app(server, session_id=session_id)
    async with again.run_test(size=SIZE) as pilot:
        await settle(again, pilot)
        assert again.chat.session_id == session_id
        assert user_texts(again) == ["first"]


async def test_failing_rewind_rolls_back(server):
    app = make_app(server)
    async with app.run_test(size=SIZE) as pilot:
        await three_turns(app, pilot)
        conv = app.chat.conversation
        screen = app.chat_screen
        before = [(it.key, it.text, it.invocation_id) for it in conv.items]
        # an invocation id the server does not know: the server refuses, the view comes back
        bogus = conv.items[2]
        bogus.invocation_id = "e-not-an-invocation-of-this-session"
        before[2] = (bogus.key, bogus.text, bogus.invocation_id)
        seen: list[int] = []
        listener = app.chat.listener

        def spy(change):
            seen.append(len(app.chat.conversation.items))
            listener(change)

        app.chat.listener = spy
        assert screen.enter_rewind_mode(2)
        await pilot.press("enter")
        await settle(app, pilot)
        assert seen[0] == 2  # the optimistic truncation was shown first
        assert [(it.key, it.text, it.invocation_id) for it in app.chat.conversation.items] == before
        assert not app.chat.rewinding and screen.status.turn != "rewinding…"
        assert any("rewind refused" in n.lower() and "unchanged" in n for n in notifications(app))
        assert len(await server_users(server, app)) == 3


async def test_server_without_rewind_shows_it_disabled_and_receives_nothing():
    card = load("kagent-0.10.4/01_agent_card.txt")
    turn = load("kagent-0.10.4/02_turn_plain_text.txt")
    with FakeServer() as stock:
        stock.route("GET", "/.well-known/agent-card.json", Reply.capture(card))
        stock.route("POST", "/", Reply.capture(turn))
        app = RewindApp(connector_for(stock.url + "/", None))
        async with app.run_test(size=SIZE) as pilot:
            await settle(app, pilot)
            screen = app.chat_screen
            assert screen.status.rewind == "unavailable"
            await send(app, pilot, "hello")
            transcript = screen.transcript
            shown = len(app.chat.conversation.items)
            assert not transcript.buttons.rewind and not transcript.buttons.fork
            index = next(i for i, it in enumerate(app.chat.conversation.items) if it.rewind_target)
            x, y = header_offset(transcript, index, "Rewind to here")
            await pilot.click(Transcript, offset=(x, y))
            await pilot.hover(Transcript, offset=(x, y))
            await pilot.pause()
            assert "does not support rewind" in str(transcript.tooltip)
            assert not screen.rewind_mode  # no mode to enter: nothing could be done there
            await pilot.press("alt+up", "r", "e", "f")
            await pilot.press("escape", "escape", "escape")
            await settle(app, pilot)
            posts = [r.json for r in stock.requests_to("POST", "/")]
            assert len(posts) == 1  # only the one real turn
            assert "kagent_rewind_before_invocation_id" not in str(posts)
            assert len(app.chat.conversation.items) == shown  # nothing truncated


async def test_unreachable_server_shows_error_screen_and_keeps_running():
    from fakeserver import closed_port
    from rewindtui.tui.screens.connect_error import ConnectErrorScreen

    url = f"http://127.0.0.1:{closed_port()}/"
    app = RewindApp(connector_for(url, None), hint="start the server")
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        assert isinstance(app.screen, ConnectErrorScreen)
        assert "127.0.0.1" in app.screen.error
        await pilot.press("r")  # retry: fails again, the screen comes back, no traceback
        await settle(app, pilot)
        assert isinstance(app.screen, ConnectErrorScreen)
        await pilot.press("q")
        await pilot.pause()
    assert app.return_value == 1


async def test_reloaded_items_are_redrawn_not_served_from_the_old_cache(server):
    app = make_app(server)
    async with app.run_test(size=SIZE) as pilot:
        await three_turns(app, pilot)
        transcript = app.chat_screen.transcript
        conv = app.chat.conversation
        item = conv.items[-1]
        # the same message reloaded from the server with a different text (same key, same rev)
        wire = {"messageId": item.key, "role": item.role, "metadata": {"kagent_invocation_id": item.invocation_id}}
        clone = type(item).from_message(dict(wire, parts=[{"kind": "text", "text": "reloaded text"}]))
        assert clone.key == item.key and clone.rev == item.rev
        conv.items[-1] = clone
        transcript.apply_change(Change(first=len(conv.items) - 1))
        await pilot.pause()
        assert any("reloaded text" in line for line in screen_lines(transcript))


async def test_keymap_remaps_edit_and_what_is_shown_follows(server):
    """Issue 20: shown keys come from the same table as the bindings, after the user's keymap."""
    app = make_app(server, keymap={"transcript.edit": "alt+x"})
    async with app.run_test(size=SIZE) as pilot:
        await three_turns(app, pilot)
        screen = app.chat_screen
        await pilot.press("alt+up", "r")  # a letter is text: it leaves the preview
        await settle(app, pilot)
        assert len(app.chat.conversation.turn_invocations()) == 3
        assert screen.composer.text == "r" and not screen.rewind_mode
        screen.composer.text = ""
        await pilot.press("alt+up", "alt+x")
        await settle(app, pilot)
        assert app.chat.edit is not None and screen.composer.text == "third"
        await pilot.press("escape")
        await pilot.press("f1")
        await pilot.pause()
        from rewindtui.tui.screens.help import HelpScreen

        assert isinstance(app.screen, HelpScreen)
        shown = app.screen.plain()
        assert "alt+x" in shown and "alt+e" not in shown


async def test_a_worker_replaced_before_it_starts_leaves_no_coroutine_never_awaited(monkeypatch):
    """Each turn's end re-reads the open session's title in an exclusive worker group: a second
    re-read replaces the first before it has started. Its work is handed over uncalled, so nothing
    is left that Python reports as "coroutine ... was never awaited"."""
    import gc
    import warnings

    from kit.offline import offline_app, offline_chat

    chat = offline_chat()
    chat.conversation.session_id = "s1"
    monkeypatch.setattr(type(chat.client), "has_api", property(lambda self: True))
    app = offline_app(chat)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        panel = app.chat_screen.panel
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            panel.refresh()
            panel.refresh()  # replaces the first before it runs
            await pilot.pause()
            gc.collect()
        assert not [w for w in caught if "never awaited" in str(w.message)]


async def test_f2_then_enter_from_a_new_session_opens_the_newest(server):
    """A new session is not listed until it has a turn: the panel then highlights the newest
    session, so Enter opens it (it highlighted nothing, and Enter did nothing)."""
    app = make_app(server)
    async with app.run_test(size=SIZE) as pilot:
        await turns(app, pilot, "the older one")
        older = app.chat.session_id
        await pilot.press("ctrl+n")
        await settle(app, pilot)
        assert app.chat.session_id != older
        await pilot.press("f2")
        await settle(app, pilot)
        await pilot.press("enter")
        await settle(app, pilot)
        await wait_until(pilot, lambda: app.chat.session_id == older)
        assert user_texts(app) == ["the older one"]
