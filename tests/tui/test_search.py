"""Searching the session in the app (ctrl+f, /search): hits in a rewound turn (real embedded server:
the rewound turns are read from it), older and newer hits with wrapping, the view brought to a hit
far off-screen in a 50,000-message session, Esc backing out with the draft as it was, letters
typed in the box never reaching the composer, a burst of keys acted on in order, no hits said, and
the count following a conversation that changes under it."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))

import pytest

from kit.apps import make_app
from kit.offline import capabilities
from kit.pilot import SIZE, burst, screen_lines, settle, three_turns, turns, wait_until
from rewindtui.chat import Chat
from rewindtui.client.a2a_client import A2AClient, ServerConfig
from rewindtui.model import Change
from rewindtui.tui.app import RewindApp
from rewindtui.tui.widgets.search_bar import SearchBar, SearchInput
from synthetic import make_tasks
from tui.test_branches_pilot import rewind_to


def synthetic_chat(messages: int) -> Chat:
    """A session of ``messages`` messages (two a turn: "message number N: tell me about item N"
    and the agent's answer quoting it), no server."""
    client = A2AClient(ServerConfig(url="http://127.0.0.1:9/"))
    client.capabilities = capabilities()
    chat = Chat(client)
    chat.conversation.session_id = "search-session"
    chat.conversation.load_tasks(make_tasks(messages))
    return chat


def synthetic_app(messages: int) -> RewindApp:
    app = RewindApp(chat=synthetic_chat(messages))
    app.animation_level = "none"
    return app


def bar(app: RewindApp) -> SearchBar:
    return app.chat_screen.query_one(SearchBar)


def count(app: RewindApp) -> str:
    return bar(app).count_text


def current_text(app: RewindApp) -> str:
    hit = app.chat_screen.search.current
    assert hit is not None
    return app.chat.conversation.items[hit.index].text


def on_screen(app: RewindApp, text: str) -> bool:
    return any(text in line for line in screen_lines(app.chat_screen.transcript))


async def test_hits_include_a_rewound_turn_marked_as_such(server):
    app = make_app(server)
    async with app.run_test(size=SIZE) as pilot:
        await three_turns(app, pilot)  # "first", "weather in Oslo", "third"
        await rewind_to(app, pilot, 1)  # "weather in Oslo" and "third" are rewound
        await turns(app, pilot, "back in Oslo again")
        await pilot.press("ctrl+f")
        await pilot.press(*"oslo")
        await settle(app, pilot)  # the rewound turns are read from the server
        screen = app.chat_screen
        items = app.chat.conversation.items
        assert any(i.rewound is not None and i.text == "weather in Oslo" for i in items)
        # the newest hit first (the view was at the bottom: the last turn, its question or the
        # weather tool's call in its answer), then back to the rewound turn
        last_question = max(n for n, i in enumerate(items) if i.text == "back in Oslo again")
        assert screen.search.current.index >= last_question and not screen.search.current.rewound
        total = screen.search.index.count("oslo")
        assert count(app).startswith(f"{total} of {total}") and "rewound turns included" in count(app)
        while not screen.search.current.rewound:
            await pilot.press("enter")
            await pilot.pause()
        assert items[screen.search.current.index].rewound is not None
        assert "in a rewound turn" in count(app)
        assert on_screen(app, "⟲ rewound")  # the turn is shown dimmed, marked, where it was
        # F4 hides them again, and the search says so (it does not show them again by itself)
        await pilot.press("f4")
        await settle(app, pilot)
        assert not app.chat.conversation.shows_rewound
        assert "rewound turns hidden (F4 shows them)" in count(app) and not screen.search.current.rewound


async def test_older_and_newer_hits_wrap_around():
    app = synthetic_app(40)  # 20 turns: "item 1" ... "item 20"
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        await pilot.press("ctrl+f", *"item 1")
        await pilot.pause()
        screen = app.chat_screen
        index = screen.search.index
        # "item 1" is in turns 1 and 10-19 (their questions and answers; turn 10 answers by a tool call)
        total = index.count("item 1")
        assert total == 21 and count(app).startswith(f"{total} of {total}")
        seen = [count(app).split(" ·")[0]]
        for _ in range(total - 1):
            await pilot.press("enter")
            seen.append(count(app).split(" ·")[0])
        assert seen == [f"{n} of {total}" for n in range(total, 0, -1)]
        assert "item 1" in current_text(app)
        await pilot.press("enter")  # from the first: the newest again
        assert count(app).startswith(f"{total} of {total}") and "from the newest again" in count(app)
        await pilot.press("down")  # the newer hit: from the newest, the first
        assert count(app).startswith(f"1 of {total}") and "from the first again" in count(app)
        await pilot.press("shift+enter")
        assert count(app).startswith(f"2 of {total}")
        await pilot.press("up")
        assert count(app).startswith(f"1 of {total}")


@pytest.mark.slow  # a 50,000-message session loaded and drawn: seconds by design
async def test_a_hit_far_off_screen_in_a_50000_message_session_is_brought_into_view():
    app = synthetic_app(50_000)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        screen = app.chat_screen
        transcript = screen.transcript
        assert on_screen(app, "item 25000") and not on_screen(app, "item 7:")
        await pilot.press("ctrl+f", *"number 7:")  # only turn 7's question says it so
        await pilot.pause()
        assert count(app).startswith("1 of 1")
        hit = screen.search.current
        assert app.chat.conversation.items[hit.index].text == "message number 7: tell me about item 7"
        assert on_screen(app, "message number 7: tell me about item 7")
        assert transcript.scroll_y < 100 and not transcript.follow
        # the current hit is drawn in the current-hit style, on the line that shows it
        y = next(y for y, line in enumerate(screen_lines(transcript)) if "number 7:" in line)
        strip = transcript.render_line(y)
        current = transcript.get_component_rich_style("transcript--search-current")
        styled = "".join(seg.text for seg in strip if seg.style is not None and seg.style.bgcolor == current.bgcolor)
        assert styled.lower() == "number 7:"
        # and back to the newest hit of another query, at the bottom
        await pilot.press(*(["backspace"] * len("number 7:")), *"item 25000")
        await pilot.pause()
        assert on_screen(app, "item 25000") and count(app).startswith("1 of 1")  # turn 25000 answers by a tool call


async def test_the_first_hit_is_the_nearest_above_the_bottom_of_the_view():
    app = synthetic_app(400)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        transcript = app.chat_screen.transcript
        for _ in range(40):
            await pilot.press("pageup")
        bottom = transcript.lines.item_at(int(transcript.scroll_y) + transcript.scrollable_content_region.height - 1)[0]
        assert bottom < len(app.chat.conversation.items) - 20
        await pilot.press("ctrl+f", *"message number")
        await pilot.pause()
        hit = app.chat_screen.search.current
        assert hit is not None and bottom - 2 <= hit.index <= bottom  # not the newest: the one in view


async def test_a_hit_cut_off_a_tool_line_has_the_tool_shown_whole():
    chat = synthetic_chat(10)
    meta = {"kagent_invocation_id": "e-tool", "kagent_author": "demo"}
    long_result = {"report": "sunny " * 60 + "and then zanzibar"}
    task = {
        "kind": "task",
        "id": "task-tool",
        "contextId": "search-session",
        "status": {"state": "completed"},
        "metadata": meta,
        "history": [
            {
                "kind": "message",
                "messageId": "u-tool",
                "role": "user",
                "taskId": "task-tool",
                "parts": [{"kind": "text", "text": "weather please"}],
                "metadata": meta,
            },
            {
                "kind": "message",
                "messageId": "c-tool",
                "role": "agent",
                "taskId": "task-tool",
                "metadata": meta,
                "parts": [
                    {
                        "kind": "data",
                        "data": {"id": "call-x", "name": "get_weather", "args": {"city": "Oslo"}},
                        "metadata": {"kagent_type": "function_call"},
                    }
                ],
            },
            {
                "kind": "message",
                "messageId": "r-tool",
                "role": "agent",
                "taskId": "task-tool",
                "metadata": meta,
                "parts": [
                    {
                        "kind": "data",
                        "data": {"id": "call-x", "name": "get_weather", "response": long_result},
                        "metadata": {"kagent_type": "function_response"},
                    }
                ],
            },
        ],
    }
    chat.conversation.load_tasks([*make_tasks(10), task])
    app = RewindApp(chat=chat)
    app.animation_level = "none"
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        transcript = app.chat_screen.transcript
        assert not on_screen(app, "zanzibar")  # the result is cut short on its line
        await pilot.press("ctrl+f", *"zanzibar")
        await pilot.pause()
        assert count(app).startswith("1 of 1")
        item = app.chat.conversation.items[app.chat_screen.search.current.index]
        assert item.key in transcript.expanded and on_screen(app, "zanzibar")


async def test_esc_closes_the_search_and_the_draft_is_as_it_was():
    app = synthetic_app(40)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        screen = app.chat_screen
        await pilot.press(*"half a thought")
        await pilot.press("ctrl+f", *"item 3")
        await pilot.pause()
        assert screen.search.current is not None and screen.transcript.search.query == "item 3"
        await pilot.press("escape")
        await pilot.pause()
        assert not bar(app).shown and screen.focused is screen.composer
        assert screen.composer.text == "half a thought"
        assert screen.transcript.search.query == ""  # the highlight is gone
        # Esc backed out one level only: the next Esc is the composer's own (a hint, not a clear)
        await pilot.press(*" more")
        assert screen.composer.text == "half a thought more"
        # ctrl+f again: the box comes back with its text
        await pilot.press("ctrl+f")
        await pilot.pause()
        assert bar(app).shown and bar(app).input.value == "item 3" and isinstance(screen.focused, SearchInput)
        await pilot.press("1")  # the last search is selected: typing replaces it
        assert bar(app).input.value == "1" and screen.composer.text == "half a thought more"


async def test_letters_typed_in_the_box_never_reach_the_composer():
    app = synthetic_app(40)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        screen = app.chat_screen
        screen.composer.text = "draft"
        await pilot.press("ctrl+f")
        typed = "qrnd /fork eyx?"
        await pilot.press(*[{" ": "space", "/": "slash", "?": "question_mark"}.get(c, c) for c in typed])
        await pilot.pause()
        assert bar(app).input.value == typed
        assert screen.composer.text == "draft"
        assert not screen.rewind_mode and screen.chat.session_id == "search-session"


async def test_a_burst_of_keys_is_searched_in_order():
    """Text and Enter arriving in one read (a paste, tmux): Enter steps from the whole query."""
    app = synthetic_app(40)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        await pilot.press("ctrl+f")
        await pilot.pause()
        burst(app, [*"item", "space", "2", "enter", "enter"])
        await pilot.pause()
        assert bar(app).input.value == "item 2"
        total = app.chat_screen.search.index.count("item 2")
        assert total == 3 and count(app).startswith(f"{total - 2} of {total}")


async def test_keys_right_after_ctrl_f_or_esc_in_one_burst_go_where_the_user_types():
    """ctrl+f then text in one read (tmux, ssh, a stalled app): the text is the search's, not the
    composer's; Esc then text: the composer's, not the hidden box's."""
    app = synthetic_app(40)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        screen = app.chat_screen
        screen.composer.text = "draft"
        screen.composer.move_cursor(screen.composer.document.end)
        burst(app, ["ctrl+f", *"item", "space", "2", "enter", "escape", "space", *"more"])
        await pilot.pause()
        await wait_until(pilot, lambda: screen.composer.text == "draft more")
        assert bar(app).input.value == "item 2" and not bar(app).shown
        assert screen.focused is screen.composer


async def test_no_hits_says_so_and_an_empty_box_says_the_keys():
    app = synthetic_app(40)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        await pilot.press("ctrl+f")
        await pilot.pause()
        assert "older hit" in count(app) and "close" in count(app)
        # this server keeps no rewound turns a client can read: the box says they are not searched
        assert "rewound turns not searched: this server keeps no list of rewound turns" in count(app)
        await pilot.press(*"zebra")
        await pilot.pause()
        assert count(app).startswith("No hits for “zebra”")
        assert app.chat_screen.search.current is None
        await pilot.press("enter")  # nothing to go to: nothing moves, it still says so
        assert count(app).startswith("No hits for “zebra”")


async def test_slash_search_opens_the_box_on_its_text():
    app = synthetic_app(40)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        screen = app.chat_screen
        screen.composer.text = "/search ITEM 12"
        await pilot.press("enter")
        await pilot.pause()
        assert bar(app).shown and bar(app).input.value == "ITEM 12"
        assert count(app).startswith("2 of 2") and screen.composer.text == ""
        assert "item 12" in current_text(app)


async def test_the_count_follows_the_conversation_without_moving_the_view():
    app = synthetic_app(400)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        screen = app.chat_screen
        await pilot.press("ctrl+f", *"number 3:")
        await pilot.pause()
        assert count(app).startswith("1 of 1")
        y = screen.transcript.scroll_y
        conversation = app.chat.conversation
        screen.chat.listener(
            conversation.add_user_message(
                {
                    "kind": "message",
                    "messageId": "new-1",
                    "role": "user",
                    "parts": [{"kind": "text", "text": "about number 3: again"}],
                }
            )
        )
        await pilot.pause()
        assert count(app).startswith("1 of 2") and screen.transcript.scroll_y == y
        assert "number 3:" in current_text(app) and current_text(app).startswith("message")
        # a reply's text changing in place: counted a moment later
        item = conversation.items[-1]
        item._set_text("about number 3: again, and number 3: once more")
        screen.chat.listener(Change(updated=[item]))
        await wait_until(pilot, lambda: count(app).startswith("1 of 3"))
