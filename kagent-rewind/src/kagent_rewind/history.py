"""Where a rewind cuts: in ADK's session events, and in the stored A2A tasks.

Pure functions, no I/O. Two views of one session meet here:

* ADK's session events, the model's truth. Which invocations are still *effective* (seen by the
  model) follows exactly the filter ADK applies before each model call
  (``google.adk.flows.llm_flows.contents``: walking back from the end, a rewind event hides every
  event from the first one of its target invocation up to itself).
* The A2A tasks kagent stored for the session (oldest first), the view's truth. Their histories,
  merged and deduplicated by ``messageId``, are what a client shows; a rewind cuts that list at the
  first message of the target invocation, so every original ``messageId`` is kept.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from a2a.types import Message, Task
from google.adk.events import Event

from kagent_rewind import contract

_PREFIXES = ("adk_", "kagent_")


def read_meta(metadata: dict[str, Any] | None, key: str) -> Any:
    """``adk_<key>``, else ``kagent_<key>`` (kagent writes the latter, upstream ADK the former)."""
    if not metadata:
        return None
    for prefix in _PREFIXES:
        if prefix + key in metadata:
            return metadata[prefix + key]
    return None


class Refused(Exception):
    """A rewind the server will not do; nothing was changed."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


# -- ADK events ----------------------------------------------------------------------------------
def effective_events(events: Sequence[Event]) -> list[Event]:
    """The events the model still sees, in order (the rewind filter of ADK's ``contents.py``).

    Walking back from the end, a rewind event drops itself and everything back to the first event
    of the invocation it names (when that comes before it). Linear: the first event of each
    invocation is looked up in one index, built once when the first rewind is met (the cases are
    ``tests/golden/effective_history.json``, shared with rewindtui's embedded server).
    """
    first: dict[str, int] | None = None
    kept: list[Event] = []
    i = len(events) - 1
    while i >= 0:
        event = events[i]
        target = event.actions.rewind_before_invocation_id if event.actions else None
        if target:
            if first is None:
                first = {}
                for index, earlier in enumerate(events):
                    if earlier.invocation_id and earlier.invocation_id not in first:
                        first[earlier.invocation_id] = index
            start = first.get(target)
            if start is not None and start < i:
                i = start
        else:
            kept.append(event)
        i -= 1
    kept.reverse()
    return kept


def _unique(ids: Iterable[str | None]) -> list[str]:
    seen: dict[str, None] = {}
    for inv in ids:
        if inv and inv not in seen:
            seen[inv] = None
    return list(seen)


def rewound_by(events: Sequence[Event], target: str) -> list[str]:
    """The invocations a rewind before ``target`` takes away: ``target`` and every effective
    invocation after it, in order. Raises :class:`Refused` for a target that is not an effective
    turn of the session (unknown, kagent's ``header_update``, already rewound, a rewind itself)."""
    if not isinstance(target, str) or not target.strip():
        raise Refused(contract.CODE_BAD_REQUEST, f"{contract.REWIND_METADATA_KEY} must be a non-empty string")
    if target == contract.HEADER_UPDATE_INVOCATION:
        raise Refused(
            contract.CODE_INVALID_INVOCATION,
            f"{target!r} is kagent's per-turn system event, not a turn; choose the invocation of a message",
        )
    if not any(event.invocation_id == target for event in events):
        raise Refused(contract.CODE_INVALID_INVOCATION, f"{target!r} is not an invocation of this session")
    effective = _unique(
        e.invocation_id for e in effective_events(events) if e.invocation_id != contract.HEADER_UPDATE_INVOCATION
    )
    if target not in effective:
        raise Refused(
            contract.CODE_INVALID_INVOCATION,
            f"invocation {target!r} was already rewound; choose one from the current history",
        )
    return effective[effective.index(target) :]


def rewind_invocation_of(events: Sequence[Event], target: str) -> str | None:
    """The invocation id of the latest rewind event before ``target`` (ADK makes one up)."""
    for event in reversed(events):
        if event.actions and event.actions.rewind_before_invocation_id == target:
            return event.invocation_id
    return None


# -- stored tasks --------------------------------------------------------------------------------
def is_partial(message: Message) -> bool:
    """A streamed text delta (kagent stores them in local mode; its controller store drops them)."""
    return read_meta(message.metadata, "adk_partial") is True


