"""Snapshots of the branch features (SVGs in snapshots/test_branches_snapshots/): the turn picker,
a rewound turn shown dimmed in place, and a fork's origin in the sessions panel. Content comes
from the real captures; rewound marks and sessions are fixed, so the screens are the same on
every machine."""

from __future__ import annotations

from kit.offline import offline_app, offline_chat
from rewindtui.a2a import contract
from rewindtui.client.a2a_client import Session

SIZE = (100, 30)
AT = "2026-11-20T10:42:00Z"


def _wire(item):
    """The message an item was made from (a text-only item keeps its text, not its wire dict)."""
    if item.raw.get("parts"):
        return item.raw
    metadata = {"kagent_invocation_id": item.invocation_id, "kagent_author": item.author}
    return {
        "kind": "message",
        "messageId": item.key,
        "role": item.role,
        "taskId": item.task_id,
        "parts": [{"kind": "text", "text": item.text}],
        "metadata": {k: v for k, v in metadata.items() if v is not None},
    }


def chat_with_a_rewound_turn():
    """The three captured turns, the last one rewound (as include_rewound lists it)."""
    chat = offline_chat()
    conversation = chat.conversation
    third = conversation.turn_invocations()[2]
    cut = conversation.index_of_invocation(third)
    rewound = conversation.items[cut:]
    tasks = [
        {"kind": "task", "id": item.task_id, "status": {"state": "completed"}} for item in conversation.items[:cut]
    ]
    tasks.append(
        {
            "kind": "task",
            "id": rewound[0].task_id,
            "status": {"state": "completed", "timestamp": "2026-11-20T10:30:00Z"},
            "metadata": {contract.REWOUND_KEY: True, contract.REWOUND_BY_TASK_KEY: "r-1", contract.REWOUND_AT_KEY: AT},
            "history": [_wire(item) for item in rewound],
        }
    )
    conversation.truncate_before(third)
    conversation.show_rewound(tasks)
    chat.client.capabilities.redo = True
    return chat


def test_rewind_picker(snap_compare):
    chat = offline_chat()
    for n, task_id in enumerate(dict.fromkeys(i.task_id for i in chat.conversation.items if i.task_id)):
        chat.conversation.task_times[task_id] = f"2026-11-20T10:0{n}:00Z"
    app = offline_app(chat)

    async def picker(pilot):
        await pilot.pause()
        await pilot.press("ctrl+g")
        await pilot.pause()
        await pilot.press("down")
        await pilot.pause()

    assert snap_compare(app, terminal_size=SIZE, run_before=picker)


def test_rewound_turn_shown_dimmed(snap_compare):
    app = offline_app(chat_with_a_rewound_turn())
    assert snap_compare(app, terminal_size=SIZE)


def test_fork_origin_in_the_sessions_panel(snap_compare):
    app = offline_app()

    async def panel(pilot):
        await pilot.pause()
        screen = app.chat_screen
        screen.sessions.remove_class("hidden")
        fork = {contract.SESSION_FORKED_FROM_FIELD: "s1", contract.SESSION_FORK_TURN_FIELD: 2}
        screen.sessions.show_sessions(
            [
                Session(
                    "s1", "weather chat", updated_at="2026-11-20T10:05:00Z", raw={contract.SESSION_BRANCHES_FIELD: 2}
                ),
                Session("s2", "Fork of weather chat @ turn 2", updated_at="2026-11-20T11:00:00Z", raw=fork),
                Session("s3", "old questions", updated_at="2026-11-19T09:30:00Z", gone=True),
            ],
            "s2",
        )
        screen.sessions.focus()
        await pilot.pause()

    assert snap_compare(app, terminal_size=SIZE, run_before=panel)
