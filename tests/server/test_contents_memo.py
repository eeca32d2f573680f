"""The memos of ``server/agent/contents_memo.py`` answer exactly what google-adk's own functions
answer: random histories (text, tool calls and responses, orphans, rewinds, state-only events,
transcriptions, thoughts, branches, long-running calls, task scopes) grown a few events at a time,
each list the previous one plus a tail (the same event objects, as the server's session cache hands
them to each turn); every answer compared with ADK's function over the whole list."""

from __future__ import annotations

import weakref
from types import SimpleNamespace
from typing import Any

from google.adk.agents import LlmAgent
from google.adk.agents.invocation_context import InvocationContext
from google.adk.events.event import Event
from google.adk.events.event_actions import EventActions, EventCompaction
from google.adk.sessions import InMemorySessionService
from google.adk.sessions.session import Session
from google.genai import types
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from rewindtui.server.agent import contents_memo
from rewindtui.server.agent.contents_memo import BranchEventsMemo, ContentsMemo, RewindsMemo, TaskScopeMemo

AGENT = "demo"
INVOCATIONS = ("i1", "i2", "i3", "i4")
CALL_IDS = ("c1", "c2", "adk-c3")
#: mostly what a session holds (plain text on no branch), with every kind of event now and then
BRANCHES = (*[None] * 12, AGENT, f"{AGENT}.get_weather@c1", "other")

contents_memo.install()  # the server's agent does this; the originals stay on each memo


def _originals() -> dict[str, Any]:
    installed = contents_memo.install()
    assert installed.contents and installed.rewinds and installed.task_scope and installed.branch_events
    return {
        "contents": installed.contents.original,
        "rewinds": installed.rewinds.original,
        "task_scope": installed.task_scope.original,
        "branch_events": installed.branch_events.original,
    }


ORIGINAL = _originals()


@st.composite
def events(draw: st.DrawFn) -> Event:
    kinds = ["user"] * 6 + ["model"] * 6 + ["call"] * 3 + ["response"] * 3
    kind = draw(st.sampled_from([*kinds, "state", "rewind", "rewind", "transcript", "thought", "compaction"]))
    inv = draw(st.sampled_from(INVOCATIONS))
    branch = draw(st.sampled_from(BRANCHES))
    scope = draw(st.sampled_from((*[None] * 12, "c1")))
    common: dict[str, Any] = {"invocation_id": inv, "branch": branch, "isolation_scope": scope}
    text = draw(st.sampled_from(("hi", "weather in Paris", "ok", "hi", "")))
    author = draw(st.sampled_from(("user", AGENT, "helper")))
    cid = draw(st.sampled_from(CALL_IDS))
    name = draw(st.sampled_from(("get_weather", "adk_request_confirmation", "transfer_to_agent")))
    if kind == "user":
        return Event(author="user", content=types.Content(role="user", parts=[types.Part(text=text)]), **common)
    if kind == "model":
        return Event(author=author, content=types.Content(role="model", parts=[types.Part(text=text)]), **common)
    if kind == "thought":
        part = types.Part(text=text or "thinking", thought=True)
        return Event(author=author, content=types.Content(role="model", parts=[part]), **common)
    if kind == "call":
        call = types.FunctionCall(id=cid, name=name, args={"city": "Paris"})
        long = {cid} if draw(st.booleans()) and draw(st.booleans()) else None
        return Event(
            author=author,
            content=types.Content(role="model", parts=[types.Part(function_call=call)]),
            long_running_tool_ids=long,
            **common,
        )
    if kind == "response":
        response = types.FunctionResponse(id=cid, name=name, response={"ok": True})
        return Event(
            author=draw(st.sampled_from(("user", AGENT))),
            content=types.Content(role="user", parts=[types.Part(function_response=response)]),
            **common,
        )
    if kind == "state":
        return Event(author=author, actions=EventActions(state_delta={"k": text}), **common)
    if kind == "rewind":
        target = draw(st.sampled_from(INVOCATIONS))
        return Event(author="user", actions=EventActions(rewind_before_invocation_id=target), **common)
    if kind == "compaction":
        summary = types.Content(role="model", parts=[types.Part(text="summary")])
        compaction = EventCompaction(start_timestamp=0.0, end_timestamp=1e12, compacted_content=summary)
        return Event(author=AGENT, actions=EventActions(compaction=compaction), **common)
    transcription = types.Transcription(text=text or "spoken")
    if draw(st.booleans()):
        return Event(author="user", input_transcription=transcription, **common)
    return Event(author=author, output_transcription=transcription, **common)


