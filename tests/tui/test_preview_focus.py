"""Where the keys go around a rewind preview: Enter on the preview rewinds and closes it (the
composer has the focus right after, so the next key is text, not another rewind), and Esc leaves a
preview also when the focus is outside the transcript (nothing is rewound). The real app on the
embedded server over loopback, driven by keys through Pilot."""

from __future__ import annotations

import pytest

from kit.apps import make_app
from kit.pilot import SIZE, server_users, settle, turns, user_texts, wait_until

pytestmark = pytest.mark.slow  # real turns on the embedded server: seconds each


async def test_enter_on_the_preview_rewinds_closes_it_and_gives_the_composer_the_keys(server):
    app = make_app(server)
    async with app.run_test(size=SIZE) as pilot:
        await turns(app, pilot, "one", "two", "three")
        screen = app.chat_screen
        await pilot.press("alt+up")
        await wait_until(pilot, lambda: screen.rewind_mode)
        await pilot.press("enter")
        await settle(app, pilot)
        assert user_texts(app) == ["one", "two"] and await server_users(server, app) == ["one", "two"]
        # right after: the preview is gone and the composer has the keys
        assert not screen.rewind_mode and screen.transcript.cursor is None
        assert screen.composer.has_focus, f"the focus is on {app.focused!r}, not the composer"
        await pilot.press("x", "enter")  # the next keys are a message, never a second rewind
        await settle(app, pilot)
        assert await server_users(server, app) == ["one", "two", "x"]


async def test_escape_leaves_the_preview_when_the_focus_is_outside_the_transcript(server):
    app = make_app(server)
    async with app.run_test(size=SIZE) as pilot:
        await turns(app, pilot, "one", "two")
        screen = app.chat_screen
        await pilot.press("alt+up")
        await wait_until(pilot, lambda: screen.rewind_mode)
        screen.composer.focus()  # e.g. a click in the composer: the preview stays
        await pilot.pause()
        assert screen.rewind_mode and not screen.transcript.has_focus
        await pilot.press("escape")
        await settle(app, pilot)
        assert not screen.rewind_mode and screen.transcript.cursor is None
        assert screen.composer.has_focus
        assert user_texts(app) == ["one", "two"] and await server_users(server, app) == ["one", "two"]
