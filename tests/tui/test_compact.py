"""``/compact`` (issue 33): the agent's summary replaces the turns so far as one turn, on the
server too; the originals stay as a rewound branch and ctrl+z brings them back. A server without
rewind: "not offered" (tests/a2a_servers/test_state_not_offered.py)."""

from __future__ import annotations

from kit.apps import make_app
from kit.pilot import SIZE, notifications, send, server_users, settle, user_texts, wait_until
from rewindtui.chat.compact import LEAD, PROMPT


async def test_compact_replaces_the_turns_with_the_summary_and_ctrl_z_brings_them_back(server):
    app = make_app(server)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        await send(app, pilot, "first")
        await send(app, pilot, "weather in Oslo")
        await send(app, pilot, "/compact")
        await wait_until(pilot, lambda: any("Compacted" in n for n in notifications(app)), timeout=30)
        await settle(app, pilot)
        assert "Compacted 2 turns into one: the agent's summary. ctrl+z brings them back." in notifications(app)
        [summary] = user_texts(app)
        # the demo model's summary is its echo of the request (a real model writes a summary)
        assert summary.startswith(LEAD + "\n\nYou said: " + PROMPT)
        assert await server_users(server, app) == [summary]  # the server holds one turn too
        assert len(app.chat.conversation.turn_invocations()) == 1

        await pilot.press("ctrl+z")  # the one undo: the originals come back (and the request)
        await settle(app, pilot)
        await wait_until(pilot, lambda: user_texts(app) == ["first", "weather in Oslo", PROMPT], timeout=20)
        assert await server_users(server, app) == ["first", "weather in Oslo", PROMPT]


async def test_nothing_to_compact_with_one_turn(server):
    app = make_app(server)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        await send(app, pilot, "only")
        await send(app, pilot, "/compact")
        await settle(app, pilot)
        assert "Nothing to compact: there are fewer than two turns." in notifications(app)
        assert user_texts(app) == ["only"]
