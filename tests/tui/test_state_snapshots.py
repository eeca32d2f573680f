"""Snapshot of ``/state`` (SVG in snapshots/test_state_snapshots/): the offline conversation of the
kagent captures, with the state and rewind deltas shaped as the embedded server answers them
(``tests/tui/test_state_screen.py`` reads the same shapes from the real server)."""

from __future__ import annotations

from kit.offline import offline_app, offline_chat
from rewindtui.client.state_api import SessionState
from rewindtui.tui.screens.state import StateScreen

SIZE = (100, 30)


def test_state_screen(snap_compare):
    chat = offline_chat()
    app = offline_app(chat)
    turns = chat.conversation.turn_invocations()
    answer = SessionState(
        {"weather_calls": 1},  # turn 2 of the captures asked for the weather in Tokyo
        {turns[0]: {"weather_calls": None}, turns[1]: {"weather_calls": None}, turns[2]: {}},
    )

    async def reader(client, session_id):
        return answer

    async def show(pilot):
        await pilot.pause()
        texts = [(inv, chat.conversation.user_text_of(inv)) for inv in turns]
        await app.push_screen(StateScreen(chat.client, "s1", texts, 1, reader=reader))
        await pilot.pause()
        await app.workers.wait_for_complete()
        await pilot.pause()

    assert snap_compare(app, terminal_size=SIZE, run_before=show)
