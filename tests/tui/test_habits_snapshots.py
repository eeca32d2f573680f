"""Screens of issue 33's habits: a queued message under a streaming reply, the footer on a
rewound turn (only what acts there)."""

from __future__ import annotations

from kit.offline import offline_app, offline_chat, replay

SIZE = (100, 30)


def test_queued_messages_under_a_streaming_reply(snap_compare):
    chat = offline_chat(["02_turn_plain_text"])
    replay(chat, "05_turn_streaming_partials", limit=7)  # stopped among the text deltas
    chat.sending = True
    app = offline_app(chat)

    async def queued(pilot):
        await pilot.pause()
        for text in ("and then summarize it", "also list the sources"):
            app.chat_screen.queue.add(text)
        await pilot.pause()

    assert snap_compare(app, terminal_size=SIZE, run_before=queued)


def test_footer_on_a_rewound_turn_offers_only_what_acts(snap_compare):
    """This server cannot restore or fork it: the footer offers neither (Enter is no Rewind here)."""
    from tui.test_branches_snapshots import chat_with_a_rewound_turn

    chat = chat_with_a_rewound_turn()
    app = offline_app(chat)

    async def on_rewound(pilot):
        await pilot.pause()
        await pilot.press("alt+up", "alt+down")
        await pilot.pause()
        assert app.chat_screen.transcript.selected().rewound is not None
        await pilot.pause()

    assert snap_compare(app, terminal_size=SIZE, run_before=on_rewound)
