"""The conversation as pure state: what the user sees, built from tasks and stream events.

One source of truth for the transcript. It merges a session's tasks (``extract_messages_from_tasks``),
applies stream events (replace vs append, live partial text, tool call/result pairing), and does
the optimistic side of rewind (truncate, and roll back to the identical view). No I/O, no Textual.

Every mutation returns a :class:`Change` so a view can redraw only what changed: ``first`` is the
lowest index whose item identity changed (None if the list's structure is unchanged) and
``updated`` lists items whose content changed in place (their ``rev`` went up).
"""

from __future__ import annotations

import itertools
import json
from bisect import bisect_right
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from enum import Enum
from types import MappingProxyType
from typing import Any

from rewindtui.a2a import contract, raw
from rewindtui.a2a import metadata as meta
from rewindtui.a2a.classify import EventKind, StreamEvent
from rewindtui.a2a.dialect import TURN_ENDING_STATES, norm_role, norm_state
from rewindtui.a2a.outgoing import DECISION_KEY
from rewindtui.a2a.parts import tidy_json
from rewindtui.rewound import Mark, rewound_groups

#: Metadata flag on a Task that carries the session's effective history (see ``contract``).
EFFECTIVE_HISTORY_KEY = contract.EFFECTIVE_HISTORY_KEY
_UNKNOWN_EXCERPT = 2000
_ARTIFACT_LOOKBACK = 64

#: Turn states only the client sets: the stream stopped without a final status / the user stopped it.
INTERRUPTED = "interrupted"
CANCELED = "canceled"
CLIENT_STATES = frozenset({INTERRUPTED, "idle"})

_keys = itertools.count(1)
_FAST_ROLES = {"user": "user", "agent": "agent", "ROLE_USER": "user", "ROLE_AGENT": "agent"}


def _synthetic_key(prefix: str) -> str:
    return f"{prefix}:{next(_keys)}"


class ItemKind(str, Enum):
    MESSAGE = "message"
    ARTIFACT = "artifact"
    ERROR = "error"
    UNKNOWN = "unknown"  # an event we could not classify, shown as raw JSON


@dataclass(eq=False, slots=True)
class ToolCall:
    call_id: str | None
    name: str
    args: Any = None
    result: Any = None
    has_result: bool = False


_NO_TOOLS: tuple[ToolCall, ...] = ()
#: What a message of text parts only keeps of its wire dict once its text is read: nothing more is
#: read from it (no tools, no other parts), except a state-changes note in its metadata.
_TEXT_ONLY: Any = MappingProxyType({})


def _compact(m: dict[str, Any]) -> Any:
    """A text-only message's wire dict as its item keeps it (see ``_TEXT_ONLY``): most of a long
    session's memory is these dicts, and a long session is thousands of them."""
    md = m.get("metadata")
    changed = md.get(contract.STATE_CHANGED_KEY) if type(md) is dict else None
    return {"metadata": {contract.STATE_CHANGED_KEY: changed}} if changed is not None else _TEXT_ONLY


def _is_texty(p: Any) -> bool:
    return isinstance(p, dict) and (p.get("kind") == "text" or ("kind" not in p and "text" in p))


def _plain_text(m: Any) -> str | None:
    """The text of a message whose parts are all text parts (the common case, read here at no
    extra walk while loading), or None when it has another part."""
    parts = m.get("parts") if type(m) is dict else None
    if type(parts) is not list:
        return ""
    pieces = []
    for p in parts:
        if type(p) is not dict:
            return None
        kind = p.get("kind")
        if kind != "text" and (kind is not None or "text" not in p):
            return None
        text = p.get("text")
        if type(text) is str:
            pieces.append(text)
    return pieces[0] if len(pieces) == 1 else "".join(pieces)


def _tool_parts(m: Any) -> Iterable[tuple[str, dict[str, Any]]]:
    """(``function_call`` | ``function_response``, data) for each tool part of a message; whole
    numbers that a protobuf ``Struct`` turned into floats (``1.0``) read as the integers they were."""
    for p in raw.parts(m):
        if _is_texty(p):
            continue
        kind = meta.tool_type(p)
        if kind is not None and isinstance(p.get("data"), dict):
            yield kind, tidy_json(p["data"])


