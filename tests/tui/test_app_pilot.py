"""The real app driven by Pilot against the real embedded server over loopback HTTP."""

from __future__ import annotations

import asyncio

import pytest

from captures import load
from fakeserver import FakeServer, Reply
from rewindtui.client import A2AClient, ServerConfig
from rewindtui.conversation import ItemKind
from rewindtui.server import EmbeddedServer
from rewindtui.tui.app import RewindApp
from rewindtui.tui.widgets.transcript import Transcript

SIZE = (120, 40)


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    with EmbeddedServer(tmp_path_factory.mktemp("pilot-data")) as running:
        yield running


def connector_for(url: str, api: str | None):
    async def connect():
        client = A2AClient(ServerConfig(url=url, api=api))

        async def close() -> None:
            await client.aclose()

        return client, close

    return connect


def make_app(server: EmbeddedServer, session_id: str | None = None) -> RewindApp:
    app = RewindApp(connector_for(server.agent_url, server.api_url), session_id=session_id, new_session=session_id is None)
    app.animation_level = "none"
    return app


async def settle(app: RewindApp, pilot) -> None:
    await pilot.pause()
    await app.workers.wait_for_complete()
    await pilot.pause()


async def send(app: RewindApp, pilot, text: str) -> None:
    app.chat_screen.composer.focus()
    app.chat_screen.composer.text = text
    await pilot.press("enter")
    await settle(app, pilot)


def texts(app: RewindApp) -> list[tuple[str, str]]:
    return [(it.role, it.text) for it in app.chat.conversation.items if it.kind is ItemKind.MESSAGE and it.text]


async def three_turns(app: RewindApp, pilot) -> list[str]:
    await settle(app, pilot)
    for text in ("first", "weather in Oslo", "third"):
        await send(app, pilot, text)
    return app.chat.conversation.turn_invocations()


async def server_tasks(server: EmbeddedServer, session_id: str) -> list[dict]:
    async with A2AClient(ServerConfig(url=server.agent_url, api=server.api_url)) as client:
        return await client.session_tasks(session_id)


def user_texts_of(tasks: list[dict]) -> list[str]:
    from rewindtui.conversation import extract_messages_from_tasks

    return [it.text for it in extract_messages_from_tasks(tasks) if it.role == "user"]


def button_offset(transcript: Transcript, index: int, label: str) -> tuple[int, int]:
    """Screen offset (within the transcript) of a button in the header of item ``index``."""
    transcript.scroll_to_item(index)
    y = transcript._starts[index] - int(transcript.scroll_y)
    header = "".join(seg.text for seg in transcript._header(transcript.conversation.items[index], transcript._layout_width))
    x = header.index(label) + 2
    return x, y


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


async def test_click_rewind_on_turn_two(server):
    app = make_app(server)
    async with app.run_test(size=SIZE) as pilot:
        invocations = await three_turns(app, pilot)
        assert len(invocations) == 3
        conv = app.chat.conversation
        transcript = app.chat_screen.transcript
        index = next(i for i, it in enumerate(conv.items) if it.invocation_id == invocations[1] and it.role == "agent")
        await pilot.pause()
        x, y = button_offset(transcript, index, "Rewind to here")
        await pilot.pause()
        await pilot.click(Transcript, offset=(x, y))
        # optimistic: the view is cut at once, before the server answers
        assert [t for _, t in texts(app)][:1] == ["first"]
        assert all(it.invocation_id == invocations[0] for it in conv.items)
        await settle(app, pilot)
        assert [t for r, t in texts(app) if r == "user"] == ["first"]
        tasks = await server_tasks(server, app.chat.session_id)
        assert user_texts_of(tasks) == ["first"]
        # the model no longer sees turns 2-3, and the tool's state went back
        await send(app, pilot, "again")
        answer = texts(app)[-1][1]
        assert "history: ['first', 'again']" in answer and "weather_calls=0" in answer