def grown(history: list[Event], steps: list[int]) -> list[list[Event]]:
    """The history as the session holds it at each call: prefixes (the same objects) of it, each
    ``steps[i]`` events (1-3, cycling) longer than the one before."""
    out, n, i = [], 0, 0
    while n < len(history):
        n = min(len(history), n + (steps[i % len(steps)] if steps else 1))
        out.append(history[:n])
        i += 1
    return out


def dumped(contents: list[types.Content]) -> list[dict[str, Any]]:
    return [c.model_dump(exclude_none=True) for c in contents]


histories = st.lists(events(), min_size=1, max_size=40)
cut_lists = st.lists(st.integers(min_value=1, max_value=3), max_size=6)
SETTINGS = settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@SETTINGS
@given(
    history=histories,
    cuts=cut_lists,
    branch=st.sampled_from((None, AGENT)),
    preserve=st.booleans(),
    thoughts=st.booleans(),
)
def test_contents_are_adks_contents(
    history: list[Event], cuts: list[int], branch: str | None, preserve: bool, thoughts: bool
) -> None:
    memo = ContentsMemo(ORIGINAL["contents"])
    kwargs = {"preserve_function_call_ids": preserve, "include_thoughts_from_other_agents": thoughts}
    for seen in grown(history, cuts):
        got = memo(branch, seen, AGENT, **kwargs)
        want = ORIGINAL["contents"](branch, seen, AGENT, **kwargs)
        assert dumped(got) == dumped(want)
        # what a request's processors do to the copies they get never reaches the next answer
        for content in got:
            for part in content.parts or []:
                part.text = "changed downstream"


#: what a request does with the contents it got before the next call: drops them untouched, changes
#: one (a part's text, a content's role, its parts list, a part's fields set) and drops them, or
#: still holds them (a list, one content, one part or one part's ``__dict__``) during the next call
REQUEST_DOES = (
    *("drop", "drop", "drop", "text", "role", "append", "fields"),
    *("hold", "hold one", "hold part", "hold dict", "weak", "weak part"),
)


@st.composite
def plain_events(draw: st.DrawFn) -> Event:
    """A chat's usual event: a user's or the agent's text, one part or two."""
    role = draw(st.sampled_from(("user", "model")))
    texts = draw(st.lists(st.sampled_from(("hi", "ok", "weather in Paris")), min_size=1, max_size=2))
    content = types.Content(role=role, parts=[types.Part(text=t) for t in texts])
    author = "user" if role == "user" else AGENT
    return Event(author=author, invocation_id=draw(st.sampled_from(INVOCATIONS)), content=content)


#: mostly plain events (what lets the memo extend its answer, and hand copies out again)
chats = st.lists(st.one_of(plain_events(), plain_events(), plain_events(), events()), min_size=1, max_size=40)


