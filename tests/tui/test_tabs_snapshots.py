"""Snapshot of the tabs (issue 34): two tabs over the kagent 0.10.4 captures
(tests/fixtures/kagent-0.10.4/), the second shown, the first marked with news it got while hidden."""

from __future__ import annotations

from kit.offline import offline_app, offline_chat, replay


def test_snapshot_of_two_tabs_one_with_news(snap_compare):
    first = offline_chat(["02_turn_plain_text"])
    second = offline_chat(["03_turn_with_tool_call"])
    second.conversation.session_id = "s2"
    app = offline_app(first)

    async def open_second(pilot):
        await pilot.pause()
        await app.open_tab(None, chat=second, agent="second")
        await pilot.pause()
        replay(first, "04_turn_three")  # a turn lands in the hidden first tab: news
        app.tab_control.sync_strips()
        await pilot.pause()

    assert snap_compare(app, terminal_size=(100, 30), run_before=open_second)
