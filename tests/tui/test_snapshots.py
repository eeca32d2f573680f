"""Snapshots of the app's screens (SVGs in snapshots/test_snapshots/). Content comes from the
real captures so the screens are the same on every machine."""

from __future__ import annotations

from kit.offline import offline_app, offline_chat, replay
from rewindtui.chat import Action, Outcome
from rewindtui.client.a2a_client import Session

SIZE = (100, 30)


def test_empty_session(snap_compare):
    assert snap_compare(offline_app(offline_chat([])), terminal_size=SIZE)


def test_conversation_with_tool_call(snap_compare):
    assert snap_compare(offline_app(offline_chat(["02_turn_plain_text", "03_turn_with_tool_call"])), terminal_size=SIZE)


def test_tool_call_expanded(snap_compare):
    app = offline_app(offline_chat(["03_turn_with_tool_call"]))

    async def expand(pilot):
        await pilot.pause()
        # choose the turn, show its tool calls, leave rewind mode (the calls stay shown)
        await pilot.press("alt+up", "alt+t", "escape")
        await pilot.pause()

    assert snap_compare(app, terminal_size=SIZE, run_before=expand)


def test_turn_streaming(snap_compare):
    chat = offline_chat(["02_turn_plain_text"])
    replay(chat, "05_turn_streaming_partials", limit=7)  # stopped among the text deltas
    chat.sending = True
    assert snap_compare(offline_app(chat), terminal_size=SIZE)


def test_rewind_in_flight(snap_compare):
    chat = offline_chat()
    app = offline_app(chat)

    async def rewinding(pilot):
        await pilot.pause()
        screen = app.chat_screen
        target = chat.conversation.turn_invocations()[1]
        token, change = chat.conversation.truncate_before(target)
        chat.rewinding = True
        screen.ops.activity = "rewinding…"  # as the runner sets it before the optimistic cut
        chat.listener(change)  # as the chat passes its optimistic cut on (the rewind's request stays out)
        await pilot.pause()

    assert snap_compare(app, terminal_size=SIZE, run_before=rewinding)


def test_rewind_mode_preview(snap_compare):
    """Rewind mode on the second turn: the banner, the rule, the selected turn highlighted, it and
    the turn after dimmed; nothing has been sent."""
    chat = offline_chat()
    app = offline_app(chat)

    async def preview(pilot):
        await pilot.pause()
        second = chat.conversation.turn_invocations()[1]
        app.chat_screen.enter_rewind_mode(chat.conversation.index_of_invocation(second))
        await pilot.pause()

    assert snap_compare(app, terminal_size=SIZE, run_before=preview)


def test_rewound_toast(snap_compare):
    chat = offline_chat()
    app = offline_app(chat)

    async def rewound(pilot):
        await pilot.pause()
        screen = app.chat_screen
        second = chat.conversation.turn_invocations()[1]
        chat.listener(chat.conversation.truncate_before(second)[1])  # the chat's cut, passed on as the chat does
        screen.ops.show(Outcome(Action.REWIND, "s1", "Rewound 2 turns.", turns_gone=2), "Rewind")  # as the core counted
        await pilot.pause()

    assert snap_compare(app, terminal_size=SIZE, run_before=rewound)


def test_narrow_terminal_60_columns(snap_compare):
    """At 60 columns the status line abbreviates (server, session, turn state, rewind mode stay)
    and nothing is hidden under the scrollbar."""
    assert snap_compare(offline_app(offline_chat()), terminal_size=(60, 20))


def test_narrow_terminal_in_rewind_mode(snap_compare):
    chat = offline_chat()
    app = offline_app(chat)
    assert snap_compare(app, terminal_size=(60, 20), press=["alt+up"])


def test_after_edit_with_prefilled_composer(snap_compare):
    chat = offline_chat()
    app = offline_app(chat)

    async def edit(pilot):
        await pilot.pause()
        second = chat.conversation.turn_invocations()[1]
        item = next(it for it in chat.conversation.items if it.invocation_id == second and it.role == "user")
        app.chat_screen.handle_action("edit", item)
        await pilot.pause()

    assert snap_compare(app, terminal_size=SIZE, run_before=edit)


def test_rewind_unavailable(snap_compare):
    chat = offline_chat(rewind=False)
    app = offline_app(chat)

    async def hover(pilot):
        await pilot.pause()
        await pilot.hover("#transcript", offset=(95, 1))
        await pilot.pause()

    assert snap_compare(app, terminal_size=SIZE, run_before=hover)


def test_error_in_conversation(snap_compare):
    assert snap_compare(offline_app(offline_chat(["02_turn_plain_text", "07_failed_no_parts"])), terminal_size=SIZE)


def test_sessions_panel(snap_compare):
    app = offline_app()

    async def panel(pilot):
        await pilot.pause()
        screen = app.chat_screen
        screen.sessions.remove_class("hidden")
        screen.sessions.show_sessions(
            [
                Session("s1", "hello", created_at="2026-11-20T10:00:00Z", updated_at="2026-11-20T10:05:00Z"),
                Session("s2", "Fork of hello", created_at="2026-11-20T11:00:00Z", updated_at="2026-11-20T11:00:00Z"),
                Session(
                    "s3", "weather questions", created_at="2026-11-19T09:00:00Z", updated_at="2026-11-19T09:30:00Z"
                ),
            ],
            "s1",
        )
        screen.sessions.focus()
        await pilot.pause()

    assert snap_compare(app, terminal_size=SIZE, run_before=panel)


def test_help(snap_compare):
    assert snap_compare(offline_app(), terminal_size=SIZE, press=["f1"])


def test_connect_error(snap_compare):
    from rewindtui.tui.screens.connect_error import ConnectErrorScreen

    app = offline_app(offline_chat([]))

    async def fail(pilot):
        await pilot.pause()
        app.push_screen(
            ConnectErrorScreen(
                "cannot connect to http://127.0.0.1:9/api/a2a/local/demo/: connection refused",
                "Is the server running? Start one with `rewindtui serve`, or run `rewindtui` with no --url.",
            )
        )
        await pilot.pause()

    assert snap_compare(app, terminal_size=SIZE, run_before=fail)