async def test_keyboard_rewind_and_escape_escape(server):
    app = make_app(server)
    async with app.run_test(size=SIZE) as pilot:
        invocations = await three_turns(app, pilot)
        # up from the empty composer selects the last message; up again moves further back
        await pilot.press("up")
        transcript = app.chat_screen.transcript
        assert transcript.has_focus and transcript.cursor == len(app.chat.conversation.items) - 1
        await pilot.press("up")  # the third turn's user message
        selected = transcript.selected()
        assert selected is not None and selected.invocation_id == invocations[2]
        await pilot.press("r")
        await settle(app, pilot)
        assert [t for r, t in texts(app) if r == "user"] == ["first", "weather in Oslo"]
        # Esc Esc rewinds the last turn
        app.chat_screen.composer.focus()
        await pilot.press("escape", "escape")
        await settle(app, pilot)
        assert [t for r, t in texts(app) if r == "user"] == ["first"]
        assert user_texts_of(await server_tasks(server, app.chat.session_id)) == ["first"]


async def test_edit_and_resend(server):
    app = make_app(server)
    async with app.run_test(size=SIZE) as pilot:
        invocations = await three_turns(app, pilot)
        conv = app.chat.conversation
        index = next(i for i, it in enumerate(conv.items) if it.invocation_id == invocations[1] and it.role == "user")
        transcript = app.chat_screen.transcript
        transcript.focus()
        transcript.cursor = index
        await pilot.press("e")
        await pilot.pause()
        composer = app.chat_screen.composer
        assert composer.text == "weather in Oslo" and composer.has_focus
        assert [t for r, t in texts(app) if r == "user"] == ["first"]  # truncated at once
        composer.text = "weather in Lima"
        await pilot.press("enter")
        await settle(app, pilot)
        users = [t for r, t in texts(app) if r == "user"]
        assert users == ["first", "weather in Lima"]
        assert "Lima" in texts(app)[-1][1] and "weather_calls=1" in texts(app)[-1][1]
        assert user_texts_of(await server_tasks(server, app.chat.session_id)) == ["first", "weather in Lima"]


async def test_edit_cancel_restores_view(server):
    app = make_app(server)
    async with app.run_test(size=SIZE) as pilot:
        invocations = await three_turns(app, pilot)
        before = [(it.key, it.text) for it in app.chat.conversation.items]
        item = next(it for it in app.chat.conversation.items if it.invocation_id == invocations[0] and it.role == "user")
        app.chat_screen.handle_action("edit", item)
        await pilot.pause()
        assert app.chat.conversation.items == []
        await pilot.press("escape")
        await pilot.pause()
        assert [(it.key, it.text) for it in app.chat.conversation.items] == before
        assert len(user_texts_of(await server_tasks(server, app.chat.session_id))) == 3


async def test_fork_switches_and_keeps_original(server):
    app = make_app(server)
    async with app.run_test(size=SIZE) as pilot:
        invocations = await three_turns(app, pilot)
        original = app.chat.session_id
        transcript = app.chat_screen.transcript
        transcript.focus()
        transcript.cursor = next(i for i, it in enumerate(app.chat.conversation.items) if it.invocation_id == invocations[2])
        await pilot.press("f")
        await settle(app, pilot)
        assert app.chat.session_id != original
        assert [t for r, t in texts(app) if r == "user"] == ["first", "weather in Oslo"]
        assert user_texts_of(await server_tasks(server, original)) == ["first", "weather in Oslo", "third"]
        # the original is listed in the sessions panel
        await pilot.press("f2")
        await settle(app, pilot)
        ids = [app.chat_screen.sessions.get_option_at_index(i).id for i in range(app.chat_screen.sessions.option_count)]
        assert original in ids and app.chat.session_id in ids


async def test_reopen_shows_rewound_view(server):
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
        assert [t for r, t in texts(again) if r == "user"] == ["first"]