class Item:
    """One entry of the transcript: a message (with any tool results folded into it), an
    artifact, an error, or an unrecognised event. ``raw`` is the wire dict it came from."""

    __slots__ = (
        "kind",
        "key",
        "role",
        "author",
        "task_id",
        "invocation_id",
        "raw",
        "message_ids",
        "absorbed",
        "streaming",
        "rev",
        "rewound",
        "stopped",
        "_text",
        "_tools",
    )

    def __init__(
        self,
        kind: ItemKind,
        key: str,
        *,
        role: str = "agent",
        raw_dict: Any = None,
        task_id: str | None = None,
        invocation_id: str | None = None,
        author: str | None = None,
        text: str | None = None,
    ) -> None:
        self.kind = kind
        self.key = key
        self.role = role
        self.author = author
        self.task_id = task_id
        self.invocation_id = invocation_id
        self.raw = raw_dict
        self.message_ids: list[str] = []
        #: tool-result messages folded into this one (a tuple: most items have none, and share one)
        self.absorbed: tuple[Any, ...] = ()
        self.streaming = False
        self.rev = 0
        #: set on an item shown from a rewound turn: not part of the conversation (see
        #: :meth:`Conversation.show_rewound`)
        self.rewound: Mark | None = None
        #: the part of a reply that came before the user stopped the turn (it ends there)
        self.stopped = False
        self._text = text
        self._tools: Sequence[ToolCall] | None = None

    @classmethod
    def from_message(
        cls,
        m: dict[str, Any],
        task_meta: Any = None,
        task_id: str | None = None,
        mid: str | None = None,
        text: str | None = None,
    ) -> Item:
        """``text``: the message's text when the caller has read it already (else read lazily)."""
        # the hot path of opening a session: plain dict reads, no helper chains
        if mid is None:
            mid = m.get("messageId") or m.get("message_id")
            if not isinstance(mid, str):
                mid = None
        md = m.get("metadata")
        invocation = author = None
        stopped = False
        if type(md) is dict:
            invocation = md.get("adk_invocation_id") or md.get("kagent_invocation_id")
            author = md.get("adk_author") or md.get("kagent_author")
            stopped = md.get(contract.STOPPED_KEY) is True
        if not isinstance(invocation, str) or not invocation:
            invocation = meta.invocation_id(None, task_meta)
        role = m.get("role")
        tid = m.get("taskId") or m.get("task_id")
        item = cls(
            ItemKind.MESSAGE,
            mid or _synthetic_key("msg"),
            role=(_FAST_ROLES.get(role) if isinstance(role, str) else None) or norm_role(role),
            raw_dict=m,
            task_id=tid if isinstance(tid, str) else task_id,
            invocation_id=invocation,
            author=author if isinstance(author, str) and author else None,
            text=text,
        )
        if mid:
            item.message_ids.append(mid)
        if stopped:
            item.stopped = True
        return item

    def __repr__(self) -> str:
        return f"Item({self.kind.value}, {self.role}, {self.key!r}, inv={self.invocation_id!r}, text={self.text[:40]!r})"

    # -- content -------------------------------------------------------------------------
    @property
    def text(self) -> str:
        if self._text is None:
            self._text = raw.text_of(self.raw) if self.raw is not None else ""
        return self._text

    @property
    def tools(self) -> Sequence[ToolCall]:
        """Tool calls in this message, each paired with its result when one arrived (read once,
        again after a result is folded in; a message with none shares one empty tuple)."""
        if self._tools is None:
            calls: list[ToolCall] = []
            by_id: dict[str, ToolCall] = {}
            for m in [self.raw, *self.absorbed]:
                for kind, data in _tool_parts(m):
                    call_id = data.get("id") if isinstance(data.get("id"), str) else None
                    name = str(data.get("name") or "?")
                    if kind == meta.FUNCTION_CALL:
                        call = ToolCall(call_id, name, data.get("args"))
                        calls.append(call)
                        if call_id:
                            by_id[call_id] = call
                    else:
                        found = by_id.get(call_id) if call_id else None
                        if found is None:
                            found = ToolCall(call_id, name)
                            calls.append(found)
                        found.result = data.get("response")
                        found.has_result = True
            self._tools = calls or _NO_TOOLS
        return self._tools

    @property
    def other_parts(self) -> list[Any]:
        """Parts that are neither text nor tool calls (files, other data, parts we don't know)."""
        out = []
        for p in raw.parts(self.raw):
            if _is_texty(p) or meta.tool_type(p) is not None:
                continue
            out.append(p)
        return out

    @property
    def rewind_target(self) -> str | None:
        """The invocation a "Rewind to here" on this item rewinds before (None: not rewindable,
        or a rewound item, which is not part of the conversation)."""
        return meta.rewind_target(self.invocation_id) if self.rewound is None and not self.is_answer else None

    @property
    def is_answer(self) -> bool:
        """A user's answer to a question (a message with a ``decision_type`` data part, as
        ``Chat.confirm`` sends): part of the turn that asked, not a turn of its own."""
        if self.role != "user" or self.kind is not ItemKind.MESSAGE:
            return False
        for p in raw.parts(self.raw):
            data = p.get("data") if isinstance(p, dict) else None
            if isinstance(data, dict) and DECISION_KEY in data:
                return True
        return False

    def call_ids(self) -> list[str]:
        return [d["id"] for k, d in _tool_parts(self.raw) if k == meta.FUNCTION_CALL and isinstance(d.get("id"), str)]

    def _touch(self) -> None:
        self.rev += 1
        self._tools = None

    def _set_text(self, text: str) -> None:
        self._text = text
        self.rev += 1


@dataclass(frozen=True)
class Confirmation:
    """A tool call waiting for the user's approval: approve or reject it with ``Chat.confirm``."""

    call_id: str | None
    tool: str  # the tool the agent wants to run
    args: Any
    hint: str
    task_id: str | None

    @classmethod
    def from_call(cls, call: ToolCall, task_id: str | None) -> Confirmation:
        args = call.args if isinstance(call.args, dict) else {}
        original = raw.get(args, "originalFunctionCall", "original_function_call")
        original = original if isinstance(original, dict) else {}
        confirmation = raw.get(args, "toolConfirmation", "tool_confirmation")
        hint = raw.get(confirmation, "hint") if isinstance(confirmation, dict) else None
        return cls(
            call_id=call.call_id,
            tool=str(original.get("name") or "a tool"),
            args=original.get("args"),
            hint=hint if isinstance(hint, str) else "",
            task_id=task_id,
        )


@dataclass
class Change:
    first: int | None = None  # lowest index whose item identity changed
    updated: list[Item] = field(default_factory=list)
    turn_ended: bool = False
    #: items put in front of the view (older turns loaded): what was item 0 is now item
    #: ``prepended`` (with ``first`` = 0), so a view can keep what it shows where it is
    prepended: int = 0

    @property
    def empty(self) -> bool:
        return self.first is None and not self.updated and not self.turn_ended

    def merge(self, other: Change) -> Change:
        if other.first is not None:
            self.first = other.first if self.first is None else min(self.first, other.first)
        self.updated.extend(other.updated)
        self.turn_ended = self.turn_ended or other.turn_ended
        self.prepended += other.prepended
        return self


