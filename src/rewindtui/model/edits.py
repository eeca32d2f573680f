"""What the user does to the conversation: rewound turns shown, a message sent, an error noted,
the optimistic truncation of a rewind and its exact rollback."""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Iterable
from typing import Any

from rewindtui.a2a.dialect import TURN_ENDING_STATES
from rewindtui.model.items import CANCELED, CLIENT_STATES, Change, Item, ItemKind, RewindToken, _synthetic_key
from rewindtui.model.rewound import rewound_groups
from rewindtui.model.state import ConversationState

#: What a rewind's optimistic cut (or a send's checkpoint) may change, and its rollback puts back
#: exactly: the fields in one list, read and written by name (containers copied).
ROLLBACK_FIELDS = (
    "items",
    "_by_id",
    "_calls",
    "_artifacts",
    "_unpaired",
    "_live",
    "_pending_user",
    "turn_state",
    "current_task_id",
    "input_task_id",
    "running_task_id",
    "older_token",
)


def _copied(value: Any) -> Any:
    return list(value) if isinstance(value, list) else dict(value) if isinstance(value, dict) else value


class ConversationEdits(ConversationState):
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
            items = [it for it in self._items_of([group.task]) if not set(it.message_ids) & set(self._by_id)]
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
        for i, (a, b) in enumerate(zip(self.items, token._state["items"], strict=False)):
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

    def graft_newest(self, at: int, newer: ConversationState) -> Change | None:
        """Replace this view's items from ``at`` on with the same messages as ``newer`` -- the
        session's newest pages, read back -- shows them: with their own tasks, artifacts and
        outcome lines, as a reload shows them (a redo's joined tail holds the messages only). Only
        where ``newer`` holds exactly the messages this view holds from ``at`` on, the first of
        them starting an item; None, with nothing changed, otherwise."""
        mine = self.items[at:]
        ours = [mid for item in mine for mid in item.message_ids]
        if not ours or any(item.rewound is not None for item in mine):
            return None
        holder = newer._by_id.get(ours[0])
        if holder is None or holder.message_ids[0] != ours[0]:
            return None
        start = next(i for i, item in enumerate(newer.items) if item is holder)
        grafted = newer.items[start:]
        if any(item.rewound is not None for item in grafted) or [m for i in grafted for m in i.message_ids] != ours:
            return None
        taken = {id(item) for item in grafted}
        if any(id(item) in taken and call_id in self._calls for call_id, item in newer._unpaired.items()):
            return None  # a tool's result whose call this view holds before ``at``: a reload folds it in
        self._forget(mine)
        self.items = self.items[:at] + grafted
        for item in grafted:
            for mid in item.message_ids:
                self._by_id[mid] = item
        for mine_index, theirs in ((self._calls, newer._calls), (self._unpaired, newer._unpaired)):
            mine_index.update({k: v for k, v in theirs.items() if id(v) in taken})
        self._artifacts.update({k: v for k, v in newer._artifacts.items() if id(v) in taken})
        self.task_times.update(newer.task_times)
        self.turn_state, self.current_task_id = newer.turn_state, newer.current_task_id
        self.input_task_id, self.running_task_id = newer.input_task_id, newer.running_task_id
        return Change(first=at, turn_ended=True)

    def rollback(self, token: RewindToken) -> Change:
        """Restore the view exactly as it was before ``truncate_before``."""
        self._restore(token._state)
        return Change(first=min(token.index, len(self.items)))

    def _capture(self) -> dict[str, Any]:
        return {name: _copied(getattr(self, name)) for name in ROLLBACK_FIELDS}

    def _restore(self, state: dict[str, Any]) -> None:
        for name, value in state.items():
            setattr(self, name, _copied(value))  # copied again: a token may be restored twice

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
