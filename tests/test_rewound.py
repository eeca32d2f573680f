"""Rewound turns read from a session's tasks and shown in place (pure): the groups found in a task
list (rewindtui's include_rewound tasks, the kagent-rewind add-on's rewound history), and the
conversation showing them marked, outside its turns and indexes, without touching its own items.

The task dicts follow what the servers send: rewindtui's ``store.task_json`` (a rewound task with
``rewindtui_rewound*`` metadata; a rewind's Task flagged as the effective history with its own
invocation), and the add-on's ``kagent_rewind.history.rewrite_task`` (the task keeps its live
history; what a rewind took out is in ``metadata.kagent_rewind_rewound_history``).
"""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from rewindtui.a2a import contract, kagent
from rewindtui.model import Conversation
from rewindtui.model.rewound import rewound_groups
from rewindtui.output.turn_list import describe_tools, turn_entries


def message(mid: str, role: str, text: str, inv: str, task: str, **meta: object) -> dict:
    return {
        "kind": "message",
        "messageId": mid,
        "role": role,
        "parts": [{"kind": "text", "text": text}],
        "taskId": task,
        "contextId": "s",
        "metadata": {"kagent_invocation_id": inv, **meta},
    }


def turn(n: int, *, rewound_by: str | None = None, at: str = "2026-11-20T10:00:00Z") -> dict:
    task = f"t{n}"
    meta: dict = {"kagent_invocation_id": f"i{n}"}
    if rewound_by:
        meta.update({contract.REWOUND_KEY: True, contract.REWOUND_BY_TASK_KEY: rewound_by, contract.REWOUND_AT_KEY: at})
    return {
        "kind": "task",
        "id": task,
        "contextId": "s",
        "status": {"state": "completed", "timestamp": f"2026-11-20T09:0{n}:00Z"},
        "metadata": meta,
        "history": [
            message(f"u{n}", "user", f"question {n}", f"i{n}", task),
            message(f"a{n}", "agent", f"answer {n}", f"i{n}", task),
        ],
    }


def rewind_task(task_id: str, own: str, history: list[dict], *, rewound_by: str | None = None) -> dict:
    meta: dict = {contract.EFFECTIVE_HISTORY_KEY: True, contract.REWIND_INVOCATION_KEY: own}
    if rewound_by:
        meta.update({contract.REWOUND_KEY: True, contract.REWOUND_BY_TASK_KEY: rewound_by})
    return {
        "kind": "task",
        "id": task_id,
        "contextId": "s",
        "status": {"state": "completed"},
        "metadata": meta,
        "history": history,
    }


def session_after_rewind() -> tuple[list[dict], list[dict]]:
    """Turns 1-3, a rewind before turn 2 (r1), then turn 4: (include_rewound list, current list)."""
    t1, t2, t3 = turn(1), turn(2, rewound_by="r1"), turn(3, rewound_by="r1")
    r1 = rewind_task("r1", "e-r1", t1["history"])
    t4 = turn(4)
    return [t1, t2, t3, r1, t4], [t1, r1, t4]


def texts(conversation: Conversation) -> list[tuple[str, bool]]:
    return [(item.text, item.rewound is not None) for item in conversation.items]


# -- groups ------------------------------------------------------------------------------------
def test_groups_say_when_by_what_and_where_to_fork() -> None:
    everything, _ = session_after_rewind()
    groups = rewound_groups(everything)
    assert [(g.position, g.task["id"]) for g in groups] == [(1, "t2"), (2, "t3")]
    assert groups[0].mark.by == "r1" and groups[0].mark.at == "2026-11-20T10:00:00Z"
    # up to and including turn 2: fork before turn 3; up to turn 3: before the rewind itself
    assert [g.mark.fork_before for g in groups] == ["i3", "e-r1"]


def test_a_rewound_rewind_is_not_a_rewound_turn() -> None:
    t1, t2 = turn(1), turn(2, rewound_by="r1")
    r1 = rewind_task("r1", "e-r1", t1["history"], rewound_by="r2")
    groups = rewound_groups([t1, t2, r1])
    assert [g.task["id"] for g in groups] == ["t2"]


def test_the_kagent_addon_keeps_rewound_messages_in_the_task() -> None:
    # kagent_rewind.history.rewrite_task: kept history stays, rewound messages move to metadata
    t1 = turn(1)
    t2 = turn(2)
    rewound = t2["history"]
    t2 = {
        **t2,
        "history": [],
        "metadata": {**t2["metadata"], kagent.ADDON_REWOUND_HISTORY: rewound, kagent.ADDON_REWOUND_BY: ["rw"]},
    }
    rewind = {
        "kind": "task",
        "id": "rw",
        "status": {"state": "completed", "timestamp": "2026-11-20T11:00:00Z"},
        "metadata": {},
    }
    (group,) = rewound_groups([t1, t2, rewind])
    assert group.position == 1 and group.task["history"] == rewound
    assert group.mark.at == "2026-11-20T11:00:00Z" and group.mark.by is None and group.mark.fork_before is None


