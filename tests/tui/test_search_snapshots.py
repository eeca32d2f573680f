"""Snapshot of the search (SVG in snapshots/test_search_snapshots/): the box with its count, every
hit highlighted, the current one (in a rewound turn shown in place) marked strongly. Content comes
from the real captures with the last turn rewound, so the screen is the same on every machine."""

from __future__ import annotations

from kit.offline import offline_app
from tui.test_branches_snapshots import chat_with_a_rewound_turn

SIZE = (100, 30)


def test_search_hits(snap_compare):
    app = offline_app(chat_with_a_rewound_turn())

    async def search(pilot):
        await pilot.pause()
        await pilot.press("ctrl+f", *"weather")
        await pilot.pause()
        assert "in a rewound turn" in app.chat_screen.search.bar().count_text

    assert snap_compare(app, terminal_size=SIZE, run_before=search)