@dataclass(frozen=True)
class RewindToken:
    """What an optimistic truncation needs to be undone exactly."""

    invocation_id: str
    index: int
    _state: tuple


def _pairable_response(m: Any, calls: dict[str, Item]) -> Item | None:
    """The item holding the calls this message answers, if the message is only tool responses."""
    target: Item | None = None
    found = False
    for p in raw.parts(m):
        if meta.tool_type(p) != meta.FUNCTION_RESPONSE or not isinstance(p.get("data"), dict):
            return None
        holder = calls.get(p["data"].get("id"))
        if holder is None or (target is not None and holder is not target):
            return None
        target, found = holder, True
    return target if found else None


def _response_ids(m: Any) -> list[str]:
    """The call ids a message of tool responses only answers ([] for any other message)."""
    ids = []
    for p in raw.parts(m):
        if meta.tool_type(p) != meta.FUNCTION_RESPONSE or not isinstance(p.get("data"), dict):
            return []
        call_id = p["data"].get("id")
        if isinstance(call_id, str):
            ids.append(call_id)
    return ids


_OUTCOME_WORDS = {"failed": "This turn failed", "canceled": "This turn was canceled", "rejected": "This turn was rejected"}


def _task_messages(task: dict[str, Any]) -> tuple[list[Any], list[Any], str | None]:
    """A Task's history messages; its status message when the history does not hold it (a2a-sdk
    keeps the latest status message only there; a failed or canceled turn's reason is one); and a
    line for the turn's outcome when it failed, was canceled or rejected (for a failed status
    message with no ids, kagent's, the failure's own text instead of that message), as a stream
    shows them. Shown in that order around the task's artifacts: history, artifacts, status
    message, outcome."""
    history = raw.history(task)  # entries that are not messages are left out when admitted
    status = task.get("status")
    if type(status) is not dict:
        return history, [], None
    state = norm_state(status.get("state"))
    words = _OUTCOME_WORDS.get(state)
    outcome = f"{words}." if words else None
    message = status.get("message")
    if type(message) is not dict or not raw.is_message(message):
        return history, [], outcome
    if state == "failed" and not (raw.task_id(message) or raw.context_id(message) or raw.metadata(message)):
        return history, [], raw.text_of(message) or "The task failed."
    mid = raw.message_id(message)
    if mid is None or any(raw.message_id(m) == mid for m in history):
        return history, [], outcome
    return history, [message], outcome


def extract_messages_from_tasks(tasks: Iterable[Any]) -> list[Item]:
    """Flatten the tasks' histories in task order into transcript items.

    Messages only; deduplicated by messageId (first position kept); a user message without an
    invocation id takes its task's ``metadata`` invocation id; a message holding only tool
    results is folded into the item holding the matching calls.
    """
    conv = Conversation()
    conv._extend_from_tasks(tasks)
    return conv.items


