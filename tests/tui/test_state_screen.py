"""``/state`` (issue 33): the agent's session state from the embedded server, and what a rewind to
a chosen turn would change in it -- ADK's own rewind delta, checked against the state the real
rewind then leaves. "Not offered" elsewhere: tests/a2a_servers/test_state_not_offered.py."""

from __future__ import annotations

from textual.command import CommandList, CommandPalette
from textual.css.query import NoMatches

from kit.apps import make_app
from kit.pilot import SIZE, send, settle, wait_until
from rewindtui.chat.agent_state import read_state
from rewindtui.tui.screens.state import READING, StateScreen


def shown(app, widget_id: str) -> str:
    try:
        return str(app.screen.query_one(widget_id).render())
    except NoMatches:  # not composed yet
        return READING


async def open_state(app, pilot) -> StateScreen:
    await send(app, pilot, "/state")
    await wait_until(pilot, lambda: isinstance(app.screen, StateScreen))
    screen = app.screen
    await wait_until(pilot, lambda: "Reading" not in shown(app, "#state-now"))
    return screen


async def test_state_and_what_a_rewind_would_change_it_to(server):
    app = make_app(server)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        await send(app, pilot, "what is the weather in Tokyo")
        await send(app, pilot, "please delete temp.txt")
        await pilot.press("alt+y")
        await settle(app, pilot)
        await send(app, pilot, "hello")
        await open_state(app, pilot)
        now = shown(app, "#state-now")
        assert 'deleted_files = ["temp.txt"]' in now and "weather_calls = 1" in now
        # the last turn ("hello") changed no state
        assert "turn 3 of 3 “hello” would change nothing in it." in shown(app, "#state-change")
        await pilot.press("up")
        change = shown(app, "#state-change")
        assert "turn 2 of 3 “please delete temp.txt” would change:" in change
        assert 'deleted_files: ["temp.txt"] → null (set after that point)' in change and "weather_calls" not in change
        await pilot.press("up", "up")  # stops at the first turn
        change = shown(app, "#state-change")
        assert "turn 1 of 3" in change and "weather_calls: 1 → null" in change and "deleted_files" in change
        await pilot.press("down", "escape")
        await pilot.pause()
        assert not isinstance(app.screen, StateScreen)

        # what it said is what ADK's rewind does: rewind to before turn 2, read the state again
        predicted = (await read_state(app.chat.client, app.chat.session_id)).rewind_changes
        turn2 = app.chat.conversation.turn_invocations()[1]
        await pilot.press("alt+up", "alt+up")
        await pilot.pause()
        await pilot.press("enter")
        await settle(app, pilot)
        after = (await read_state(app.chat.client, app.chat.session_id)).state
        # ADK writes the delta as is: the key stays, null
        assert after == {"weather_calls": 1, "deleted_files": None} and predicted[turn2] == {"deleted_files": None}
        await send(app, pilot, "/state")
        await wait_until(pilot, lambda: isinstance(app.screen, StateScreen))
        await wait_until(pilot, lambda: "Reading" not in shown(app, "#state-now"))
        assert "deleted_files = null" in shown(app, "#state-now")
        # a null key a rewind would leave null is no change
        assert "turn 1 of 1" in shown(app, "#state-change") and "deleted_files" not in shown(app, "#state-change")


async def test_the_preview_turn_is_the_one_shown(server):
    app = make_app(server)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        await send(app, pilot, "weather in Oslo")
        await send(app, pilot, "second")
        await pilot.press("alt+up", "alt+up")  # the preview on turn 1
        await pilot.pause()
        await pilot.press("ctrl+p", *"state")  # the palette keeps the preview (typing /state leaves it)
        await wait_until(
            pilot,
            lambda: (
                any("State" in str(option.prompt) for option in app.screen.query_one(CommandList).options)
                if isinstance(app.screen, CommandPalette)
                else False
            ),
            timeout=5,
        )
        assert app.chat_screen.rewind_mode
        await pilot.press("enter")
        await wait_until(pilot, lambda: isinstance(app.screen, StateScreen))
        await wait_until(pilot, lambda: "Reading" not in shown(app, "#state-now"))
        assert "turn 1 of 2 “weather in Oslo” would change:" in shown(app, "#state-change")
