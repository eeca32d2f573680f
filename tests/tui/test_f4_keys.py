"""Rewound turns shown in place (F4) by keyboard alone, against the real embedded server: the
chooser (alt+↑/↓) reaches a rewound turn and its banner says what that turn is and which keys
act on it (from the chat's gate for RESTORE and FORK); Enter and alt+Enter restore its branch,
alt+shift+b forks it (alt+b, which many terminals send as ctrl+left, too); the counts of an ordinary
preview leave rewound turns' messages out."""

from __future__ import annotations

from kit.apps import make_app
from kit.pilot import SIZE, server_tasks, settle, three_turns, user_texts_of, wait_until
from rewindtui.client.a2a_client import A2AClient, ServerConfig
from rewindtui.tui.screens.rewind_picker import RewindPicker


async def rewound_shown(app, pilot) -> None:
    """Three turns, the last two rewound, F4 on: first, then the rewound branch below it."""
    await three_turns(app, pilot)
    screen = app.chat_screen
    invocation = app.chat.conversation.turn_invocations()[1]
    assert screen.enter_rewind_mode(app.chat.conversation.index_of_invocation(invocation))
    await pilot.press("enter")
    await settle(app, pilot)
    await pilot.press("f4")
    await settle(app, pilot)
    await wait_until(pilot, lambda: any(i.rewound is not None for i in app.chat.conversation.items))


def banner_text(app) -> str:
    banner = app.chat_screen.banner
    return banner.text if banner.kind else ""


async def to_rewound_turn(app, pilot) -> None:
    """alt+↑ (the last current turn: "first"), alt+↓: the rewound "weather in Oslo" below it."""
    await pilot.press("alt+up")
    await pilot.pause()
    await pilot.press("alt+down")
    await pilot.pause()
    item = app.chat_screen.transcript.selected()
    assert item is not None and item.rewound is not None and item.text == "weather in Oslo"


async def test_the_preview_of_a_turn_counts_no_rewound_messages(server):
    app = make_app(server)
    async with app.run_test(size=SIZE) as pilot:
        await rewound_shown(app, pilot)
        await pilot.press("alt+up")
        await pilot.pause()
        text = banner_text(app)
        assert "“first”" in text and "1 turn (2 messages) go" in text, text


async def test_a_rewound_turn_in_the_chooser_says_what_it_is_and_enter_restores_it(server):
    app = make_app(server)
    async with app.run_test(size=SIZE) as pilot:
        await rewound_shown(app, pilot)
        await to_rewound_turn(app, pilot)
        text = banner_text(app)
        assert text.startswith("⟲ Rewound branch “weather in Oslo”"), text
        assert (
            "Enter or alt+Enter restores it" in text
            and "alt+shift+b / alt+b forks it" in text
            and "rewind" not in text.lower().replace("rewound", "")
        ), text
        await pilot.press("enter")
        await settle(app, pilot)
        # restored up to the turn chosen: "third" (after it in the branch) stays rewound
        await wait_until(
            pilot,
            lambda: (
                [i.text for i in app.chat.conversation.items if i.rewound is None and i.role == "user"]
                == ["first", "weather in Oslo"]
            ),
        )
        tasks = await server_tasks(server, app.chat.session_id)
        assert user_texts_of(tasks) == ["first", "weather in Oslo"]


async def test_alt_enter_on_a_rewound_turn_restores_its_branch_on_the_server(server):
    app = make_app(server)
    async with app.run_test(size=SIZE) as pilot:
        await rewound_shown(app, pilot)
        await pilot.press("alt+up", "alt+down", "alt+down")  # the branch's last turn: "third"
        await pilot.pause()
        item = app.chat_screen.transcript.selected()
        assert item is not None and item.rewound is not None and item.text == "third"
        await pilot.press("alt+enter")
        await settle(app, pilot)
        tasks = await server_tasks(server, app.chat.session_id)
        assert user_texts_of(tasks) == ["first", "weather in Oslo", "third"]


async def test_alt_shift_b_on_a_rewound_turn_forks_its_branch_into_a_new_server_session(server):
    app = make_app(server)
    async with app.run_test(size=SIZE) as pilot:
        await rewound_shown(app, pilot)
        original = app.chat.session_id
        async with A2AClient(ServerConfig(url=server.agent_url, api=server.api_url)) as client:
            before = {s.id for s in await client.list_sessions()}
        await to_rewound_turn(app, pilot)
        await pilot.press("alt+shift+b")  # what a terminal sends for it (alt+b arrives as ctrl+left)
        await settle(app, pilot)
        await wait_until(pilot, lambda: app.chat.session_id != original)
        async with A2AClient(ServerConfig(url=server.agent_url, api=server.api_url)) as client:
            new = {s.id for s in await client.list_sessions()} - before
        assert new == {app.chat.session_id}
        assert user_texts_of(await server_tasks(server, app.chat.session_id)) == ["first", "weather in Oslo"]
        # the original keeps its own state: only "first" is current there
        assert user_texts_of(await server_tasks(server, original)) == ["first"]


async def test_the_pickers_restore_shows_the_preview_first_and_enter_restores(server):
    app = make_app(server)
    async with app.run_test(size=SIZE) as pilot:
        await rewound_shown(app, pilot)
        await pilot.press("ctrl+g")
        await pilot.pause()
        picker = app.screen
        assert isinstance(picker, RewindPicker)
        row = next(n for n, e in enumerate(picker.entries) if e.rewound is not None and e.preview == "weather in Oslo")
        await pilot.press(*["down"] * row, "r")
        await pilot.pause()
        screen = app.chat_screen
        # nothing restored yet: the chooser shows the rewound branch and says what Enter does
        assert screen.rewind_mode and screen.transcript.selected().text == "weather in Oslo"
        assert banner_text(app).startswith("⟲ Rewound branch “weather in Oslo”")
        assert user_texts_of(await server_tasks(server, app.chat.session_id)) == ["first"]
        await pilot.press("enter")
        await settle(app, pilot)
        assert user_texts_of(await server_tasks(server, app.chat.session_id)) == ["first", "weather in Oslo"]
