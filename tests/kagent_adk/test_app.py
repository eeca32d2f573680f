"""The app (Pilot) against the real kagent-adk 0.10.4 runtime, with and without kagent-rewind."""

from __future__ import annotations

from pathlib import Path

from kagent_adk.kagent_proc import REWIND_KEY, KagentAgent
from kit.apps import app_at
from kit.pilot import header_offset, send, settle, three_turns
from rewindtui.model import ItemKind
from rewindtui.tui.app import RewindApp
from rewindtui.tui.widgets.transcript import Transcript

SIZE = (120, 40)


def texts(app: RewindApp, role: str) -> list[str]:
    return [
        it.text for it in app.chat.conversation.items if it.kind is ItemKind.MESSAGE and it.role == role and it.text
    ]


async def test_click_rewind_on_turn_two(with_addon: KagentAgent, tmp_path: Path) -> None:
    app = app_at(with_addon.url, local_store=tmp_path / "sessions.db")
    async with app.run_test(size=SIZE) as pilot:
        invocations = await three_turns(app, pilot)
        assert len(invocations) == 3 and app.chat_screen.status.rewind != "unavailable"
        conv = app.chat.conversation
        index = next(i for i, it in enumerate(conv.items) if it.invocation_id == invocations[1] and it.role == "agent")
        sent = len(with_addon.control_messages())
        await pilot.pause()
        x, y = header_offset(app.chat_screen.transcript, index, "Rewind to here")
        await pilot.click(Transcript, offset=(x, y))
        await pilot.pause()
        # the click previews in rewind mode and sends nothing; Enter confirms
        assert app.chat_screen.rewind_mode and len(with_addon.control_messages()) == sent
        await pilot.press("enter")
        await settle(app, pilot)
        assert texts(app, "user") == ["first"]
        control = with_addon.control_messages()[sent:]
        assert [m["metadata"][REWIND_KEY] for m in control] == [invocations[1]]
        await send(app, pilot, "again")
        assert texts(app, "agent")[-1] == "You said: again (turn 2; history: ['first', 'again']; weather_calls=0)"


async def test_keyboard_rewind_and_edit_and_resend(with_addon: KagentAgent, tmp_path: Path) -> None:
    app = app_at(with_addon.url, local_store=tmp_path / "sessions.db")
    async with app.run_test(size=SIZE) as pilot:
        invocations = await three_turns(app, pilot)
        await pilot.press("alt+up")  # rewind mode on the last turn
        transcript = app.chat_screen.transcript
        selected = transcript.selected()
        assert selected is not None and selected.invocation_id == invocations[2]
        await pilot.press("enter")  # Enter on the preview is the rewind (a letter would be text)
        await settle(app, pilot)
        assert texts(app, "user") == ["first", "weather in Oslo"]
        # edit turn 2: the view goes back at once, Enter sends one rewind-and-send request
        await pilot.press("alt+up", "alt+e")
        await pilot.pause()
        composer = app.chat_screen.composer
        assert composer.text == "weather in Oslo" and texts(app, "user") == ["first"]
        composer.text = "weather in Lima"
        await pilot.press("enter")
        await settle(app, pilot)
        assert texts(app, "user") == ["first", "weather in Lima"]
        assert texts(app, "agent")[-1].endswith("'city': 'Lima', 'forecast': 'sunny', 'call_no': 1} (weather_calls=1)")
        last = with_addon.control_messages()[-1]
        assert last["metadata"][REWIND_KEY] == invocations[1] and last["parts"][0]["text"] == "weather in Lima"


async def test_reopening_the_session_shows_the_rewound_view(with_addon: KagentAgent, tmp_path: Path) -> None:
    app = app_at(with_addon.url, local_store=tmp_path / "sessions.db")
    async with app.run_test(size=SIZE) as pilot:
        invocations = await three_turns(app, pilot)
        session_id = app.chat.session_id
        await app.chat.rewind(invocations[1])
        await settle(app, pilot)
    again = app_at(with_addon.url, session_id, local_store=tmp_path / "sessions.db")
    async with again.run_test(size=SIZE) as pilot:
        await settle(again, pilot)
        assert again.chat.session_id == session_id
        assert texts(again, "user") == ["first"]


async def test_without_the_add_on_rewind_is_shown_disabled_and_nothing_is_sent(
    without_addon: KagentAgent, tmp_path: Path
) -> None:
    app = app_at(without_addon.url, local_store=tmp_path / "sessions.db")
    received = len(without_addon.requests())
    async with app.run_test(size=SIZE) as pilot:
        await three_turns(app, pilot)
        assert app.chat_screen.status.rewind == "unavailable"
        transcript = app.chat_screen.transcript
        assert not transcript.buttons.rewind
        shown = [(it.key, it.text) for it in app.chat.conversation.items]
        index = next(i for i, it in enumerate(app.chat.conversation.items) if it.rewind_target)
        x, y = header_offset(transcript, index, "Rewind to here")
        await pilot.click(Transcript, offset=(x, y))
        await pilot.hover(Transcript, offset=(x, y))
        await pilot.pause()
        assert "does not support rewind" in str(transcript.tooltip)
        transcript.focus()
        transcript.cursor = index
        await pilot.press("r", "e")
        await pilot.press("escape", "escape", "escape")
        await settle(app, pilot)
        assert [(it.key, it.text) for it in app.chat.conversation.items] == shown
    assert without_addon.control_messages() == []
    assert len(without_addon.requests()) == received + 3  # the three turns, nothing else
