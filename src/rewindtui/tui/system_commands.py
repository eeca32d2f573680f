"""The command palette's entries that have no key and no row in the interaction table (those come
from ``ChatScreen.COMMANDS``, :mod:`rewindtui.tui.commands`): reattach, reload, reconnect, the
JSON export, removing attachments, and the push notifications switch.

The app's ``get_system_commands`` yields :func:`system_commands` after Textual's own.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

from textual.app import SystemCommand

from rewindtui.tui.screens.chat import ChatScreen

if TYPE_CHECKING:
    from rewindtui.tui.app import RewindApp


def system_commands(app: RewindApp, screen: ChatScreen) -> Iterator[SystemCommand]:
    yield SystemCommand(
        "Reattach to the running turn", "Follow again a turn the server is still running", screen.turns.reattach
    )
    yield SystemCommand("Reload session", "Re-read this session from the server", screen.switching.reload)
    yield SystemCommand(
        "Reconnect", "Connect to the server again; restarts the embedded server if it died", app.reconnect
    )
    yield SystemCommand(
        "Export transcript as JSON",
        "Write the transcript to a .json file (asks where)",
        lambda: screen.exports.export("json"),
    )
    yield SystemCommand(
        "Remove attachments", "Remove every file and data part waiting to be sent", screen.files.remove_all
    )
    if app.push_notices is not None and app.chat is not None:
        on = app.push_notices.on
        yield SystemCommand(
            f"Push notifications: turn {'off' if on else 'on'}",
            "Ask the agent to notify this app when each turn ends, so a turn whose stream is cut still shows",
            app.toggle_push,
        )


async def toggle_push(app: RewindApp) -> None:
    """The palette's push switch (the ``push`` setting turns it on at start)."""
    notices, chat = app.push_notices, app.chat
    if notices is None or chat is None:
        return
    if notices.on:
        await notices.turn_off(chat.client)
        app.notify("Push notifications are off.", title="Push notification")
        return
    why = notices.why_not(chat.client)
    if why:
        app.notify(
            f"Push notifications cannot be turned on: {why}.",
            title="Push notification",
            severity="warning",
            markup=False,
        )
        return
    await notices.turn_on(chat.client)
    app.notify(
        "Push notifications are on: a turn whose stream is cut is shown when it ends.", title="Push notification"
    )