@SETTINGS
@given(
    history=chats,
    cuts=cut_lists,
    does=st.lists(st.sampled_from(REQUEST_DOES), min_size=1, max_size=8),
    preserve=st.booleans(),
)
def test_what_a_request_does_to_its_copies_never_reaches_the_next_answer(
    history: list[Event], cuts: list[int], does: list[str], preserve: bool
) -> None:
    """Each request gets fresh copies: ADK's answer, no object a live request (or the session)
    holds, strongly or weakly, whatever a request changed in what it got (each answer compared
    with ADK's)."""
    memo = ContentsMemo(ORIGINAL["contents"])
    held: list[Any] = []
    weak: list[weakref.ref[Any]] = []
    session_objects = {id(e.content) for e in history} | {
        id(p) for e in history if e.content for p in e.content.parts or []
    }
    for i, seen in enumerate(grown(history, cuts)):
        got = memo(None, seen, AGENT, preserve_function_call_ids=preserve)
        assert dumped(got) == dumped(ORIGINAL["contents"](None, seen, AGENT, preserve_function_call_ids=preserve))
        handed = {id(c) for c in got} | {id(p) for c in got for p in c.parts or []}
        handed |= {id(p.__dict__) for c in got for p in c.parts or []}
        assert not handed & {id(x) for x in held}, "a held object handed out again"
        assert not handed & {id(w()) for w in weak if w() is not None}, "a weakly held object handed out again"
        assert not handed & session_objects, "a session event's own content or part handed out"
        held.clear()
        action = does[i % len(does)]
        with_parts = [c for c in got if c.parts]
        if action == "text" and with_parts:
            with_parts[-1].parts[0].text = "changed downstream"
        elif action == "role" and got:
            got[0].role = "changed"
        elif action == "append" and with_parts:
            with_parts[0].parts.append(types.Part(text="added downstream"))
        elif action == "fields" and with_parts:
            with_parts[0].parts[0].__pydantic_fields_set__.add("thought")
        elif action == "hold":
            held.append(got)
            held.extend(got)
        elif action == "hold one" and got:
            held.append(got[-1])
        elif action == "hold part" and with_parts:
            held.append(with_parts[0].parts[0])
        elif action == "hold dict" and with_parts:
            held.append(with_parts[0].parts[0].__dict__)
        elif action == "weak" and got:
            weak.append(weakref.ref(got[-1]))
        elif action == "weak part" and with_parts:
            weak.append(weakref.ref(with_parts[0].parts[0]))
        del got, with_parts


@SETTINGS
@given(history=histories, cuts=cut_lists)
def test_rewinds_and_task_scope_are_adks(history: list[Event], cuts: list[int]) -> None:
    rewinds, scope = RewindsMemo(ORIGINAL["rewinds"]), TaskScopeMemo(ORIGINAL["task_scope"])
    for seen in grown(history, cuts):
        got = rewinds(seen)
        want = ORIGINAL["rewinds"](seen)
        assert len(got) == len(want) and all(a is b for a, b in zip(got, want, strict=True))
        got.clear()  # a caller's list is its own
        session = SimpleNamespace(events=seen)
        assert scope(session) == ORIGINAL["task_scope"](session)


_SERVICE = InMemorySessionService()
_AGENT = LlmAgent(name=AGENT, model="gemini-2.5-flash")


def _context(events: list[Event], branch: str | None) -> InvocationContext:
    session = Session(id="s", app_name="app", user_id="u", events=events)
    return InvocationContext(session_service=_SERVICE, invocation_id="i4", agent=_AGENT, session=session, branch=branch)


@SETTINGS
@given(history=histories, cuts=cut_lists, branch=st.sampled_from((None, AGENT, "other")))
def test_branch_events_are_adks(history: list[Event], cuts: list[int], branch: str | None) -> None:
    memo = BranchEventsMemo(ORIGINAL["branch_events"])
    for seen in grown(history, cuts):
        ctx = _context(seen, branch)
        for flags in (
            {"current_branch": True},
            {"current_branch": True, "current_invocation": True},
            {"current_invocation": True},
        ):
            got = memo(ctx, **flags)
            want = ORIGINAL["branch_events"](ctx, **flags)
            assert len(got) == len(want) and all(a is b for a, b in zip(got, want, strict=True))


def test_a_long_history_grown_by_plain_turns_is_read_once() -> None:
    """The point of it: a turn adds two plain events, and the memo reads only those."""
    memo = ContentsMemo(ORIGINAL["contents"])
    history: list[Event] = []
    for i in range(300):
        history.append(
            Event(
                invocation_id=f"t{i}",
                author="user",
                content=types.Content(role="user", parts=[types.Part(text=f"q{i}")]),
            )
        )
        got = memo(None, list(history), AGENT)
        assert dumped(got) == dumped(ORIGINAL["contents"](None, list(history), AGENT))
        history.append(
            Event(
                invocation_id=f"t{i}",
                author=AGENT,
                content=types.Content(role="model", parts=[types.Part(text=f"a{i}")]),
            )
        )
    assert memo.stats.full == 1 and memo.stats.extended == 299
    assert memo.stats.events_read == 1 + 2 * 299  # the first list whole, then each call's two new events
