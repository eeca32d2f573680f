"""google-adk's model-request contents, built from the events a call adds, not from every event.

Before every model call ADK's ``contents`` request processor runs ``_get_contents`` over the
whole session: it applies the rewinds, filters each event, pairs function calls with their
responses and copies each event's content -- 20,000 events at 10,000 turns, about half of a turn's
CPU there. :class:`ContentsMemo` wraps that function (installed by :func:`install`, process-wide)
and answers exactly what it answers, built from a previous answer where that is provably the same:

* it keeps ADK's answer for a few event lists it was asked about (an LRU of :data:`ENTRIES`), with
  those events (the objects themselves: ADK's session events are not changed once appended, and
  the server's session cache hands the same objects to every turn);
* asked about ``events`` that begin with a kept list ``E`` (the very same objects) followed by a
  tail ``T`` of *plain* events -- no rewind, no compaction, no function call or response, no
  long-running tool id, no transcription, on the caller's branch (or on none) -- the answer is the
  kept answer for ``E`` followed by ADK's answer for ``T`` alone.

Why that is ADK's answer for ``E + T``: with no rewind in ``T``, ``_apply_rewinds(E + T)`` is
``_apply_rewinds(E) + T``; each event's filter depends on the event alone, except the tool-branch
test (which depends on the function-call ids, and ``T`` adds none and stays on the caller's branch)
and the other-agent test on function responses (``T`` has none); transcriptions are merged only
across adjacent transcription events (``T`` has none, nor has ``E``'s last event); the orphan and
rearrangement passes pair calls with responses (``T`` adds neither) and look at the last event the
filters kept, which has no function response in ``E + T`` nor in ``E`` (a list ADK answered whole is
kept only when its last event is plain and included, and only when it has no compaction event:
compaction rewrites the whole history; a kept list extended by a plain tail stays so). Anything
else -- a rewind, a tool call, a list that does not extend a kept one, a task-scoped or
single-turn agent -- is ADK's own computation, unchanged. The property test
``tests/server/test_contents_memo.py`` compares the two on random histories.

Each call hands out fresh copies of the contents, as ADK does (the request's processors and the
model may change a part's top-level fields); the kept answers are never handed out. A copy is
the object ADK's own ``_copy_content_for_request`` makes, made faster by
:mod:`rewindtui.server.agent.content_copy`. What stays proportional to the session: those copies,
and one identity comparison of the kept events.
"""

from __future__ import annotations

import contextlib
import importlib
import operator
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from google.adk.events.event import Event
from google.genai import types

from rewindtui.server.agent.content_copy import copier
from rewindtui.server.shared.internals import resolve

#: event lists (with their answers) kept, process-wide: a few sessions in conversation at once
ENTRIES = 4
_MODULE = "google.adk.flows.llm_flows.context._contents"
_REWINDS = "google.adk.events._rewind_events"
_CONTEXT = "google.adk.agents.invocation_context"
#: ADK modules that bind ``_apply_rewinds`` at import (the others import it when they run)
_REWINDS_USERS = (_MODULE, "google.adk.agents._agent_router", "google.adk.runners")


@dataclass
class _Kept:
    params: tuple[Any, ...]
    events: list[Event]
    contents: list[types.Content]  # ADK's answer for exactly ``events``; never handed out


@dataclass
class MemoStats:
    """How calls were answered (for tests): from a kept answer, or by ADK over every event."""

    extended: int = 0
    full: int = 0
    #: events ADK's own function was run over, in all
    events_read: int = 0


K = TypeVar("K")


class _Memo(Generic[K]):
    """What every memo here has: ADK's own function (``original``), at most ``entries`` kept
    answers (newest last), how calls were answered, and one lock (servers in one process -- the
    tests -- share the memos). A subclass answers in ``_call``."""

    _call: Callable[..., Any]

    def __init__(self, original: Callable[..., Any], entries: int = ENTRIES) -> None:
        self.original = original
        self.entries = entries
        self.stats = MemoStats()
        self._lock = threading.RLock()
        self._kept: list[K] = []

    def clear(self) -> None:
        with self._lock:
            self._kept.clear()

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        with self._lock:
            return self._call(*args, **kwargs)

    def _keep(self, kept: K) -> None:
        self._kept.append(kept)
        del self._kept[: -self.entries]


