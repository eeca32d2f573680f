"""Snapshots of issue 33's screens (SVGs in snapshots/test_polish_snapshots/): the slash menu with
a highlight moved by ↓, and rewind mode on a 40×10 terminal."""

from __future__ import annotations

from kit.offline import offline_app, offline_chat

SIZE = (100, 30)


def test_slash_menu_with_a_highlight(snap_compare):
    app = offline_app(offline_chat(["02_turn_plain_text"]))
    assert snap_compare(app, terminal_size=SIZE, press=["/", "r", "e", "down"])


def test_rewind_mode_at_40_by_10(snap_compare):
    """The smallest terminal worth supporting: the banner says what goes and how to confirm or
    leave, the footer keeps Enter and Esc."""
    chat = offline_chat()
    app = offline_app(chat)

    async def preview(pilot):
        await pilot.pause()
        second = chat.conversation.turn_invocations()[1]
        app.chat_screen.enter_rewind_mode(chat.conversation.index_of_invocation(second))
        await pilot.pause()

    assert snap_compare(app, terminal_size=(40, 10), run_before=preview)
