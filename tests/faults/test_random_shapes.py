"""Random JSON shapes (depth, sizes, wrong types) through the client's parsing and the
transcript's rendering: no exception escapes; every input yields items, or a ClientError whose
one line is what the view shows."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from rich.console import Console
from rich.markdown import Markdown
from rich.style import Style

from rewindtui.a2a.classify import StreamEvent
from rewindtui.client.a2a_client import ClientError
from rewindtui.client.bounded_json import bound_task
from rewindtui.client.errors import parse_frame, parse_json
from rewindtui.client.tasks import task_of
from rewindtui.model import Conversation
from rewindtui.output.render_text import format_item
from rewindtui.tui.widgets.part_view import PartStyles, render_parts

pytestmark = pytest.mark.timeout(300)

leaves = st.one_of(st.none(), st.booleans(), st.integers(), st.floats(allow_nan=False), st.text(max_size=30))
values = st.recursive(
    leaves,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
    max_leaves=40,
)
STYLES = PartStyles(Style(), Style(), Style(), Style())


def nested(depth: int, kind: str) -> str:
    """Text nested ``depth`` levels (past any recursive parser's limit when deep)."""
    if kind == "list":
        return "[" * depth + "1" + "]" * depth
    return '{"a":' * depth + '"x"' + "}" * depth


@st.composite
def part(draw) -> str:
    choice = draw(st.sampled_from(["text", "data", "deep", "file", "junk", "wrong"]))
    if choice == "text":
        return json.dumps({"text": draw(st.text(max_size=200))})
    if choice == "data":
        return json.dumps({"data": draw(values)})
    if choice == "deep":
        return '{"data": ' + nested(draw(st.integers(1, 3000)), draw(st.sampled_from(["list", "dict"]))) + "}"
    if choice == "file":
        return json.dumps({"raw": draw(st.text(max_size=40)), "filename": draw(st.text(max_size=10)), "mediaType": 3})
    if choice == "wrong":
        return json.dumps(draw(values))
    return draw(st.sampled_from(['"a string part"', "1", "null", "[]", '{"kind": "data"}', '{"parts": 4}']))


@st.composite
def answer(draw) -> str:
    parts = ",".join(draw(st.lists(part(), max_size=6)))
    role = draw(st.sampled_from(['"ROLE_AGENT"', '"agent"', "7", "null"]))
    message = f'{{"role": {role}, "messageId": "m{draw(st.integers(0, 9))}", "parts": [{parts}]}}'
    history = draw(st.sampled_from([f"[{message}]", f'[{message}, "junk"]', "{}", "null", f"[{message}, {message}]"]))
    status = draw(
        st.sampled_from(
            ['{"state": "TASK_STATE_COMPLETED"}', '"done"', f'{{"state": "working", "message": {message}}}']
        )
    )
    task = f'{{"id": "t1", "contextId": "c1", "status": {status}, "history": {history}}}'
    return draw(st.sampled_from([task, f'{{"task": {task}}}', message, f"[{task}]", draw(values).__repr__()]))


def _render(conversation: Conversation) -> None:
    console = Console(width=80, file=None, record=False, color_system=None)
    options = console.options.update(width=78)
    for item in conversation.items:
        assert isinstance(format_item(item), str)
        renderables: list[Any] = [Markdown(item.text)] + render_parts(
            item.other_parts, STYLES, expanded=True, savable=True
        )
        for renderable in renderables:
            console.render_lines(renderable, options)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(answer())
def test_a_unary_answer_yields_items_or_a_shown_error(text):
    try:
        task = task_of(parse_json(text), "GetTask")
    except ClientError as exc:
        assert str(exc)
        return
    except ValueError:
        return  # not JSON at all: the callers say "not JSON" (MalformedFrame)
    conversation = Conversation()
    conversation.load_tasks([task])
    _render(conversation)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(answer())
def test_a_stream_frame_yields_items_or_a_shown_error(text):
    frame = '{"jsonrpc": "2.0", "id": 1, "result": ' + text + "}"
    try:
        event: StreamEvent = parse_frame(frame)
    except ClientError as exc:
        assert str(exc)
        return
    bound_task(event.body)
    conversation = Conversation()
    conversation.apply(event)
    _render(conversation)