class ContentsMemo(_Memo[_Kept]):
    """A drop-in for ADK's ``_get_contents`` (same arguments, same answer); see the module."""

    def __init__(self, original: Callable[..., list[types.Content]], entries: int = ENTRIES) -> None:
        super().__init__(original, entries)
        self._copy: Callable[..., types.Content] = copier(resolve(_MODULE, "_copy_content_for_request"))
        self._include: Callable[..., bool] = resolve(_MODULE, "_should_include_event_in_context")
        self._other_reply: Callable[[str, Event], bool] = resolve(
            "google.adk.flows.llm_flows.context._fencing", "_is_other_agent_reply"
        )

    def _call(
        self,
        current_branch: str | None,
        events: list[Event],
        agent_name: str = "",
        *,
        preserve_function_call_ids: bool = False,
        isolation_scope: str | None = None,
        node_path: str | None = None,
        is_single_turn: bool = False,
        user_content: types.Content | None = None,
        include_thoughts_from_other_agents: bool = False,
    ) -> list[types.Content]:
        def adk(subject: list[Event]) -> list[types.Content]:
            self.stats.events_read += len(subject)
            return self.original(
                current_branch,
                subject,
                agent_name,
                preserve_function_call_ids=preserve_function_call_ids,
                isolation_scope=isolation_scope,
                node_path=node_path,
                is_single_turn=is_single_turn,
                user_content=user_content,
                include_thoughts_from_other_agents=include_thoughts_from_other_agents,
            )

        if isolation_scope is not None or is_single_turn or not events:
            self.stats.full += 1
            return adk(events)
        params = (current_branch, agent_name, preserve_function_call_ids, node_path, include_thoughts_from_other_agents)

        def plain_and_included(event: Event) -> bool:
            include_thoughts = include_thoughts_from_other_agents and self._other_reply(agent_name, event)
            return _plain(event, current_branch) and self._include(
                current_branch, event, None, node_path=node_path, include_thoughts=include_thoughts
            )

        strip = not preserve_function_call_ids
        kept = self._find(params, events)
        if kept is not None:
            tail = events[len(kept.events) :]
            if all(_plain(e, current_branch) for e in tail):
                self.stats.extended += 1
                answer = kept.contents + adk(tail) if tail else kept.contents
                self._kept.remove(kept)
                self._keep(_Kept(params, list(events), answer))
                return [self._copy(c, strip_client_function_call_ids=strip) for c in answer]
        self.stats.full += 1
        answer = adk(events)
        if plain_and_included(events[-1]) and not any(e.actions and e.actions.compaction for e in events):
            if kept is not None:
                self._kept.remove(kept)
            self._keep(
                _Kept(params, list(events), [self._copy(c, strip_client_function_call_ids=strip) for c in answer])
            )
        return answer

    def _find(self, params: tuple[Any, ...], events: Sequence[Event]) -> _Kept | None:
        """The longest kept list ``events`` begins with (the same objects), asked with ``params``."""
        best = None
        for kept in self._kept:
            n = len(kept.events)
            if kept.params != params or n > len(events) or (best is not None and n <= len(best.events)):
                continue
            if events[n - 1] is kept.events[-1] and all(map(operator.is_, events[:n], kept.events)):
                best = kept
        return best


def _plain(event: Event, branch: str | None) -> bool:
    """No rewind, compaction, function call or response, long-running id or transcription, and on
    ``branch`` (or on none): an event whose place in the request depends on itself alone."""
    actions = event.actions
    if actions is not None and (actions.rewind_before_invocation_id or actions.compaction):
        return False
    if event.long_running_tool_ids or event.input_transcription or event.output_transcription:
        return False
    if event.branch and event.branch != branch:
        return False
    parts = event.content.parts if event.content is not None else None
    return not parts or not any(p.function_call or p.function_response for p in parts)


class TaskScopeMemo(_Memo[list[Event]]):
    """A drop-in for ADK's ``runners._find_active_task_scope(session)``, which ``Runner`` runs on
    every new message: the paused task agent's scope, found by applying the rewinds to every event
    and walking them. It can only answer a scope an event carries (``isolation_scope``), so for
    a session whose events carry none the answer is None: this keeps a few event lists known to
    carry none (the same objects, as :class:`ContentsMemo`) and answers None for a list that
    extends one with events carrying none; anything else is ADK's own walk."""

    def _call(self, session: Any) -> Any:
        events: list[Event] = session.events
        best = None
        for kept in self._kept:
            n = len(kept)
            if n <= len(events) and (best is None or n > len(best)):
                if n and events[n - 1] is kept[-1] and all(map(operator.is_, events[:n], kept)):
                    best = kept
        if best is not None and not any(e.isolation_scope for e in events[len(best) :]):
            self.stats.extended += 1
            self._kept.remove(best)
            self._keep(list(events))
            return None
        self.stats.full += 1
        self.stats.events_read += len(events)
        answer = self.original(session)
        if events and answer is None and not any(e.isolation_scope for e in events):
            if best is not None:
                self._kept.remove(best)
            self._keep(list(events))
        return answer


