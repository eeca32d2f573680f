"""Stream events applied to the conversation: replace vs append, live partial text, tool
call/result pairing, artifacts, a rewind's effective history."""

from __future__ import annotations

import itertools
import json
from collections.abc import Iterable
from typing import Any

from rewindtui.a2a import metadata as meta
from rewindtui.a2a import raw
from rewindtui.a2a.classify import EventKind, StreamEvent
from rewindtui.a2a.dialect import TURN_ENDING_STATES, norm_state
from rewindtui.model.edits import ConversationEdits
from rewindtui.model.items import (
    _ARTIFACT_LOOKBACK,
    _UNKNOWN_EXCERPT,
    EFFECTIVE_HISTORY_KEY,
    Change,
    Item,
    ItemKind,
    _is_texty,
    _plain_text,
    _synthetic_key,
    _task_messages,
)


class Conversation(ConversationEdits):
    """The transcript of one session and the state of its current turn."""

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
            text = (
                f"JSON-RPC error{' ' + str(code) if code is not None else ''}: {error.get('message') or 'no message'}"
            )
            change = self._append(Item(ItemKind.ERROR, _synthetic_key("error"), role="system", text=text))
            return change.merge(self._end_turn("failed"))
        try:
            excerpt = json.dumps(body, ensure_ascii=False)
        except (TypeError, ValueError):
            excerpt = repr(body)
        if len(excerpt) > _UNKNOWN_EXCERPT:
            excerpt = excerpt[:_UNKNOWN_EXCERPT] + "…"
        return self._append(
            Item(ItemKind.UNKNOWN, _synthetic_key("unknown"), role="system", raw_dict=None, text=excerpt)
        )

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
        shown = [
            (i, mid)
            for i, item in enumerate(self.items)
            if item.rewound is None and item is not pending
            for mid in item.message_ids
        ]
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
        whole = (
            effective
            or task_meta.get(EFFECTIVE_HISTORY_KEY) is True
            or (task_id is not None and task_id == self.session_id and bool(history))
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
            change.merge(
                self._append(
                    Item(ItemKind.ERROR, _synthetic_key("error"), role="system", task_id=task_id, text=failure)
                )
            )
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
                change.merge(
                    self._append(
                        Item(ItemKind.ERROR, _synthetic_key("error"), role="system", task_id=task_id, text=text)
                    )
                )
            else:
                change.merge(self._apply_message(message, task_id, event_meta))
                invocation = invocation or meta.invocation_id(message)
        elif state == "failed":
            change.merge(
                self._append(
                    Item(
                        ItemKind.ERROR, _synthetic_key("error"), role="system", task_id=task_id, text="The task failed."
                    )
                )
            )
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
        if raw.role(m) != "user" and (
            meta.is_partial(m) or (raw.metadata(m) == {} and meta.is_partial({"metadata": event_meta}))
        ):
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


def extract_messages_from_tasks(tasks: Iterable[Any]) -> list[Item]:
    """Flatten the tasks' histories in task order into transcript items.

    Messages only; deduplicated by messageId (first position kept); a user message without an
    invocation id takes its task's ``metadata`` invocation id; a message holding only tool
    results is folded into the item holding the matching calls.
    """
    conv = Conversation()
    conv._extend_from_tasks(tasks)
    return conv.items