# -- shown in place ------------------------------------------------------------------------------
def test_rewound_turns_are_shown_in_place_and_kept_out_of_the_conversation() -> None:
    everything, current = session_after_rewind()
    conversation = Conversation("s")
    conversation.load_tasks(current)
    before = list(conversation.items)
    invocations = conversation.turn_invocations()
    change = conversation.show_rewound(everything)
    assert change.first == 2
    assert texts(conversation) == [
        ("question 1", False),
        ("answer 1", False),
        ("question 2", True),
        ("answer 2", True),
        ("question 3", True),
        ("answer 3", True),
        ("question 4", False),
        ("answer 4", False),
    ]
    assert [i for i in conversation.items if i.rewound is None] == before  # the same objects, in order
    assert conversation.turn_invocations() == invocations == ["i1", "i4"]
    assert conversation.index_of_invocation("i2") is None  # not a rewind target
    assert "u2" not in conversation.message_ids()
    assert conversation.shows_rewound

    # rewinding the conversation is unaffected by what is shown: the cut is at turn 4
    token, _ = conversation.truncate_before("i4")
    assert [t for t, r in texts(conversation) if not r] == ["question 1", "answer 1"]
    conversation.rollback(token)

    hide = conversation.hide_rewound()
    assert hide.first == 2 and conversation.items == before and not conversation.shows_rewound


def test_showing_again_replaces_what_was_shown() -> None:
    everything, current = session_after_rewind()
    conversation = Conversation("s")
    conversation.load_tasks(current)
    conversation.show_rewound(everything)
    conversation.show_rewound(everything)
    assert sum(1 for i in conversation.items if i.rewound is not None) == 4


def test_a_rewound_message_still_in_the_conversation_is_not_shown_twice() -> None:
    # a fork's task cut in the middle: rewound as a task, its first turn still in the history
    fork = {
        "kind": "task",
        "id": "f",
        "status": {"state": "completed"},
        "metadata": {
            contract.EFFECTIVE_HISTORY_KEY: True,
            contract.REWOUND_KEY: True,
            contract.REWOUND_BY_TASK_KEY: "r",
        },
    }
    t1, t2 = turn(1), turn(2)
    fork_task = {**fork, "history": t1["history"] + t2["history"]}
    fork_task["metadata"] = {k: v for k, v in fork["metadata"].items() if k != contract.EFFECTIVE_HISTORY_KEY}
    r = rewind_task("r", "e-r", t1["history"])
    conversation = Conversation("s")
    conversation.load_tasks([r])
    conversation.show_rewound([fork_task, r])
    assert texts(conversation) == [("question 1", False), ("answer 1", False), ("question 2", True), ("answer 2", True)]


def test_a_rewound_turn_s_text_is_not_the_conversation_s() -> None:
    everything, current = session_after_rewind()
    conversation = Conversation("s")
    conversation.load_tasks(current)
    conversation.show_rewound(everything)
    assert conversation.user_text_of("i2") == ""  # a rewound turn's text is not the conversation's


@settings(max_examples=100, deadline=None)
@given(st.lists(st.booleans(), min_size=1, max_size=12))
def test_show_then_hide_gives_back_the_same_view(rewound_flags: list[bool]) -> None:
    """Any pattern of rewound turns: shown in task order, live items untouched, hidden exactly."""
    tasks = [turn(n, rewound_by="r" if flag else None) for n, flag in enumerate(rewound_flags, start=1)]
    current = [t for t in tasks if not t["metadata"].get(contract.REWOUND_KEY)]
    conversation = Conversation("s")
    conversation.load_tasks(current)
    before = list(conversation.items)
    conversation.show_rewound(tasks)
    assert [item.text for item in conversation.items] == [m["parts"][0]["text"] for t in tasks for m in t["history"]]
    assert [item for item in conversation.items if item.rewound is None] == before
    conversation.hide_rewound()
    assert conversation.items == before


# -- the picker's entries ------------------------------------------------------------------------
def test_turn_entries_newest_first_with_tools_and_state() -> None:
    everything, current = session_after_rewind()
    weather = turn(4)
    call = {
        "kind": "data",
        "data": {"id": "c1", "name": "get_weather", "args": {"city": "Oslo"}},
        "metadata": {"kagent_type": "function_call"},
    }
    result = {
        "kind": "data",
        "data": {"id": "c1", "name": "get_weather", "response": {"ok": 1}},
        "metadata": {"kagent_type": "function_response"},
    }
    weather["history"] = [
        weather["history"][0],
        {**message("c", "agent", "", "i4", "t4"), "parts": [call]},
        {**message("r", "agent", "", "i4", "t4", **{contract.STATE_CHANGED_KEY: ["weather_calls"]}), "parts": [result]},
        weather["history"][1],
    ]
    everything[-1] = current[-1] = weather
    conversation = Conversation("s")
    conversation.load_tasks(current)
    conversation.show_rewound(everything)
    entries = turn_entries(conversation)
    assert [(e.preview, e.number, e.rewound is not None) for e in entries] == [
        ("question 4", 2, False),
        ("question 3", 0, True),
        ("question 2", 0, True),
        ("question 1", 1, False),
    ]
    assert entries[0].tools == ["get_weather"] and entries[0].state_changed == ["weather_calls"]
    assert describe_tools(entries[0]) == "⚙ get_weather · changed weather_calls"
    assert describe_tools(entries[3]) == "no tools"
    assert entries[0].item.rewind_target == "i4" and entries[0].opens_with_user
    assert entries[0].time  # the task's time, shown in local time