class RewindsMemo(_Memo[tuple[list[Event], list[Event]]]):
    """A drop-in for ADK's ``_apply_rewinds(events)`` (the events a rewind has not annulled), which
    ADK runs over the whole session several times a turn (routing, the task-delegation scan, each
    node's context). Its backward walk gives ``_apply_rewinds(E + T) == _apply_rewinds(E) + T``
    when ``T`` holds no rewind event (a rewind in ``E`` that names an invocation first seen in
    ``T`` is ignored either way: its target is not before it). This keeps the answers for a few
    lists (the same objects) and extends one by such a tail; a fresh list each call."""

    def __init__(self, original: Callable[[list[Event]], list[Event]], entries: int = 2 * ENTRIES) -> None:
        super().__init__(original, entries)  # kept: (events, answer)

    def _call(self, events: list[Event]) -> list[Event]:
        best = None
        for kept in self._kept:
            n = len(kept[0])
            if n <= len(events) and (best is None or n > len(best[0])):
                if n and events[n - 1] is kept[0][-1] and all(map(operator.is_, events[:n], kept[0])):
                    best = kept
        if best is not None:
            tail = events[len(best[0]) :]
            if not any(e.actions is not None and e.actions.rewind_before_invocation_id for e in tail):
                self.stats.extended += 1
                answer = best[1] + tail
                self._kept.remove(best)
                self._keep((list(events), answer))
                return list(answer)
        self.stats.full += 1
        self.stats.events_read += len(events)
        answer = self.original(events)
        if events:
            if best is not None:
                self._kept.remove(best)
            self._keep((list(events), list(answer)))
        return answer


class BranchEventsMemo(_Memo["_KeptBranch"]):
    """A drop-in for ADK's ``InvocationContext._get_events`` when it is asked for the branch's
    events (``current_branch``, of every invocation or of the current one), which ADK's
    confirmation and auth request processors and its resume check ask before every model call,
    walking the whole session. Which events it keeps depends on each event alone (its invocation,
    its branch), except that a user's function response must answer a function call on the branch:
    so for a tail ``T`` with no function call or response the answer for ``E + T`` is the answer
    for ``E`` followed by the answer for ``T`` alone. Kept and extended as :class:`RewindsMemo`,
    with the answer's events by invocation (ADK filters by invocation, then by branch: both are
    tests of one event, so the current invocation's answer is the branch's answer's events of that
    invocation, in order). Asked for the current invocation's events alone (``Runner`` asks, for
    each new message, to stamp its branch), the answer is every event of that invocation: kept the
    same way, by invocation, for every event (no branch test, so any tail extends it). A
    single-turn agent on a node path, and every other question, is ADK's."""

    def __init__(self, original: Callable[..., list[Event]], entries: int = 2 * ENTRIES) -> None:
        super().__init__(original, entries)
        self._single_turn = resolve("google.adk.utils._agent_mode", "AgentMode").SINGLE_TURN

    def _call(self, ctx: Any, *, current_invocation: bool = False, current_branch: bool = False) -> list[Event]:
        def adk(subject: Any, *, current_invocation: bool = current_invocation) -> list[Event]:
            return self.original(subject, current_invocation=current_invocation, current_branch=current_branch)

        session = ctx.session
        if session is None or not (current_branch or current_invocation):
            return adk(ctx)
        if current_branch and getattr(ctx.agent, "mode", None) == self._single_turn and ctx.node_path:
            return adk(ctx)
        events: list[Event] = session.events
        key = ctx.branch if current_branch else _EVERY_BRANCH
        best = None
        for kept in self._kept:
            n = len(kept.events)
            if kept.branch == key and n <= len(events) and (best is None or n > len(best.events)):
                if n and events[n - 1] is kept.events[-1] and all(map(operator.is_, events[:n], kept.events)):
                    best = kept
        found = None
        if best is not None:
            tail = events[len(best.events) :]
            if not current_branch or not any(_calls_or_responds(e) for e in tail):
                self.stats.extended += 1
                stand_in = ctx.model_copy(update={"session": session.model_copy(update={"events": tail})})
                added = adk(stand_in, current_invocation=False) if tail else []
                best.extend(events, added)
                found = best
        if found is None:
            self.stats.full += 1
            self.stats.events_read += len(events)
            if best is not None:
                self._kept.remove(best)
            if not events:
                return adk(ctx)
            found = _KeptBranch(key, [], [], {})
            found.extend(events, adk(ctx, current_invocation=False))
        if found in self._kept:
            self._kept.remove(found)
        self._keep(found)
        if current_invocation:
            return list(found.by_invocation.get(ctx.invocation_id, ()))
        return list(found.answer)