@dataclass
class Entry:
    """One message of the merged history, with the invocation it belongs to."""

    message: Message
    invocation_id: str | None


def merged_history(tasks: Sequence[Task]) -> list[Entry]:
    """The session's conversation from its stored tasks (oldest first): their histories in order,
    each ``messageId`` once, without streamed deltas. A message without an invocation id (the
    user's, which kagent stores as sent) takes the one of the next message of its task that has
    one, else the task's ``kagent_invocation_id``."""
    entries: list[Entry] = []
    seen: set[str] = set()
    for task in tasks:
        history = [m for m in task.history or [] if not is_partial(m)]
        fallback = read_meta(task.metadata, "invocation_id")
        following: str | None = fallback if isinstance(fallback, str) else None
        owners: list[str | None] = []
        for message in reversed(history):
            own = read_meta(message.metadata, "invocation_id")
            if isinstance(own, str) and own:
                following = own
            owners.append(following)
        owners.reverse()
        for message, owner in zip(history, owners, strict=True):
            if message.message_id in seen:
                continue
            seen.add(message.message_id)
            entries.append(Entry(message, owner))
    return entries


@dataclass
class Cut:
    """A rewind's effect on the stored history."""

    effective: list[Message]
    rewound_ids: set[str] = field(default_factory=set)
    rewound_invocations: set[str] = field(default_factory=set)


def _stamped(entry: Entry) -> Message:
    """The message, with the invocation it belongs to in its metadata when it had none (kagent
    stores the user's message as sent): a client can then rewind from it."""
    message = entry.message
    if entry.invocation_id is None or read_meta(message.metadata, "invocation_id"):
        return message
    metadata = {**(message.metadata or {}), "kagent_invocation_id": entry.invocation_id}
    return message.model_copy(update={"metadata": metadata})


def cut_history(entries: Sequence[Entry], rewound: Iterable[str]) -> Cut:
    """Cut the merged history at the first message of a rewound invocation: it and everything
    after it are rewound (turns are sequential, so what follows came later). The messages kept
    are the effective history, each with its invocation id."""
    rewound_set = set(rewound)
    at = next((i for i, e in enumerate(entries) if e.invocation_id in rewound_set), len(entries))
    gone = entries[at:]
    return Cut(
        effective=[_stamped(e) for e in entries[:at]],
        rewound_ids={e.message.message_id for e in gone},
        rewound_invocations=rewound_set | {e.invocation_id for e in gone if e.invocation_id},
    )


def _dump(items: Iterable[Any]) -> list[Any]:
    return [item.model_dump(mode="json", by_alias=True, exclude_none=True) for item in items]


def rewrite_task(task: Task, cut: Cut, rewind_task_id: str) -> Task | None:
    """``task`` without its rewound messages (kept in its metadata instead), or ``None`` when the
    rewind does not touch it. When the task's whole turn was rewound, its artifacts and status
    message move to the metadata too, so no client shows them as current (a rewind-and-send
    task keeps the earlier history it repeats)."""

    def rewound(message: Message) -> bool:
        own = read_meta(message.metadata, "invocation_id")
        return message.message_id in cut.rewound_ids or (isinstance(own, str) and own in cut.rewound_invocations)

    history = list(task.history or [])
    kept = [m for m in history if not rewound(m)]
    task_invocation = read_meta(task.metadata, "invocation_id")
    whole_turn = task_invocation in cut.rewound_invocations or (not kept and len(kept) < len(history))
    status_message = task.status.message
    moves_status = whole_turn and status_message is not None
    moves_artifacts = whole_turn and bool(task.artifacts)
    if len(kept) == len(history) and not moves_status and not moves_artifacts:
        return None
    moved = [m for m in history if rewound(m)]
    if moves_status and status_message is not None:
        moved.append(status_message)
    metadata = dict(task.metadata or {})
    metadata[contract.REWOUND_HISTORY_KEY] = list(metadata.get(contract.REWOUND_HISTORY_KEY) or []) + _dump(moved)
    if moves_artifacts and task.artifacts:
        metadata[contract.REWOUND_ARTIFACTS_KEY] = list(metadata.get(contract.REWOUND_ARTIFACTS_KEY) or []) + _dump(
            task.artifacts
        )
    metadata[contract.REWOUND_BY_KEY] = list(metadata.get(contract.REWOUND_BY_KEY) or []) + [rewind_task_id]
    segment = {
        "by": rewind_task_id,
        "history": _dump(m for m in history if rewound(m)),
        "status": _dump([status_message])[0] if moves_status and status_message is not None else None,
        "artifacts": _dump(task.artifacts) if moves_artifacts and task.artifacts else [],
    }
    metadata[contract.REWOUND_SEGMENTS_KEY] = list(metadata.get(contract.REWOUND_SEGMENTS_KEY) or []) + [segment]
    status = task.status.model_copy(update={"message": None}) if moves_status else task.status
    return task.model_copy(
        update={
            "history": kept,
            "artifacts": None if moves_artifacts else task.artifacts,
            "status": status,
            "metadata": metadata,
        }
    )