async def test_failing_rewind_rolls_back(server):
    app = make_app(server)
    async with app.run_test(size=SIZE) as pilot:
        await three_turns(app, pilot)
        conv = app.chat.conversation
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
        app.chat_screen.handle_action("rewind", bogus)
        await settle(app, pilot)
        assert seen[0] == 2  # the optimistic truncation was shown first

        assert [(it.key, it.text, it.invocation_id) for it in app.chat.conversation.items] == before
        assert not app.chat.rewinding
        assert len(user_texts_of(await server_tasks(server, app.chat.session_id))) == 3


async def test_server_without_rewind_shows_it_disabled_and_receives_nothing():
    card = load("kagent-0.10.4/01_agent_card.txt")
    turn = load("kagent-0.10.4/02_turn_plain_text.txt")
    with FakeServer() as stock:
        stock.route("GET", "/.well-known/agent-card.json", Reply.capture(card))
        stock.route("POST", "/", Reply.capture(turn))
        app = RewindApp(connector_for(stock.url + "/", None))
        async with app.run_test(size=SIZE) as pilot:
            await settle(app, pilot)
            assert app.chat_screen.status.rewind == "unavailable"
            await send(app, pilot, "hello")
            transcript = app.chat_screen.transcript
            shown = len(app.chat.conversation.items)
            assert not transcript.permissions.rewind and not transcript.permissions.fork
            index = next(i for i, it in enumerate(app.chat.conversation.items) if it.rewind_target)
            x, y = button_offset(transcript, index, "Rewind to here")
            await pilot.click(Transcript, offset=(x, y))
            await pilot.hover(Transcript, offset=(x, y))
            await pilot.pause()
            assert "does not support rewind" in str(transcript.tooltip)
            transcript.focus()
            transcript.cursor = index
            await pilot.press("r", "e", "f")
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


async def test_markup_and_escapes_from_the_model_are_shown_literally(server):
    app = make_app(server)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        await send(app, pilot, "[bold red]x[/] \x1b[31mred\x1b[0m \x1b]52;c;Zm9v\x07")
        transcript = app.chat_screen.transcript
        lines = [transcript.render_line(y).text for y in range(transcript.size.height)]
        joined = "\n".join(lines)
        assert "[bold red]x[/]" in joined
        assert "\x1b" not in joined and "\x07" not in joined
        await asyncio.sleep(0)


async def test_reloaded_items_are_redrawn_not_served_from_the_old_cache(server):
    app = make_app(server)
    async with app.run_test(size=SIZE) as pilot:
        await three_turns(app, pilot)
        transcript = app.chat_screen.transcript
        conv = app.chat.conversation
        item = conv.items[-1]
        # the same message reloaded from the server with a different text (same key, same rev)
        clone = type(item).from_message(dict(item.raw, parts=[{"kind": "text", "text": "reloaded text"}]))
        assert clone.key == item.key and clone.rev == item.rev
        conv.items[-1] = clone
        from rewindtui.conversation import Change

        transcript.apply_change(Change(first=len(conv.items) - 1))
        await pilot.pause()
        lines = [transcript.render_line(y).text for y in range(transcript.size.height)]
        assert any("reloaded text" in line for line in lines)


async def test_keymap_remaps_rewind(server):
    app = RewindApp(
        connector_for(server.agent_url, server.api_url), new_session=True, keymap={"transcript.rewind": "x"}
    )
    async with app.run_test(size=SIZE) as pilot:
        invocations = await three_turns(app, pilot)
        transcript = app.chat_screen.transcript
        transcript.focus()
        transcript.cursor = app.chat.conversation.index_of_invocation(invocations[2])
        await pilot.press("r")  # no longer bound
        await settle(app, pilot)
        assert len(app.chat.conversation.turn_invocations()) == 3
        await pilot.press("x")
        await settle(app, pilot)
        assert app.chat.conversation.turn_invocations() == invocations[:2]
