"""Snapshots of composing screens (SVGs in snapshots/test_composing_snapshots/): the slash
completion, the welcome, a stopped turn with its partial text, and the question bar at 60 columns
with the sessions panel open."""

from __future__ import annotations

from kit.offline import offline_app, offline_chat, replay
from rewindtui.client.a2a_client import Session
from tui.test_snapshots_turns import question_chat, status

SIZE = (100, 30)


def test_slash_completion(snap_compare):
    app = offline_app(offline_chat(["02_turn_plain_text"]))
    assert snap_compare(app, terminal_size=SIZE, press=["/", "r", "e"])


def test_welcome_on_an_empty_session(snap_compare):
    assert snap_compare(offline_app(offline_chat([])), terminal_size=(80, 24))


def test_stopped_turn_keeps_its_partial_text(snap_compare):
    chat = offline_chat(["02_turn_plain_text"])
    replay(chat, "05_turn_streaming_partials", limit=7)  # stopped among the text deltas
    conv = chat.conversation
    task_id, invocation = conv.current_task_id, conv.turn_invocations()[-1]
    assert task_id is not None
    conv.apply(status(task_id, "canceled", None, final=True, invocation=invocation))
    partial = next(it for it in reversed(conv.items) if it.role != "user")
    partial.stopped = True  # what the core marks on the part that came before the stop
    partial.streaming = False
    assert partial.text
    assert snap_compare(offline_app(chat), terminal_size=SIZE)


def test_question_bar_at_60_columns_with_the_sessions_panel(snap_compare):
    chat = question_chat()
    app = offline_app(chat)

    async def panel(pilot):
        await pilot.pause()
        screen = app.chat_screen
        screen.sessions.remove_class("hidden")
        screen.sessions.show_sessions(
            [
                Session(
                    "s1",
                    "please delete notes.txt",
                    created_at="2026-11-20T10:00:00Z",
                    updated_at="2026-11-20T10:05:00Z",
                ),
                Session(
                    "s2", "weather questions", created_at="2026-11-19T09:00:00Z", updated_at="2026-11-19T09:30:00Z"
                ),
            ],
            "s1",
        )
        screen.sessions.focus()
        await pilot.pause()

    assert snap_compare(app, terminal_size=(60, 24), run_before=panel)
