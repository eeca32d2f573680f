"""The transcript's pure layout, without Textual: offsets, windowing that does not make the view
jump, and which items make a turn."""

from __future__ import annotations

import sys

from rewindtui.a2a.classify import classify
from rewindtui.model import Conversation
from rewindtui.model.rewound import Mark
from rewindtui.tui.transcript_layout import (
    START,
    LineLayout,
    estimate_height,
    first_turn,
    group_role,
    index_of,
    last_turn,
    neighbour_turn,
    scroll_to_show,
    turn_bounds,
    turn_starts,
    turns_from,
)


def test_the_module_imports_no_textual():
    import subprocess

    code = (
        "import sys, rewindtui.tui.transcript_layout; "
        "print(any(m == 'textual' or m.startswith('textual.') for m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.strip()
    assert out == "False"


def _layout(heights: list[int], width: int = 80) -> LineLayout:
    layout = LineLayout()
    layout.reset(width)
    for h in heights:
        layout.append(h, False)
    layout.recount(0)
    return layout


def test_offsets_and_item_at():
    layout = _layout([2, 3, 1])
    assert layout.starts == [0, 2, 5, 6] and layout.total == 6
    assert layout.item_at(0) == (0, 0) and layout.item_at(4) == (1, 2) and layout.item_at(5) == (2, 0)
    assert layout.item_at(6) is None and layout.item_at(-1) is None


def test_a_window_made_exact_moves_the_view_by_what_grew_above_it():
    layout = _layout([2, 2, 2, 2])
    measured: list[int] = []

    def measure(index: int) -> int:
        measured.append(index)
        return 5  # each is taller drawn than estimated

    changed, shift = layout.make_window_exact(3, 2, measure)  # lines 3..4: in item 1 (2..3), then 2
    assert changed and measured == [1]  # item 1, drawn, covers the whole window
    assert shift == 3  # item 1 starts above line 3 and grew by 3 lines
    assert layout.heights == [2, 5, 2, 2] and layout.total == 11
    assert layout.make_window_exact(3, 2, measure) == (False, 0)  # exact now: nothing measured again


def test_prepend_keeps_the_total_and_marks_the_next_item_for_remeasure():
    layout = _layout([3, 3])
    layout.make_exact(0, 2, lambda i: 3)
    layout.prepend([1, 1])
    assert layout.starts == [0, 1, 2, 5, 8] and layout.exact == [False, False, False, True]


def _conversation(*texts: str) -> Conversation:
    conv = Conversation()
    for n, text in enumerate(texts):
        conv.add_user_message(
            {"kind": "message", "role": "user", "messageId": f"u{n}", "parts": [{"kind": "text", "text": text}]}
        )
        frame = {
            "kind": "message",
            "role": "agent",
            "messageId": f"a{n}",
            "taskId": f"t{n}",
            "contextId": "s",
            "parts": [{"kind": "text", "text": f"re {text}"}],
            "metadata": {"kagent_invocation_id": f"e-{n}", "adk_invocation_id": f"e-{n}"},
        }
        conv.apply(classify(frame))
    return conv


def test_turn_bounds_and_starts_are_pure():
    conv = _conversation("one", "two", "three")
    items = conv.items
    starts = turn_starts(items)
    if not starts:  # the capture-free frames carry no invocation: nothing to group (still pure)
        assert turn_bounds(items, 0) is None
        return
    assert turns_from(items, starts[0]) == len(starts)
    first, end = turn_bounds(items, starts[-1])  # type: ignore[misc]
    assert first == starts[-1] and end == len(items)


def test_rewound_items_make_their_own_turn():
    conv = _conversation("one", "two")
    items = conv.items
    for item in items[2:]:
        item.rewound = Mark(at=None, by="task-r", fork_before=None)
    assert turn_bounds(items, len(items) - 1)[1] == len(items)  # type: ignore[index]


def test_scroll_to_show_moves_as_little_as_it_can():
    assert scroll_to_show(10, 14, view=20, scroll_y=5) == 5  # in view: stays
    assert scroll_to_show(10, 14, view=20, scroll_y=12) == 10  # its top is above: to the top
    assert scroll_to_show(30, 34, view=20, scroll_y=5) == 14  # below: its bottom at the bottom
    assert scroll_to_show(30, 80, view=20, scroll_y=5) == 30  # taller than the view: from its top


def test_relayout_keeps_what_is_known_and_estimates_the_rest():
    layout = _layout([2, 3, 1])
    layout.relayout(1, 4, 80, known=lambda i: 5 if i == 2 else None, estimate=lambda i: 7)
    assert layout.heights == [2, 7, 5, 7] and layout.exact == [False, False, True, False]
    assert layout.total == 21
    layout.relayout(3, 4, 60, known=lambda i: None, estimate=lambda i: 1)  # another width: all again
    assert layout.width == 60 and layout.heights == [1, 1, 1, 1]


def test_navigation_between_turns_is_pure():
    conv = _conversation("one", "two", "three")
    items = conv.items
    starts = turn_starts(items)
    if not starts:
        assert first_turn(items) is None and last_turn(items) is None
        return
    assert first_turn(items) == starts[0] and turn_bounds(items, last_turn(items))[0] == starts[-1]  # type: ignore[arg-type,index]
    last = turn_bounds(items, starts[-1])
    assert neighbour_turn(items, last, -1) == starts[-2] and neighbour_turn(items, last, 1) is None  # type: ignore[arg-type]
    assert index_of(items, items[1]) == 1
    assert group_role(items, 0) == START and estimate_height(items[0], 80, False) >= 3


def test_a_tool_call_waiting_for_its_result_says_so_whole_however_long_its_arguments():
    """A call with no result yet (a question waits) is cut before "(no result yet)", which stays
    whole; before, the call took the whole line and the words were cropped to "… ("."""
    from types import SimpleNamespace

    from rich.style import Style

    from rewindtui.tui.widgets.transcript_items import _tool_line

    call = SimpleNamespace(name="delete_file", args={"path": "x" * 300}, result=None, has_result=False)
    for width in (60, 124, 200):
        line = _tool_line(call, False, Style(), "k", width=width)
        assert line.plain.endswith("… (no result yet)") and line.cell_len <= width  # "▸ " + the room
    narrow = _tool_line(call, False, Style(), "k", width=28)  # a pane this narrow keeps the call
    assert narrow.plain.startswith("▸ delete_file(") and narrow.plain.endswith("…") and narrow.cell_len <= 28
