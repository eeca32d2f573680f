"""What a long tour of the app in a real terminal found wrong (long sessions, an awkward terminal):
each test here failed before its fix."""

from __future__ import annotations

import sys
from pathlib import Path

from textual import events

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))

from kit.offline import capabilities
from kit.pilot import wait_until
from rewindtui.chat import Chat
from rewindtui.client.a2a_client import A2AClient, ServerConfig
from rewindtui.tui.app import RewindApp
from synthetic import make_tasks


def long_chat(messages: int) -> Chat:
    client = A2AClient(ServerConfig(url="http://127.0.0.1:9/"))
    client.capabilities = capabilities()
    chat = Chat(client)
    chat.conversation.session_id = "long"
    chat.conversation.load_tasks(make_tasks(messages))
    return chat


def wheel(widget, up: bool = True) -> None:
    """One notch of the mouse wheel over ``widget``, as the terminal reports it."""
    kind = events.MouseScrollUp if up else events.MouseScrollDown
    widget.post_message(kind(widget, 10, 5, 0, 0, 0, False, False, False))


async def test_the_mouse_wheel_scrolls_from_where_the_view_is_not_from_the_top():
    # seen in tmux: one notch of the wheel up at the bottom of a 10,000-message session showed its
    # first message; the view had been put at the bottom by the program (set_scroll), which left
    # Textual's scroll target (what the wheel scrolls from) at 0
    app = RewindApp(chat=long_chat(400), live=False)
    app.animation_level = "none"
    async with app.run_test(size=(100, 30)) as pilot:
        transcript = app.chat_screen.transcript
        await wait_until(pilot, lambda: transcript.max_scroll_y > 0 and transcript.scroll_y == transcript.max_scroll_y)
        bottom = transcript.scroll_y
        wheel(transcript)
        await wait_until(pilot, lambda: transcript.scroll_y != bottom)
        assert transcript.scroll_y == bottom - app.scroll_sensitivity_y
        assert not transcript.follow
        wheel(transcript, up=False)
        await wait_until(pilot, lambda: transcript.scroll_y == bottom)
        assert transcript.follow


async def test_the_composer_stays_on_screen_in_a_small_terminal_with_the_welcome_shown():
    # seen in a 60x15 tmux window: the welcome on an empty session (14 lines there, its text
    # wrapped) pushed the composer off the screen; what was typed could not be seen
    from kit.offline import offline_app, offline_chat
    from rewindtui.tui.widgets.welcome import Welcome

    for width, height in ((60, 15), (40, 10)):
        app = offline_app(offline_chat([]))
        async with app.run_test(size=(width, height)) as pilot:
            await pilot.pause()
            screen = app.chat_screen
            assert screen.query_one(Welcome).display  # the empty session's welcome is there
            composer = screen.composer.region
            assert composer.height >= 3 and composer.bottom <= height - 1, (width, height, composer)
