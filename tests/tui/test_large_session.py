"""A 5,000-message session: it opens, the first message is reachable by scrolling (nothing is
pruned), and "Rewind to here" works there. Correctness only; timings live in bench/bench_app.py."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))

from kit.offline import capabilities
from rewindtui.chat import Chat
from rewindtui.client.a2a_client import A2AClient, ServerConfig
from rewindtui.tui.app import RewindApp
from rewindtui.tui.widgets.transcript import Transcript
from synthetic import make_tasks

MESSAGES = 5000


def large_chat() -> Chat:
    client = A2AClient(ServerConfig(url="http://127.0.0.1:9/"))
    client.capabilities = capabilities()
    chat = Chat(client)
    chat.conversation.session_id = "bench-session"
    chat.conversation.load_tasks(make_tasks(MESSAGES))
    return chat


async def test_opens_scrolls_to_first_message_and_truncates_there():
    chat = large_chat()
    assert len(chat.conversation.items) == MESSAGES
    app = RewindApp(chat=chat)
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.pause()
        transcript = app.chat_screen.transcript
        # opened at the bottom: the last message is on screen
        bottom = [transcript.render_line(y).text for y in range(transcript.size.height)]
        last_turn = chat.conversation.items[-1].text.split(":")[0]
        assert any(last_turn in line for line in bottom)
        # the very first message is reachable: rewind mode, then the first turn
        await pilot.press("alt+up", "home")
        await pilot.pause()
        assert transcript.cursor == 0 and transcript.scroll_y == 0
        top = [transcript.render_line(y).text for y in range(transcript.size.height)]
        assert "rewind point" in top[0] and top[1].startswith("you")
        assert "message number 1: tell me about item 1" in top[2]
        # its "Rewind to here" is a real, clickable button for the turn before turn 1
        header = top[1]
        x = header.index("Rewind to here")
        requested: list[str] = []
        app.chat_screen.handle_action = lambda action, item: requested.append((action, item.rewind_target))  # type: ignore[method-assign]
        await pilot.click(Transcript, offset=(x, 1))
        assert requested == [("rewind", chat.conversation.items[0].rewind_target)]
        # and the optimistic truncation there empties the view and rolls back exactly
        keys = [it.key for it in chat.conversation.items]
        token, change = chat.conversation.truncate_before(chat.conversation.items[0].rewind_target)
        app.chat.listener(change)
        await pilot.pause()
        assert chat.conversation.items == [] and transcript.virtual_size.height == 0
        app.chat.listener(chat.conversation.rollback(token))
        await pilot.pause()
        assert [it.key for it in chat.conversation.items] == keys
        assert transcript.virtual_size.height > MESSAGES


async def test_rewind_in_the_middle_of_a_large_session_cuts_at_the_right_turn():
    chat = large_chat()
    app = RewindApp(chat=chat)
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.pause()
        invocations = chat.conversation.turn_invocations()
        middle = invocations[len(invocations) // 2]
        index = chat.conversation.index_of_invocation(middle)
        transcript = app.chat_screen.transcript
        assert app.chat_screen.enter_rewind_mode(index)
        await pilot.pause()
        # the selected turn is in view, its rule and header included
        first, end = transcript.selected_bounds()
        assert first == index
        assert transcript.scroll_y <= transcript._starts[index]
        assert transcript._starts[end] <= transcript.scroll_y + transcript.scrollable_content_region.height
        token, change = chat.conversation.truncate_before(middle)
        app.chat.listener(change)
        await pilot.pause()
        assert len(chat.conversation.items) == index
        assert chat.conversation.turn_invocations() == invocations[: len(invocations) // 2]
