"""``server/agent/content_copy.py`` makes exactly the objects ADK's ``_copy_content_for_request``
makes: on random contents (text, thoughts, inline data, function calls and responses with and
without ``adk-`` ids, empty and missing parts, models built, validated from dicts or constructed), each copy
compared with ADK's one object at a time -- class, fields, fields set, extra and private values,
which nested payloads are shared with the source -- and the source left as it was."""

from __future__ import annotations

from typing import Any

from google.genai import types
from hypothesis import given, settings
from hypothesis import strategies as st

from rewindtui.server.agent.content_copy import copier
from rewindtui.server.shared.internals import resolve

ADK = resolve("google.adk.flows.llm_flows.context._contents", "_copy_content_for_request")
COPY = copier(ADK)


@st.composite
def parts(draw: st.DrawFn) -> types.Part:
    kind = draw(st.sampled_from(("text", "text", "thought", "data", "call", "response", "empty")))
    cid = draw(st.sampled_from((None, "c1", "adk-c2")))
    if kind == "text":
        return types.Part(text=draw(st.text(max_size=5)))
    if kind == "thought":
        return types.Part(text="hmm", thought=True, thought_signature=b"sig")
    if kind == "data":
        return types.Part(inline_data=types.Blob(mime_type="text/plain", data=b"x", display_name="f.txt"))
    if kind == "call":
        return types.Part(function_call=types.FunctionCall(id=cid, name="get_weather", args={"city": "Paris"}))
    if kind == "response":
        return types.Part(function_response=types.FunctionResponse(id=cid, name="get_weather", response={"ok": 1}))
    return types.Part()


@st.composite
def contents(draw: st.DrawFn) -> types.Content:
    role = draw(st.sampled_from(("user", "model", None)))
    how = draw(st.sampled_from(("parts", "parts", "none", "empty", "validated", "constructed", "role only")))
    if how == "none":
        return types.Content(role=role)
    if how == "empty":
        return types.Content(role=role, parts=[])
    if how == "role only":
        return types.Content(role=role or "user")
    items = draw(st.lists(parts(), min_size=1, max_size=4))
    if how == "validated":  # from the wire's dicts, as the session store reads them
        return types.Content.model_validate({"role": role, "parts": [p.model_dump(exclude_none=True) for p in items]})
    if how == "constructed":  # parts present but not in the fields set: ADK's setattr adds them
        return types.Content.model_construct(_fields_set={"role"}, role=role, parts=items)
    return types.Content(role=role, parts=items)


def same_model(ours: Any, adks: Any, source: Any) -> None:
    assert type(ours) is type(adks)
    assert ours is not source
    assert ours.__pydantic_fields_set__ == adks.__pydantic_fields_set__
    assert ours.__pydantic_fields_set__ is not source.__pydantic_fields_set__
    assert ours.__pydantic_extra__ == adks.__pydantic_extra__
    assert ours.__pydantic_private__ == adks.__pydantic_private__
    assert ours.__dict__.keys() == adks.__dict__.keys()
    for name, value in ours.__dict__.items():
        if name == "parts":
            continue
        assert value == adks.__dict__[name]
        assert (value is source.__dict__[name]) == (adks.__dict__[name] is source.__dict__[name]), name


@settings(max_examples=400, deadline=None)
@given(content=contents(), strip=st.booleans())
def test_copies_are_adks_copies(content: types.Content, strip: bool) -> None:
    before = content.model_dump()
    ours = COPY(content, strip_client_function_call_ids=strip)
    adks = ADK(content, strip_client_function_call_ids=strip)
    assert content.model_dump() == before  # the source untouched
    assert ours == adks
    same_model(ours, adks, content)
    if content.parts is None:
        assert ours.parts is None and adks.parts is None
        return
    assert (ours.parts is content.parts) == (adks.parts is content.parts)
    for mine, theirs, source in zip(ours.parts, adks.parts, content.parts, strict=True):
        same_model(mine, theirs, source)
    # a change to a copy's top-level fields, as a request processor may make, leaves the source alone
    for part in ours.parts:
        part.text = "changed downstream"
    ours.role = "changed"
    assert content.model_dump() == before


def test_a_function_call_is_adks_own_copy() -> None:
    call = types.FunctionCall(id="adk-1", name="get_weather", args={})
    content = types.Content(role="model", parts=[types.Part(function_call=call)])
    assert COPY(content).parts[0].function_call.id is None  # stripped, as ADK strips it
    assert COPY(content, strip_client_function_call_ids=False).parts[0].function_call.id == "adk-1"
