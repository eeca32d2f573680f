"""The command palette's entries with no key (rewindtui.tui.system_commands): offered on the chat
screen only, after Textual's own, and each runs what it names."""

from __future__ import annotations

from kit.offline import offline_app
from kit.pilot import SIZE, notifications, wait_until
from rewindtui.tui.screens.help import HelpScreen

KEYLESS = [
    "Reattach to the running turn",
    "Reload session",
    "Reconnect",
    "Export transcript as JSON",
    "Remove attachments",
    "Push notifications: turn on",
]


async def test_the_keyless_commands_are_offered_on_the_chat_screen_and_run() -> None:
    app = offline_app()  # a chat given as is: no connector, push not on
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        offered = list(app.get_system_commands(app.chat_screen))
        titles = [command.title for command in offered]
        assert titles[-len(KEYLESS) :] == KEYLESS  # after Textual's own, in this order
        assert len(titles) > len(KEYLESS)
        by_title = {command.title: command for command in offered}

        by_title["Reconnect"].callback()  # the app was given its connection: it says so
        await wait_until(pilot, lambda: any("cannot reconnect by itself" in n for n in notifications(app)))

        by_title["Push notifications: turn on"].callback()  # the capture's card offers no push
        await wait_until(pilot, lambda: any("Push notifications cannot be turned on" in n for n in notifications(app)))
        await app.workers.wait_for_complete()
        assert app.push_notices is not None and not app.push_notices.on

        app.action_help()
        await wait_until(pilot, lambda: isinstance(app.screen, HelpScreen))
        elsewhere = [command.title for command in app.get_system_commands(app.screen)]
        assert not set(KEYLESS) & set(elsewhere)  # another screen: Textual's own only