class Conversation:
    """The transcript of one session and the state of its current turn."""

    def __init__(self, session_id: str | None = None) -> None:
        self.session_id = session_id
        self.items: list[Item] = []
        self._by_id: dict[str, Item] = {}
        self._calls: dict[str, Item] = {}
        self._artifacts: dict[tuple[str | None, str], Item] = {}
        self._live: Item | None = None
        self._pending_user: Item | None = None
        self.turn_state: str = "idle"
        self.current_task_id: str | None = None
        self.input_task_id: str | None = None  # a task waiting for input: the next send resumes it
        self.running_task_id: str | None = None  # the last loaded task, still running on the server
        #: a stopped turn's reply as it was shown, where the server kept less of it (by task id)
        self.stopped_shown: dict[str, str] = {}
        #: task id -> the first time this view saw for it (its status timestamp), for turn times
        self.task_times: dict[str, str] = {}
        #: the view starts at a page of the session's newest tasks: the server's token for the
        #: older ones, not loaded yet (None: the view holds the whole session; see :meth:`prepend_tasks`)
        self.older_token: str | None = None
        #: tool responses shown on their own (their call was not loaded): call id -> the item
        self._unpaired: dict[str, Item] = {}
        #: one copy of each author name (a handful: "user", the agent's, its sub-agents')
        self._names: dict[str, str] = {}

    # -- queries ---------------------------------------------------------------------------
    def __len__(self) -> int:
        return len(self.items)

    @property
    def busy(self) -> bool:
        return self.turn_state in ("submitted", "working")

    def pending_confirmation(self) -> Confirmation | None:
        """The question of a turn waiting for the user's approval (kagent's
        ``adk_request_confirmation`` call), if the turn ended ``input-required`` with one."""
        if self.turn_state != "input-required":
            return None
        for item in reversed(self.items):
            if item.rewound is not None:
                continue
            if item.role == "user" and item.kind is ItemKind.MESSAGE:
                break
            if item.raw is None or item.kind is not ItemKind.MESSAGE:
                continue
            for call in reversed(item.tools):
                if call.name == meta.REQUEST_CONFIRMATION and not call.has_result:
                    return Confirmation.from_call(call, self.input_task_id)
        return None

    def message_ids(self) -> set[str]:
        return set(self._by_id)

    def index_of_invocation(self, invocation_id: str) -> int | None:
        for i, item in enumerate(self.items):
            if item.invocation_id == invocation_id and item.rewound is None:
                return i
        return None

    def turn_invocations(self) -> list[str]:
        """Rewindable invocation ids in order of first appearance (one per turn)."""
        seen: dict[str, None] = {}
        for item in self.items:
            target = item.rewind_target
            if target is not None and target not in seen:
                seen[target] = None
        return list(seen)

    def has_turns(self) -> bool:
        """Whether any item belongs to a turn that can be rewound to: :meth:`turn_invocations`
        without walking the whole session (asked on every streamed delta)."""
        return any(item.rewind_target is not None for item in self.items)

    def last_turn_invocation(self) -> str | None:
        for item in reversed(self.items):
            if item.rewind_target is not None:
                return item.rewind_target
        return None

    def user_text_of(self, invocation_id: str) -> str:
        """The text of the user message that opened an invocation ('' if none is shown)."""
        for item in self.items:
            if item.invocation_id == invocation_id and item.role == "user" and item.kind is ItemKind.MESSAGE:
                if item.rewound is None:
                    return item.text
        return ""

    # -- loading ---------------------------------------------------------------------------
    def load_tasks(self, tasks: Iterable[Any], older_token: str | None = None) -> Change:
        """Replace the whole view with a session's tasks (as from ``GET /sessions/{id}/tasks``).
        ``older_token``: these are only the newest of them; the server's token for the page of
        older ones (:meth:`prepend_tasks` adds them in front)."""
        tasks = [t for t in tasks if isinstance(t, dict)]
        self._reset()
        self.older_token = older_token  # a rewind's Task among them resets it: nothing older counts
        self._extend_from_tasks(tasks)
        self.turn_state = "idle"
        self.input_task_id = None
        self.running_task_id = None
        if tasks:
            newest = tasks[-1].get("id")
            if isinstance(newest, str):
                self.current_task_id = newest
            # the last turn's state: a rewind's (redo's) own Task is not a turn -- after an undo,
            # the question of the turn it brought back is waiting again
            turns = [t for t in tasks if raw.metadata(t).get(EFFECTIVE_HISTORY_KEY) is not True]
            last = turns[-1] if turns else tasks[-1]
            status = last.get("status") if isinstance(last.get("status"), dict) else {}
            state = norm_state(status.get("state"))
            last_id = last.get("id") if isinstance(last.get("id"), str) else None
            if state in ("input-required", "auth-required") and last_id is not None:
                # a session whose last task waits for the user: the next send resumes that task
                self.turn_state = state
                self.input_task_id = last_id
            elif state in ("submitted", "working") and last_id is not None:
                # still running on the server: a client can reattach to it
                self.turn_state = "working"
                self.running_task_id = last_id
        return Change(first=0, turn_ended=True)

    def _reset(self) -> None:
        self.items = []
        self._by_id = {}
        self._calls = {}
        self._artifacts = {}
        self._unpaired = {}
        self._live = None
        self.older_token = None

    def prepend_tasks(self, tasks: Iterable[Any], older_token: str | None) -> Change:
        """Put a page of older tasks (oldest first, as the server pages them) in front of the
        view, as if the whole session had been loaded at once: a tool response shown on its own
        is folded into its call when the call comes in an older page, and a message repeated in
        both keeps its older place. ``older_token``: the token for the tasks older still (None:
        this was the oldest page). A rewind's Task in the page makes everything before it moot."""
        older = Conversation(self.session_id)
        older.older_token = older_token
        older._names = self._names
        older._extend_from_tasks(tasks)
        gone: set[int] = set()  # newer items that the older page takes in
        for call_id, item in list(self._unpaired.items()):
            holder = older._calls.get(call_id)
            if holder is not None and id(item) not in gone and _pairable_response(item.raw, older._calls) is holder:
                holder.absorbed += (item.raw,)
                holder.message_ids.extend(item.message_ids)
                holder._touch()
                for mid in item.message_ids:
                    self._by_id[mid] = holder
                gone.add(id(item))
        if gone:
            self._unpaired = {k: v for k, v in self._unpaired.items() if id(v) not in gone}
        repeated = {id(self._by_id[mid]) for mid in older._by_id if mid in self._by_id}
        if repeated:
            self._by_id = {k: v for k, v in self._by_id.items() if id(v) not in repeated}
            gone |= repeated
        newer = [it for it in self.items if id(it) not in gone] if gone else self.items
        dropped = len(self.items) - len(newer)
        self.items = older.items + newer
        self._by_id = {**older._by_id, **self._by_id}
        self._calls = {**older._calls, **self._calls}
        self._artifacts = {**older._artifacts, **self._artifacts}
        self._unpaired = {**older._unpaired, **self._unpaired}
        self.task_times = {**older.task_times, **self.task_times}
        self.older_token = older.older_token
        if dropped:
            return Change(first=0)  # not a plain prepend: the view re-measures everything
        return Change(first=0, prepended=len(older.items))

    def _extend_from_tasks(self, tasks: Iterable[Any]) -> None:
        for task in tasks:
            if not isinstance(task, dict):
                continue
            task_id = task.get("id")
            task_meta = raw.metadata(task)
            if task_meta.get(EFFECTIVE_HISTORY_KEY) is True:
                # a rewind's (or fork's) Task: its history is the whole conversation so far
                self._reset()
            self._note_time(task_id, task.get("status"))
            tid = task_id if isinstance(task_id, str) else None
            messages, last, failure = _task_messages(task)
            self._share_names(self._extend(messages, task_meta, tid), tid)
            artifacts = task.get("artifacts")
            if type(artifacts) is list:
                for artifact in artifacts:
                    if not self._repeats_last(artifact, tid):
                        self._add_artifact(artifact, tid, None, append=False)
            if last:
                self._extend(last, task_meta, tid)
            if failure is not None:
                self.items.append(Item(ItemKind.ERROR, _synthetic_key("error"), role="system", task_id=tid, text=failure))

    def _share_names(self, items: list[Item], task_id: str | None) -> None:
        """The items of one task share one copy of the ids and names they have in common (parsed
        JSON makes a string per occurrence; a long session holds tens of thousands of them)."""
        invocation = None
        for item in items:
            if item.task_id == task_id:
                item.task_id = task_id
            if item.invocation_id is not None:
                if item.invocation_id == invocation:
                    item.invocation_id = invocation
                invocation = item.invocation_id
            if item.author is not None:
                item.author = self._names.setdefault(item.author, item.author)

    def _repeats_last(self, artifact: Any, task_id: str | None) -> bool:
        """The common case on load, checked cheaply: a one-text-part artifact repeating the task's
        last agent message (kagent's final answer)."""
        parts = artifact.get("parts") if type(artifact) is dict else None
        if type(parts) is not list or len(parts) != 1 or type(parts[0]) is not dict:
            return False
        text = parts[0].get("text")
        if type(text) is not str or parts[0].get("kind", "text") != "text" or not self.items:
            return False
        last = self.items[-1]
        return last.task_id == task_id and last.role != "user" and last.kind is ItemKind.MESSAGE and last.text == text

    def _extend(self, messages: Iterable[Any], task_meta: Any = None, task_id: str | None = None) -> list[Item]:
        added = []
        for m in messages:
            item = self._admit(m, task_meta, task_id)
            if item is not None:
                self.items.append(item)
                added.append(item)
        return added

    def _admit(self, m: Any, task_meta: Any = None, task_id: str | None = None) -> Item | None:
        """A new item for message ``m``, or None if it is a duplicate or was folded into a call."""
        if type(m) is not dict:
            return None
        kind = m.get("kind")
        if kind is not None and kind != "message":
            return None
        mid = m.get("messageId") or m.get("message_id")
        if type(mid) is not str:
            mid = None
        elif mid in self._by_id:
            return None
        text = _plain_text(m)
        text_only = text is not None
        if not text_only and self._calls:
            holder = _pairable_response(m, self._calls)
            if holder is not None:
                holder.absorbed += (m,)
                holder._touch()
                if mid:
                    holder.message_ids.append(mid)
                    self._by_id[mid] = holder
                return None
        item = Item.from_message(m, task_meta, task_id, mid, text)
        if mid:
            self._by_id[mid] = item
        if not text_only:
            self._register_calls(item)
            for call_id in _response_ids(m):
                self._unpaired[call_id] = item
        else:
            item._tools = _NO_TOOLS  # known already: nothing to look for later
            item.raw = _compact(m)
        return item

    def _register_calls(self, item: Item) -> None:
        for call_id in item.call_ids():
            self._calls[call_id] = item

    def _note_time(self, task_id: Any, status: Any) -> None:
        if type(task_id) is str and type(status) is dict and task_id not in self.task_times:
            stamp = status.get("timestamp")
            if type(stamp) is str and stamp:
                self.task_times[task_id] = stamp

    # -- rewound turns -----------------------------------------------------------------------
    @property
    def shows_rewound(self) -> bool:
        """Rewound items are shown among the conversation's."""
        return any(item.rewound is not None for item in self.items)

    def show_rewound(self, tasks: Iterable[Any]) -> Change:
        """Show the rewound turns of ``tasks`` (the session's tasks, rewound ones included, oldest
        first) in place: each after the items of the tasks before it, marked (``Item.rewound``) and
        kept out of the conversation -- not rewind targets, not in its indexes; the conversation's
        own items are untouched (replaces rewound items shown before)."""
        tasks = [t for t in tasks if isinstance(t, dict)]
        change = self.hide_rewound()
        order = {t.get("id"): i for i, t in enumerate(tasks)}
        positions: list[int] = []
        last = -1
        for item in self.items:
            last = max(last, order.get(item.task_id, last))
            positions.append(last)
        inserts: list[tuple[int, list[Item]]] = []
        for group in rewound_groups(tasks):
            items = [it for it in extract_messages_from_tasks([group.task]) if not set(it.message_ids) & set(self._by_id)]
            for item in items:
                item.rewound = group.mark
            if items:
                inserts.append((bisect_right(positions, group.position), items))
                self._note_time(group.task.get("id"), group.task.get("status"))
        for at, items in reversed(inserts):
            self.items[at:at] = items
        if inserts:
            change.merge(Change(first=inserts[0][0]))
        return change

    def hide_rewound(self) -> Change:
        """Take the rewound items out of the view."""
        first = next((i for i, item in enumerate(self.items) if item.rewound is not None), None)
        if first is None:
            return Change()
        self.items = [item for item in self.items if item.rewound is None]
        return Change(first=first)

    # -- user actions ----------------------------------------------------------------------
    def add_user_message(self, message: dict[str, Any]) -> Change:
        """Show the message the user just sent (its messageId dedupes the server's echo)."""
        item = self._admit(message)
        if item is None:
            return Change()
        self.items.append(item)
        self._pending_user = item
        self.turn_state = "submitted"
        self.running_task_id = None
        return Change(first=len(self.items) - 1)

    def add_error(self, text: str) -> Change:
        """An error shown where it happened (e.g. the connection dropped)."""
        return self._append(Item(ItemKind.ERROR, _synthetic_key("error"), role="system", text=text))

    def end_turn(self, state: str) -> Change:
        """End the turn from the client side with ``state`` (``interrupted``: the stream stopped
        without a final status; ``canceled``: the user stopped it), unless it already ended."""
        if self.turn_state in TURN_ENDING_STATES or self.turn_state in CLIENT_STATES:
            return Change()
        return self._end_turn(state)

    def shown_reply(self, task_id: str | None) -> tuple[str | None, str]:
        """(author, text) of the agent's reply shown for ``task_id`` (what a stop must keep)."""
        author, texts = None, []
        for item in self.items:
            if item.task_id == task_id and item.role == "agent" and item.kind is ItemKind.MESSAGE and item.text:
                author = author or item.author
                texts.append(item.text)
        return author, "\n".join(texts)

    def remove_message(self, message_id: str) -> Change:
        """Take a message out of the view (one the server turned out not to have)."""
        item = self._by_id.get(message_id)
        if item is None or item not in self.items:
            return Change()
        index = self.items.index(item)
        del self.items[index]
        self._forget([item])
        if self._pending_user is item:
            self._pending_user = None
        return Change(first=index)

    def checkpoint(self) -> RewindToken:
        """The view as it is now, to :meth:`restore` exactly (e.g. after a refused send)."""
        return RewindToken("", len(self.items), self._capture())

    def restore(self, token: RewindToken) -> Change:
        """Put the view back exactly as it was at ``token``."""
        first = min(token.index, len(self.items))
        for i, (a, b) in enumerate(zip(self.items, token._state[0], strict=False)):
            if a is not b:
                first = min(first, i)
                break
        self._restore(token._state)
        return Change(first=first, turn_ended=True)

    # -- optimistic rewind -----------------------------------------------------------------
    def truncate_before(self, invocation_id: str) -> tuple[RewindToken, Change]:
        """Cut the view before the first item of ``invocation_id``. KeyError if none carries it."""
        index = self.index_of_invocation(invocation_id)
        if index is None:
            raise KeyError(invocation_id)
        token = RewindToken(invocation_id, index, self._capture())
        removed = self.items[index:]
        self.items = self.items[:index]
        self._forget(removed)
        self._pending_user = None
        return token, Change(first=index)

    def _forget(self, removed: list[Item]) -> None:
        """Drop the indexes' references to items that left the view."""
        gone = {id(item) for item in removed}
        for item in removed:
            for mid in item.message_ids:
                if self._by_id.get(mid) is item:
                    del self._by_id[mid]
            for call_id in item.call_ids() if item.raw is not None else ():
                if self._calls.get(call_id) is item:
                    del self._calls[call_id]
        if self._artifacts:
            self._artifacts = {k: v for k, v in self._artifacts.items() if id(v) not in gone}
        if self._unpaired:
            self._unpaired = {k: v for k, v in self._unpaired.items() if id(v) not in gone}
        if self._live is not None and id(self._live) in gone:
            self._live = None

    def rollback(self, token: RewindToken) -> Change:
        """Restore the view exactly as it was before ``truncate_before``."""
        self._restore(token._state)
        return Change(first=min(token.index, len(self.items)))

    def _capture(self) -> tuple:
        return (
            list(self.items),
            dict(self._by_id),
            dict(self._calls),
            dict(self._artifacts),
            self._live,
            self._pending_user,
            self.turn_state,
            self.current_task_id,
            self.input_task_id,
            self.running_task_id,
            self.older_token,
            dict(self._unpaired),
        )

    def _restore(self, state: tuple) -> None:
        (
            items,
            by_id,
            calls,
            artifacts,
            self._live,
            self._pending_user,
            self.turn_state,
            self.current_task_id,
            self.input_task_id,
            self.running_task_id,
            self.older_token,
            unpaired,
        ) = state
        self._unpaired = dict(unpaired)
        self.items, self._by_id, self._calls, self._artifacts = list(items), dict(by_id), dict(calls), dict(artifacts)

    # -- stream events ---------------------------------------------------------------------
    def apply(self, event: StreamEvent, *, effective: bool = False) -> Change:
        """Apply one stream event. ``effective``: this request's Task is the session's effective
        history (the answer to a rewind or fork), so it replaces the whole conversation."""
        kind = event.kind
        body = event.body
        if kind in (EventKind.TASK, EventKind.TASK_LIKE):
            return self._apply_task(body, effective)
        if kind is EventKind.STATUS:
            return self._apply_status(body)
        if kind is EventKind.ARTIFACT:
            return self._apply_artifact(body)
        if kind is EventKind.MESSAGE:
            return self._apply_message(body, raw.task_id(body), None)
        if kind is EventKind.ERROR:
            error = body if isinstance(body, dict) else {}
            code = error.get("code")
            text = f"JSON-RPC error{' ' + str(code) if code is not None else ''}: {error.get('message') or 'no message'}"
            change = self._append(Item(ItemKind.ERROR, _synthetic_key("error"), role="system", text=text))
            return change.merge(self._end_turn("failed"))
        try:
            excerpt = json.dumps(body, ensure_ascii=False)
        except (TypeError, ValueError):
            excerpt = repr(body)
        if len(excerpt) > _UNKNOWN_EXCERPT:
            excerpt = excerpt[:_UNKNOWN_EXCERPT] + "…"
        return self._append(Item(ItemKind.UNKNOWN, _synthetic_key("unknown"), role="system", raw_dict=None, text=excerpt))

    def _append(self, item: Item) -> Change:
        self.items.append(item)
        return Change(first=len(self.items) - 1)

    def apply_effective_tail(self, event: StreamEvent, total: int) -> Change | None:
        """Apply a rewind's (redo's) bounded answer: its Task's history is the newest messages of
        an effective history of ``total`` messages. The view keeps its items holding the first
        ``total - len(tail)`` messages and takes the tail after them -- only when the message ids
        show that join: the tail's first message is the view's message at that count, at the start
        of an item, and where the tail and the view overlap they agree. None, with the view
        unchanged, when they do not (the caller re-reads the server)."""
        body = event.body
        if not event.is_task or not isinstance(body, dict):
            return None
        history, last, failure = _task_messages(body)
        tail = [raw.message_id(m) for m in history if raw.is_message(m)]
        keep = total - len(tail)
        if last or failure is not None or keep < 0 or None in tail:
            return None
        if keep == 0:
            return self.apply(event, effective=True)
        pending = self._pending_user
        shown = [(i, mid) for i, item in enumerate(self.items) if item.rewound is None and item is not pending
                 for mid in item.message_ids]
        if not tail or keep >= len(shown) or shown[keep][1] != tail[0]:
            return None
        if shown[keep - 1][0] == shown[keep][0]:
            return None  # the join falls inside an item (a tool call and its folded-in result)
        if [mid for _, mid in shown[keep : keep + len(tail)]] != tail[: len(shown) - keep]:
            return None
        at = shown[keep][0]
        self._forget(self.items[at:])
        self.items = [item for item in self.items[:at] if item.rewound is None]
        return self._apply_task(body, True, kept=len(self.items))

    def _apply_task(self, body: Any, effective: bool, kept: int | None = None) -> Change:
        task_id = body.get("id") if isinstance(body.get("id"), str) else None
        task_meta = raw.metadata(body)
        history, last, failure = _task_messages(body)
        history = [m for m in history if raw.is_message(m)]
        status = body.get("status") if isinstance(body.get("status"), dict) else {}
        state = norm_state(status.get("state")) if status else None
        self._note_time(task_id, status)
        if task_id:
            self.current_task_id = task_id
        whole = effective or task_meta.get(EFFECTIVE_HISTORY_KEY) is True or (
            task_id is not None and task_id == self.session_id and bool(history)
        )
        if not history and not last and not whole:
            if self.turn_state in ("idle", "submitted"):
                self.turn_state = "working"
            return self._state_change(state, task_id)
        if whole:
            pending = self._pending_user
            if kept is None:
                self._reset()
            self._extend(history, task_meta, task_id)
            if pending is not None and not (set(pending.message_ids) & set(self._by_id)):
                self.items.append(pending)
                for mid in pending.message_ids:
                    self._by_id[mid] = pending
            change = Change(first=kept or 0)
        else:
            change = self._replace_task_scope(task_id, history, task_meta)
        change.merge(self._task_artifacts(body, task_id, history + last))
        for item in self._extend(last, task_meta, task_id):
            change.merge(Change(first=self.items.index(item)))
        if failure is not None and not any(i.kind is ItemKind.ERROR and i.task_id == task_id for i in self.items):
            change.merge(self._append(Item(ItemKind.ERROR, _synthetic_key("error"), role="system", task_id=task_id, text=failure)))
        return change.merge(self._state_change(state, task_id))

    def _replace_task_scope(self, task_id: str | None, history: list[Any], task_meta: Any) -> Change:
        ids = {mid for mid in (raw.message_id(m) for m in history) if mid}
        positions = [
            i
            for i, item in enumerate(self.items)
            if item.rewound is None
            and ((task_id is not None and item.task_id == task_id) or (ids and not ids.isdisjoint(item.message_ids)))
        ]
        at = positions[0] if positions else len(self.items)
        removed = [self.items[i] for i in positions]
        self._forget(removed)
        dropped = set(positions)
        after = [it for i, it in enumerate(self.items[at:], start=at) if i not in dropped]
        self.items = self.items[:at]
        self._extend(history, task_meta, task_id)
        self.items.extend(after)
        if self._pending_user in removed:
            self._pending_user = self._by_id.get(self._pending_user.key) if self._pending_user else None
        return Change(first=at)

    def _task_artifacts(self, body: dict[str, Any], task_id: str | None, messages: list[Any]) -> Change:
        """A Task's artifacts, except those repeating text its own messages already show."""
        change = Change()
        artifacts = body.get("artifacts")
        if not isinstance(artifacts, list) or not artifacts:
            return change
        shown = {raw.text_of(m) for m in messages if raw.role(m) != "user"}
        for artifact in artifacts:
            if isinstance(artifact, dict) and _plain_text(artifact) in shown:
                continue
            change.merge(self._add_artifact(artifact, task_id, None, append=False))
        return change

    def _state_change(self, state: str | None, task_id: str | None) -> Change:
        if state in TURN_ENDING_STATES:
            return self._end_turn(state, task_id)
        if state and state != "unknown":
            self.turn_state = state
        return Change()

    def _end_turn(self, state: str, task_id: str | None = None) -> Change:
        change = Change(turn_ended=True)
        live = self._live
        if live is not None:
            live.streaming = False
            if state == CANCELED:
                live.stopped = True  # what streamed stays, marked stopped, under its author
            live.rev += 1
            change.updated.append(live)
            self._live = None
        self.turn_state = state
        self._pending_user = None
        self.running_task_id = None
        self.input_task_id = (task_id or self.current_task_id) if state in ("input-required", "auth-required") else None
        return change

    def _inherit_invocation(self, task_id: str | None, invocation_id: str) -> Change:
        """User items of this turn that lack an invocation id take the turn's."""
        change = Change()
        for item in reversed(self.items):
            if item.rewound is not None:
                continue
            if item.task_id is not None and task_id is not None and item.task_id != task_id:
                break
            if item.role == "user" and item.kind is ItemKind.MESSAGE:
                if item.invocation_id is None:
                    item.invocation_id = invocation_id
                    item.rev += 1
                    change.updated.append(item)
                break  # only the turn's own (latest) user message
        return change

    def _apply_status(self, body: Any) -> Change:
        task_id = raw.task_id(body)
        status = body.get("status") if isinstance(body.get("status"), dict) else {}
        state = norm_state(status.get("state"))
        message = status.get("message")
        event_meta = raw.metadata(body)
        self._note_time(task_id, status)
        if task_id:
            self.current_task_id = task_id
        change = Change()
        invocation = meta.invocation_id({"metadata": event_meta})
        if isinstance(message, dict):
            no_ids = not (raw.task_id(message) or raw.context_id(message) or raw.metadata(message))
            if state == "failed" and no_ids:
                text = raw.text_of(message) or "The task failed."
                change.merge(self._append(Item(ItemKind.ERROR, _synthetic_key("error"), role="system", task_id=task_id, text=text)))
            else:
                change.merge(self._apply_message(message, task_id, event_meta))
                invocation = invocation or meta.invocation_id(message)
        elif state == "failed":
            change.merge(self._append(Item(ItemKind.ERROR, _synthetic_key("error"), role="system", task_id=task_id, text="The task failed.")))
        if invocation and meta.rewind_target(invocation):
            change.merge(self._inherit_invocation(task_id, invocation))
        return change.merge(self._state_change(state, task_id))

    def _apply_message(self, m: Any, task_id: str | None, event_meta: Any) -> Change:
        if not isinstance(m, dict):
            return Change()
        mid = raw.message_id(m)
        existing = self._by_id.get(mid) if mid else None
        if existing is not None:
            # the server's echo of a message already shown: adopt its task and invocation ids
            updated = False
            if existing.task_id is None and (raw.task_id(m) or task_id):
                existing.task_id = raw.task_id(m) or task_id
                updated = True
            inv = meta.invocation_id(m)
            if inv and existing.invocation_id is None:
                existing.invocation_id = inv
                updated = True
            who = meta.author(m)
            if who and existing.author is None:
                existing.author = who
                updated = True
            if updated:
                existing.rev += 1
                return Change(updated=[existing])
            return Change()
        if raw.role(m) != "user" and (meta.is_partial(m) or (raw.metadata(m) == {} and meta.is_partial({"metadata": event_meta}))):
            return self._apply_delta(m, task_id)
        live = self._live
        if live is not None and (live.task_id == (raw.task_id(m) or task_id)):
            if raw.text_of(m):
                return self._replace_live(m, task_id)
            self._finish_live()
        twin = self._artifact_twin(m, task_id)
        item = self._admit(m, None, task_id)
        if item is None:
            holder = self._by_id.get(mid) if mid else None
            return Change(updated=[holder]) if holder is not None else Change()
        if twin is not None:
            index = self.items.index(twin)
            self.items[index] = item
            self._artifacts = {k: v for k, v in self._artifacts.items() if v is not twin}
            return Change(first=index)
        return self._append(item)

    def _apply_delta(self, m: dict[str, Any], task_id: str | None) -> Change:
        delta = raw.text_of(m)
        live = self._live
        task = raw.task_id(m) or task_id
        if live is None or live.task_id != task:
            if live is not None:
                self._finish_live()
            live = Item(
                ItemKind.MESSAGE,
                _synthetic_key("live"),
                role=raw.role(m),
                raw_dict=None,
                task_id=task,
                invocation_id=meta.invocation_id(m),
                author=meta.author(m),
                text=delta,
            )
            live.streaming = True
            self._live = live
            return self._append(live)
        live._set_text(live.text + delta)
        return Change(updated=[live])

    def _finish_live(self) -> None:
        if self._live is not None:
            self._live.streaming = False
            self._live.rev += 1
            self._live = None

    def _replace_live(self, m: dict[str, Any], task_id: str | None) -> Change:
        live = self._live
        assert live is not None
        self._live = None
        item = self._admit(m, None, task_id)
        index = self.items.index(live)
        if item is None:
            del self.items[index]
        else:
            self.items[index] = item
        return Change(first=index)

    def _artifact_twin(self, m: dict[str, Any], task_id: str | None) -> Item | None:
        """An artifact item of this task showing exactly this message's text (it came first)."""
        if not self._artifacts:
            return None
        text = raw.text_of(m)
        task = raw.task_id(m) or task_id
        for item in self._artifacts.values():
            if item.task_id == task and item.text == text and text:
                return item
        return None

    def _turn_shows(self, task_id: str | None, text: str) -> bool:
        for item in itertools.islice(reversed(self.items), _ARTIFACT_LOOKBACK):
            if task_id is not None and item.task_id not in (task_id, None):
                break
            if item.kind in (ItemKind.MESSAGE, ItemKind.ARTIFACT) and item.role != "user":
                if item.text == text or (len(text) > 0 and text in item.text):
                    return True
        return False

    def _apply_artifact(self, body: Any) -> Change:
        artifact = body.get("artifact")
        append = body.get("append") is True
        return self._add_artifact(artifact, raw.task_id(body), raw.metadata(body), append=append)

    def _add_artifact(self, artifact: Any, task_id: str | None, event_meta: Any, *, append: bool) -> Change:
        if not isinstance(artifact, dict):
            return Change()
        artifact_id = raw.get(artifact, "artifactId", "artifact_id")
        key = (task_id, artifact_id) if isinstance(artifact_id, str) else None
        text = raw.text_of(artifact)
        existing = self._artifacts.get(key) if key is not None else None
        if existing is not None:
            if append:
                existing._set_text(existing.text + text)
            elif existing.text != text:
                existing._set_text(text)
            else:
                return Change()
            return Change(updated=[existing])
        only_text = all(_is_texty(p) for p in raw.parts(artifact))
        if only_text and (not text or self._turn_shows(task_id, text)):
            return Change()
        item = Item(
            ItemKind.ARTIFACT,
            _synthetic_key("artifact"),
            role="agent",
            raw_dict=artifact,
            task_id=task_id,
            invocation_id=meta.invocation_id({"metadata": event_meta}),
            author=raw.get(artifact, "name"),
        )
        if key is not None:
            self._artifacts[key] = item
        return self._append(item)