# -- redo ------------------------------------------------------------------------------------------
def redo_event(events: Sequence[Event], target: str) -> Event | None:
    """The rewind event whose invocation is ``target`` (a redo names it), or None: ``target`` is
    an ordinary turn. Raises :class:`Refused` when that rewind is not the last thing done on the
    session (a turn came after it, or it was already redone): only the last rewind is undone."""
    at = next(
        (i for i, e in enumerate(events) if e.invocation_id == target and e.actions and e.actions.rewind_before_invocation_id),
        None,
    )
    if at is None:
        return None
    later = [e for e in events[at + 1 :] if e.invocation_id != contract.HEADER_UPDATE_INVOCATION]
    if later:
        raise Refused(
            contract.CODE_INVALID_INVOCATION,
            "nothing to redo: that rewind is not the last thing done on this session (a turn came after it, "
            "or it was already redone)",
        )
    return events[at]


def restore_task(task: Task, rewind_task_id: str) -> Task | None:
    """``task`` with what the rewind ``rewind_task_id`` moved out of it put back, or None when
    that rewind did not touch it (or moved nothing this add-on recorded)."""
    metadata = dict(task.metadata or {})
    segments = list(metadata.get(contract.REWOUND_SEGMENTS_KEY) or [])
    at = next((i for i in range(len(segments) - 1, -1, -1) if segments[i].get("by") == rewind_task_id), None)
    if at is None:
        return None
    segment = segments.pop(at)
    back = [Message.model_validate(m) for m in segment.get("history") or []]
    back_ids = {m.message_id for m in back}
    status_json = segment.get("status")
    if status_json:
        back_ids.add(status_json.get("messageId"))
    metadata[contract.REWOUND_HISTORY_KEY] = [
        m for m in metadata.get(contract.REWOUND_HISTORY_KEY) or [] if m.get("messageId") not in back_ids
    ]
    artifacts_back = segment.get("artifacts") or []
    artifact_ids = {a.get("artifactId") for a in artifacts_back}
    metadata[contract.REWOUND_ARTIFACTS_KEY] = [
        a for a in metadata.get(contract.REWOUND_ARTIFACTS_KEY) or [] if a.get("artifactId") not in artifact_ids
    ]
    by = list(metadata.get(contract.REWOUND_BY_KEY) or [])
    if rewind_task_id in by:
        by.reverse()
        by.remove(rewind_task_id)
        by.reverse()
    metadata[contract.REWOUND_BY_KEY] = by
    metadata[contract.REWOUND_SEGMENTS_KEY] = segments
    for key in (contract.REWOUND_HISTORY_KEY, contract.REWOUND_ARTIFACTS_KEY, contract.REWOUND_BY_KEY, contract.REWOUND_SEGMENTS_KEY):
        if not metadata[key]:
            del metadata[key]
    update: dict[str, Any] = {"history": list(task.history or []) + back, "metadata": metadata}
    if status_json:
        update["status"] = task.status.model_copy(update={"message": Message.model_validate(status_json)})
    if artifacts_back:
        from a2a.types import Artifact

        update["artifacts"] = list(task.artifacts or []) + [Artifact.model_validate(a) for a in artifacts_back]
    return task.model_copy(update=update)


def effective_after_redo(tasks: Sequence[Task]) -> list[Message]:
    """The conversation once the redone turns are back: every stored task's history merged, each
    message stamped with its invocation (rewind Tasks repeat earlier messages: deduplicated)."""
    return [_stamped(e) for e in merged_history(tasks)]
