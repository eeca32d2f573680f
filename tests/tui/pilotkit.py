"""Moved to tests/kit (kit.pilot, kit.apps, kit.fakes). Kept only so that branches written before
the move still import; import from kit, and delete this file once no test imports it."""

from kit.apps import connector_for, make_app
from kit.fakes import Gate, HoldStreamEnd, rewind_gate
from kit.pilot import (
    SIZE,
    ManualClock,
    frame_lines,
    header_offset,
    hold_escape_clock,
    notifications,
    screen_lines,
    send,
    server_tasks,
    server_users,
    settle,
    texts,
    three_turns,
    turns,
    user_texts,
    user_texts_of,
    wait_until,
)

__all__ = [
    "SIZE",
    "ManualClock",
    "frame_lines",
    "hold_escape_clock",
    "Gate",
    "HoldStreamEnd",
    "connector_for",
    "header_offset",
    "make_app",
    "notifications",
    "rewind_gate",
    "screen_lines",
    "send",
    "server_tasks",
    "server_users",
    "settle",
    "texts",
    "three_turns",
    "turns",
    "user_texts",
    "user_texts_of",
    "wait_until",
]
