"""What a rewind cannot undo (``model.effects``): the tool calls in the turns that would go,
read from kagent 0.10.4's own capture (no mark: "may have had effects") and from the embedded
server's marks (``contract.TOOL_EFFECTS_KEY``)."""

from __future__ import annotations

import copy

from captures import load
from rewindtui.a2a import contract
from rewindtui.model import Conversation, extract_messages_from_tasks
from rewindtui.model.effects import OUTSIDE, UNKNOWN, call_text, effect_lines, effects

K = "kagent-0.10.4/"


def kagent_task() -> dict:
    return load(K + "08_tasks_get.txt").json_body["result"]


def items_of(*tasks: dict):
    conv = Conversation("s1")
    conv.load_tasks(list(tasks))
    return conv.items


def test_kagent_call_has_no_mark_and_may_have_had_effects():
    found = effects(items_of(kagent_task()))
    assert [(e.call, e.kind, e.ran) for e in found] == [("get_weather(city='Tokyo')", UNKNOWN, True)]
    assert found[0].words == (
        "get_weather(city='Tokyo') ran; it may have had effects outside the agent that rewinding does not undo"
    )
    assert extract_messages_from_tasks([kagent_task()])  # the capture is a real turn with a call


def marked(task: dict, mark: str | None) -> dict:
    task = copy.deepcopy(task)
    for message in task["history"]:
        for part in message.get("parts", []):
            if part.get("metadata", {}).get("kagent_type") == "function_call" and mark is not None:
                part["metadata"][contract.TOOL_EFFECTS_KEY] = mark
    return task


def test_a_call_marked_session_only_is_not_listed_and_outside_is():
    assert effects(items_of(marked(kagent_task(), contract.EFFECTS_SESSION))) == []
    found = effects(items_of(marked(kagent_task(), contract.EFFECTS_OUTSIDE)))
    assert [(e.kind, e.ran) for e in found] == [(OUTSIDE, True)]
    assert found[0].words == "get_weather(city='Tokyo') ran; it acts outside the agent: rewinding does not undo it"


def test_a_call_without_its_result_was_called_not_ran():
    task = copy.deepcopy(kagent_task())
    for message in task["history"]:
        message["parts"] = [
            p for p in message.get("parts", []) if p.get("metadata", {}).get("kagent_type") != "function_response"
        ]
    [found] = effects(items_of(task))
    assert not found.ran and " was called;" in found.words


def test_only_the_items_given_count_and_rewound_items_never():
    items = items_of(kagent_task())
    assert effects(items[:1]) == []  # the user's message alone: no call
    for item in items:
        item.rewound = object()  # type: ignore[assignment]  # shown from a rewound branch
    assert effects(items) == []


def test_call_text_is_one_bounded_line():
    assert call_text("delete_file", {"name": "temp.txt"}) == "delete_file(name='temp.txt')"
    long = call_text("x", {"a": "\x1b[31mred\nline" + "y" * 200})
    assert len(long) == 60 and long.endswith("…)") and "\x1b" not in long and "\n" not in long
    assert call_text("f", None) == "f()" and call_text("f", [1, 2]) == "f([1, 2])"


def test_lines_are_bounded_with_a_count_of_the_rest():
    task = kagent_task()
    found = effects(items_of(task)) * 6
    lines = effect_lines(found, limit=4)
    assert len(lines) == 5 and lines[-1] == "and 2 more tool calls that rewinding may not undo"
    assert effect_lines(found[:1]) == [found[0].words]
