"""Big pastes folded in the transcript (issue 33): a user message over 200 lines shows its first
lines and "[pasted 5,000 lines]", a click (or alt+t while choosing) opens it, and the message
is sent and stored whole."""

from __future__ import annotations

import pytest

from kit.apps import make_app
from kit.pilot import SIZE, header_offset, screen_lines, send, server_users, settle
from rewindtui.output.pasted import FOLD_LINES, fold

PASTE = "\n".join(f"row {n:04d}" for n in range(5000))


def item_lines(transcript, index: int) -> str:
    """The lines item ``index`` draws (the agent's echo of the paste is another item)."""
    return "\n".join(strip.text for strip in transcript._strips(index, transcript._layout_width))


def test_fold_is_pure_and_bounded():
    assert fold("a\n" * (FOLD_LINES - 1) + "a") is None  # exactly 200 lines: shown whole
    folded = fold(PASTE)
    assert folded is not None and folded.lines == 5000 and folded.label == "[pasted 5,000 lines]"
    assert folded.head == "row 0000\nrow 0001\nrow 0002"
    assert fold("one line") is None
    assert fold(PASTE + "\n").lines == 5000  # a final newline ends the last line, it adds none


@pytest.mark.slow  # the demo model echoes the 5,000 lines back (in 200 deltas), drawn whole
async def test_a_5000_line_message_is_folded_opened_by_click_and_sent_whole(server):
    app = make_app(server)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        screen = app.chat_screen
        await send(app, pilot, PASTE)
        assert await server_users(server, app) == [PASTE]  # sent and stored whole
        items = app.chat.conversation.items
        index = next(n for n, it in enumerate(items) if it.role == "user")
        assert items[index].text == PASTE
        transcript = screen.transcript
        x, y = header_offset(transcript, index, "[pasted 5,000 lines]")
        await pilot.pause()
        shown = item_lines(transcript, index)
        assert "[pasted 5,000 lines]" in shown and "row 0002" in shown and "row 0003" not in shown
        assert "[pasted 5,000 lines]" in screen_lines(transcript)[y]  # where the click goes
        await pilot.click(transcript, offset=(x, y))
        await pilot.pause()
        assert items[index].key in transcript.expanded
        shown = item_lines(transcript, index)
        assert "[pasted" not in shown and "row 0003" in shown and "row 4999" in shown


async def test_alt_t_while_choosing_opens_and_folds_it_again(server):
    app = make_app(server)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        screen = app.chat_screen
        await send(app, pilot, "\n".join(PASTE.split("\n")[:300]))
        item = next(it for it in app.chat.conversation.items if it.role == "user")
        await pilot.press("alt+up")
        await pilot.pause()
        assert screen.rewind_mode
        await pilot.press("alt+t")
        await pilot.pause()
        assert item.key in screen.transcript.expanded
        await pilot.press("alt+t")
        await pilot.pause()
        assert item.key not in screen.transcript.expanded and screen.rewind_mode
