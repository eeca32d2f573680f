"""Snapshot of the live view's notice (SVG in snapshots/test_live_view_snapshots/): another client
rewound the open session, the app re-read it and says what changed. The content comes from the
real captures (no server: the screen must not depend on generated ids); the words come from the
core's own description of the change (``rewindtui.chat.live.what_changed``), the screen from the
live view's own path for a followed change."""

from __future__ import annotations

from kit.offline import TURNS, offline_app, offline_chat
from rewindtui.chat.live import Followed, what_changed
from rewindtui.tui.live_view import LiveView

SIZE = (100, 30)


def test_another_clients_rewind_is_said(snap_compare):
    before = offline_chat(TURNS).conversation.turn_invocations()  # three turns were shown
    chat = offline_chat(TURNS[:1])  # the server holds one now: another client rewound two
    said, came, went = what_changed(chat, before, False, chat.conversation.turn_state)
    assert said == "Another client rewound this session: 2 turns went." and (came, went) == (0, 2)
    app = offline_app(chat)

    async def followed(pilot):
        await pilot.pause()
        LiveView(app).followed(Followed("s1", said, came, went))
        await pilot.pause()

    assert snap_compare(app, terminal_size=SIZE, run_before=followed)
