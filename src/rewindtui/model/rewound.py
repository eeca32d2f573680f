"""What was rewound in a session, read from its tasks (rewound ones included).

A rewind takes turns out of the conversation but the server keeps them. This module finds them
in a session's task list, oldest first, as groups of messages with:

* where they were (their task's position in the list, so a view can show them in place);
* when they were rewound, and by which rewind -- redoing that rewind brings the branch back;
* the invocation to fork before to get a new session holding their branch up to and including
  them (the next invocation in the session's log: the next turn's, or the rewind's own).

Two servers keep rewound turns: rewindtui's (``GET .../tasks?include_rewound=true`` lists rewound
tasks whole, with ``contract.REWOUND_*`` metadata) and kagent agents with the kagent-rewind add-on
(a task keeps the messages a rewind took out in ``metadata.kagent_rewind_rewound_history``; no
redo or fork there).

Pure: task dicts in, groups out.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from rewindtui.a2a import contract, kagent, raw
from rewindtui.a2a import metadata as meta


@dataclass(frozen=True)
class Mark:
    """How a rewound message is marked in a view (it is not part of the conversation)."""

    at: str | None  # when it was rewound (ISO 8601), if the server says
    by: str | None  # the rewind (task id) that took it away: redo it to bring the branch back
    fork_before: str | None  # fork before this invocation for a session holding the branch up to it


@dataclass(frozen=True)
class Group:
    position: int  # the index of its task in the session's task list
    task: dict[str, Any]  # a task holding the rewound messages (the rewound task, or one made of them)
    mark: Mark


def _invocation(task: dict[str, Any]) -> str | None:
    """The invocation a task adds to the session's log: a turn's, or a rewind's own event."""
    task_meta = raw.metadata(task)
    own = task_meta.get(contract.REWIND_INVOCATION_KEY) if task_meta.get(contract.EFFECTIVE_HISTORY_KEY) else None
    if own is None and not task_meta.get(contract.EFFECTIVE_HISTORY_KEY):
        own = meta.value(task_meta, meta.INVOCATION_ID)
    return meta.rewind_target(own if isinstance(own, str) else None)


def _status_time(task: dict[str, Any]) -> str | None:
    status = task.get("status")
    stamp = status.get("timestamp") if isinstance(status, dict) else None
    return stamp if isinstance(stamp, str) and stamp else None


def rewound_groups(tasks: Sequence[Any]) -> list[Group]:
    """The rewound messages of a session's tasks (oldest first), grouped by task, in order."""
    tasks = [t for t in tasks if isinstance(t, dict)]
    by_id = {t.get("id"): t for t in tasks}
    groups = []
    for position, task in enumerate(tasks):
        task_meta = raw.metadata(task)
        if task_meta.get(contract.REWOUND_KEY) is True and not task_meta.get(contract.EFFECTIVE_HISTORY_KEY):
            by = task_meta.get(contract.REWOUND_BY_TASK_KEY)
            at = task_meta.get(contract.REWOUND_AT_KEY)
            after = (_invocation(t) for t in tasks[position + 1 :])
            mark = Mark(
                at if isinstance(at, str) else None,
                by if isinstance(by, str) else None,
                next((inv for inv in after if inv), None),
            )
            groups.append(Group(position, task, mark))
        addon = task_meta.get(kagent.ADDON_REWOUND_HISTORY)
        if isinstance(addon, list) and addon:
            rewinds = task_meta.get(kagent.ADDON_REWOUND_BY)
            last = rewinds[-1] if isinstance(rewinds, list) and rewinds else None
            rewind = by_id.get(last) if isinstance(last, str) else None
            held = {"kind": "task", "id": task.get("id"), "metadata": task_meta, "history": addon}
            groups.append(Group(position, held, Mark(_status_time(rewind) if rewind else None, None, None)))
    return groups