#: the key of the answers kept for the current invocation's events on every branch
_EVERY_BRANCH = object()


@dataclass
class _KeptBranch:
    branch: object  # a branch (str or None), or _EVERY_BRANCH
    events: list[Event]
    answer: list[Event]
    by_invocation: dict[str | None, list[Event]]

    def extend(self, events: list[Event], added: list[Event]) -> None:
        self.events = list(events)
        self.answer += added
        for event in added:
            self.by_invocation.setdefault(event.invocation_id, []).append(event)


def _calls_or_responds(event: Event) -> bool:
    parts = event.content.parts if event.content is not None else None
    return bool(parts) and any(p.function_call or p.function_response for p in parts or ())


def no_task_delegations(original: Callable[..., list[Any]]) -> Callable[..., list[Any]]:
    """ADK's ``_find_unresolved_task_delegations(session, owner, tools_dict, ...)`` answers the
    delegating calls of ``tools_dict``'s task-agent tools that have no response: none when the agent
    has no such tool, without walking the session (run once a turn). Else ADK's own walk."""
    task_tool: type | None = resolve("google.adk.tools.agent_tool", "_TaskAgentTool")

    def find(session: Any, owner: str, tools_dict: Any, isolation_scope: str | None = None) -> list[Any]:
        if task_tool is not None and not any(isinstance(t, task_tool) for t in tools_dict.values()):
            return []
        return original(session, owner, tools_dict, isolation_scope=isolation_scope)

    find.__wrapped__ = original  # type: ignore[attr-defined]
    return find


@dataclass
class Installed:
    contents: ContentsMemo | None
    task_scope: TaskScopeMemo | None
    rewinds: RewindsMemo | None
    branch_events: BranchEventsMemo | None


_installed: Installed | None = None


def install() -> Installed:
    """Put :class:`ContentsMemo` and :class:`TaskScopeMemo` in place of ADK's functions (once; the
    same after); a piece this ADK lacks (or that something else already wrapped) is left alone."""
    global _installed
    if _installed is None:
        _installed = Installed(
            contents=_wrap(_MODULE, "_get_contents", ContentsMemo),
            task_scope=_wrap("google.adk.runners", "_find_active_task_scope", TaskScopeMemo),
            rewinds=_wrap(_REWINDS, "_apply_rewinds", RewindsMemo),
            branch_events=_wrap_method(_CONTEXT, "InvocationContext", "_get_events", BranchEventsMemo),
        )
        _wrap("google.adk.workflow._llm_agent_wrapper", "_find_unresolved_task_delegations", no_task_delegations)
        if _installed.rewinds is not None:  # the modules that imported it by name at their import
            for module in _REWINDS_USERS:
                with contextlib.suppress(ImportError):
                    imported = importlib.import_module(module)
                    if getattr(imported, "_apply_rewinds", None) is _installed.rewinds.original:
                        setattr(imported, "_apply_rewinds", _installed.rewinds)  # noqa: B010
    return _installed


def _wrap_method(module: str, cls_name: str, name: str, memo: Callable[[Any], Any]) -> Any:
    try:
        cls = resolve(module, cls_name)
        original = getattr(cls, name)
        wrapper = memo(original)
    except (AttributeError, ImportError):
        return None
    if getattr(original, "__module__", None) != module:
        return None

    def method(self: Any, *, current_invocation: bool = False, current_branch: bool = False) -> list[Event]:
        return wrapper(self, current_invocation=current_invocation, current_branch=current_branch)

    setattr(cls, name, method)
    return wrapper


def _wrap(module: str, name: str, memo: Callable[[Any], Any]) -> Any:
    try:
        original = resolve(module, name)
        wrapper = memo(original)
    except (AttributeError, ImportError):
        return None
    if getattr(original, "__module__", None) != module:  # not ADK's own function any more: leave it
        return None
    setattr(importlib.import_module(module), name, wrapper)
    return wrapper
