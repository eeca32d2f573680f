"""The demo model reads its request in one pass (``demo_model._read``) and answers what it
answered when it read the user texts and the word count in two: on random requests (user and
model contents, thoughts, several parts, empty texts, function calls and responses) the same
texts and count as the two readings it replaced (kept below as the specification), and the same
reply, streamed and whole, byte for byte."""

from __future__ import annotations

import asyncio
from typing import Any

from google.adk.models.llm_request import LlmRequest
from google.genai import types
from hypothesis import given, settings
from hypothesis import strategies as st

from rewindtui.server.agent.demo_model import DemoLlm, _history, _read, _words


def user_texts(llm_request: LlmRequest) -> list[str]:  # the demo model's reading before, verbatim
    texts: list[str] = []
    for content in llm_request.contents:
        if content.role != "user":
            continue
        text = "".join(p.text or "" for p in content.parts or [] if p.text and not p.thought)
        if text:
            texts.append(text)
    return texts


def word_count(llm_request: LlmRequest) -> int:  # idem
    count = 0
    for content in llm_request.contents:
        for part in content.parts or []:
            if part.text:
                count += _words(part.text)
    return count


TEXTS = st.sampled_from(("hi", "", "two words", " spaced  out ", "weather?", "ok\nthen", "x"))


@st.composite
def parts(draw: st.DrawFn) -> types.Part:
    kind = draw(st.sampled_from(("text", "text", "text", "thought", "call", "response", "none")))
    if kind == "text":
        return types.Part(text=draw(TEXTS))
    if kind == "thought":
        return types.Part(text=draw(TEXTS), thought=True)
    if kind == "call":
        return types.Part(function_call=types.FunctionCall(name="other", args={}))
    if kind == "response":
        return types.Part(function_response=types.FunctionResponse(name="other", response={"a": 1}))
    return types.Part()


@st.composite
def requests(draw: st.DrawFn) -> LlmRequest:
    contents = []
    for _ in range(draw(st.integers(min_value=0, max_value=20))):
        role = draw(st.sampled_from(("user", "user", "model", None)))
        items = draw(st.one_of(st.none(), st.lists(parts(), max_size=3)))
        contents.append(types.Content(role=role, parts=items))
    config = types.GenerateContentConfig(system_instruction="weather_calls=2")
    return LlmRequest(model="demo", contents=contents, config=config)


async def _replies(request: LlmRequest, stream: bool) -> list[dict[str, Any]]:
    return [r.model_dump(exclude_none=True) async for r in DemoLlm().generate_content_async(request, stream=stream)]


@settings(max_examples=300, deadline=None)
@given(request=requests())
def test_one_pass_reads_what_the_two_did(request: LlmRequest) -> None:
    users, count = _read(request)
    assert users == user_texts(request)
    assert count == word_count(request)


@settings(max_examples=100, deadline=None)
@given(request=requests(), stream=st.booleans())
def test_the_reply_is_what_it_was(request: LlmRequest, stream: bool) -> None:
    replies = asyncio.run(_replies(request, stream))
    last = request.contents[-1] if request.contents else None
    if last is not None and any(p.function_response for p in last.parts or []):
        return  # a tool's result: answered from the response, not the history
    users = user_texts(request)
    current = users[-1] if users else ""
    want = f"You said: {current} (turn {len(users)}; history: {_history(users)}; weather_calls=2)"
    final = replies[-1]
    assert final["content"]["parts"][0]["text"] == want
    assert final["usage_metadata"]["prompt_token_count"] == word_count(request)
    if stream:
        assert "".join(r["content"]["parts"][0]["text"] for r in replies[:-1]) == want
