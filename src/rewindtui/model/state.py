"""The conversation's state: its items, queries about them, and loading a session's tasks."""

from __future__ import annotations

from collections.abc import Collection, Iterable
from typing import Any

from rewindtui.a2a import metadata as meta
from rewindtui.a2a import raw
from rewindtui.a2a.dialect import norm_state
from rewindtui.model.items import (
    _NO_TOOLS,
    EFFECTIVE_HISTORY_KEY,
    Change,
    Confirmation,
    Item,
    ItemKind,
    _compact,
    _pairable_response,
    _plain_text,
    _response_ids,
    _synthetic_key,
    _task_messages,
)


class ConversationState:
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
    def load_tasks(self, tasks: Iterable[Any], older_token: str | None = None, joined: Collection[str] = ()) -> Change:
        """Replace the whole view with a session's tasks (as from ``GET /sessions/{id}/tasks``).
        ``older_token``: these are only the newest of them; the server's token for the page of
        older ones (:meth:`prepend_tasks` adds them in front). ``joined``: the ids of rewind Tasks
        read with their history cut, whose messages the tasks before them are (``chat.pages``)."""
        tasks = [t for t in tasks if isinstance(t, dict)]
        self._reset()
        self.older_token = older_token  # a rewind's Task among them resets it: nothing older counts
        self._extend_from_tasks(tasks, joined)
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

    def prepend_tasks(self, tasks: Iterable[Any], older_token: str | None, joined: Collection[str] = ()) -> Change:
        """Put a page of older tasks (oldest first, as the server pages them) in front of the
        view, as if the whole session had been loaded at once: a tool response shown on its own
        is folded into its call when the call comes in an older page, and a message repeated in
        both keeps its older place. ``older_token``: the token for the tasks older still (None:
        this was the oldest page). A rewind's Task in the page makes everything before it moot
        (one of ``joined``, as in :meth:`load_tasks`, does not)."""
        older = type(self)(self.session_id)
        older.older_token = older_token
        older._names = self._names
        older._extend_from_tasks(tasks, joined)
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

    def _extend_from_tasks(self, tasks: Iterable[Any], joined: Collection[str] = ()) -> None:
        for task in tasks:
            if not isinstance(task, dict):
                continue
            task_id = task.get("id")
            task_meta = raw.metadata(task)
            if task_id in joined:
                # a rewind's Task whose (cut) history ends the messages shown before it: nothing new
                self._note_time(task_id, task.get("status"))
                continue
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
                self.items.append(
                    Item(ItemKind.ERROR, _synthetic_key("error"), role="system", task_id=tid, text=failure)
                )

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

    def _append(self, item: Item) -> Change:
        self.items.append(item)
        return Change(first=len(self.items) - 1)

    def _add_artifact(self, artifact: Any, task_id: str | None, event_meta: Any, *, append: bool) -> Change:
        raise NotImplementedError  # the stream part (Conversation) adds artifacts

    def _items_of(self, tasks: Iterable[Any]) -> list[Item]:
        """The items of ``tasks`` alone, as a view of just them would hold them."""
        other = type(self)()
        other._extend_from_tasks(tasks)
        return other.items
