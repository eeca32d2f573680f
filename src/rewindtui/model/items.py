"""The transcript's items: messages (tool results folded in), artifacts, errors; the
question a turn waits on; the change a mutation reports; and flattening tasks into items. Pure."""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from enum import Enum
from types import MappingProxyType
from typing import Any

from rewindtui.a2a import contract, raw
from rewindtui.a2a import metadata as meta
from rewindtui.a2a.dialect import norm_role, norm_state
from rewindtui.a2a.outgoing import DECISION_KEY
from rewindtui.a2a.parts import tidy_json
from rewindtui.model.rewound import Mark

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
        return (
            f"Item({self.kind.value}, {self.role}, {self.key!r}, inv={self.invocation_id!r}, text={self.text[:40]!r})"
        )

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
    _state: dict[str, Any]  # the conversation's rollback fields (model/edits.py ROLLBACK_FIELDS), copied


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


_OUTCOME_WORDS = {
    "failed": "This turn failed",
    "canceled": "This turn was canceled",
    "rejected": "This turn was rejected",
}


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
    if state == "canceled" and any(raw.metadata(m).get(contract.STOPPED_KEY) is True for m in history):
        words = None  # the kept part is marked stopped: the live view says no more than that either
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
