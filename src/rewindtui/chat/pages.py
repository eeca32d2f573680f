"""A session's task pages read bounded, whatever its rewinds.

A rewind's (or redo's) Task holds the session's whole effective history: listed in a page, it makes
that page as large as the session (45 MB at 25,000 turns), and a page that holds the redo an undo
just made is the newest page -- the one every open and every re-read after the undo reads first.

So, where the server honours ``history_length`` on its task list (its card's ``newest_task`` param:
:data:`contract.REST_HISTORY_LENGTH_FIELD`), a page is asked for with each task's history cut to
its newest :data:`PAGE_HISTORY` messages, and the cut page is used only when it shows everything
that the whole page would:

* every turn's Task holds fewer than :data:`PAGE_HISTORY` messages (so none was cut);
* every rewind Task with fewer messages than its count (``contract.EFFECTIVE_HISTORY_TOTAL_KEY``)
  is *joined*: its messages are the last ones of the effective history that the page's tasks
  before it make (their messages, in order, from the last whole rewind Task before it on), by id;
  where that history starts in the page (the oldest page, or after a whole rewind Task) its length
  is the count too. A joined Task adds nothing to the view (``Conversation.load_tasks``'s
  ``joined``); the tasks before it, this page's and the older pages', are its history.

Otherwise the page is read again whole, as before (correct, and as large as it is).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from rewindtui.a2a import contract, raw
from rewindtui.chat.undo import history_read
from rewindtui.client.a2a_client import A2AClient
from rewindtui.client.tasks import TaskPage

#: the newest messages of each task a cut page holds (a turn with this many or more: the page whole)
PAGE_HISTORY = 200


@dataclass
class Page:
    """A page of a session's tasks (oldest first), its older page's token, and the rewind Tasks of
    it read cut and joined (``Conversation.load_tasks``'s ``joined``)."""

    tasks: list[dict[str, Any]]
    next_page_token: str | None
    joined: frozenset[str] = field(default_factory=frozenset)


def _total(task: dict[str, Any]) -> int | None:
    total = raw.metadata(task).get(contract.EFFECTIVE_HISTORY_TOTAL_KEY)
    if isinstance(total, float) and total.is_integer():
        total = int(total)  # A2A 1.0 metadata is a protobuf Struct: its numbers are floats
    return total if isinstance(total, int) and not isinstance(total, bool) else None


def joined_rewinds(tasks: Sequence[Any], *, oldest: bool) -> frozenset[str] | None:
    """The ids of the cut rewind Tasks of a page read with histories cut to :data:`PAGE_HISTORY`
    that join the messages before them (see the module); None when the page must be read whole.
    ``oldest``: the page is the session's oldest (its first task starts the history)."""
    history: list[str] = []  # the effective history's message ids, as the page's tasks make it so far
    exact = oldest  # ... from its start
    joined: set[str] = set()
    for task in tasks:
        if not isinstance(task, dict):
            continue
        messages = [m for m in raw.history(task) if raw.is_message(m)]
        ids = [raw.message_id(m) for m in messages]
        if None in ids:
            return None
        mids: list[str] = ids  # type: ignore[assignment]
        rewind = raw.metadata(task).get(contract.EFFECTIVE_HISTORY_KEY) is True
        total = _total(task) if rewind else None
        if not rewind or total is None or len(mids) >= total:
            if len(mids) >= PAGE_HISTORY and (not rewind or total is None):
                return None  # maybe cut, and nothing says how much
            if rewind:
                history, exact = mids, True  # a whole rewind Task: the history is its own
            else:
                history.extend(mids)
            continue
        task_id = task.get("id")
        if not isinstance(task_id, str) or not mids or len(history) < len(mids):
            return None
        if history[-len(mids) :] != mids or (exact and len(history) != total):
            return None
        if len(set(history)) != len(history):
            return None  # a message repeated: the view would show it once, the count would differ
        joined.add(task_id)
    return frozenset(joined)


async def read_page(client: A2AClient, session_id: str, limit: int, before: str | None = None) -> Page:
    """One REST page of a session's tasks (see ``A2AClient.session_tasks_page``), cut and joined
    where the server can and the page allows it, else whole."""
    caps = client.capabilities
    if caps is not None and caps.newest_task:
        cut = await client.session_tasks_page(session_id, limit, before, history_length=PAGE_HISTORY)
        joined = joined_rewinds(cut.tasks, oldest=cut.next_page_token is None)
        if joined is not None:
            return Page(cut.tasks, cut.next_page_token, joined)
    page = await client.session_tasks_page(session_id, limit, before)
    return Page(page.tasks, page.next_page_token)


async def undo_page(client: A2AClient, session_id: str, limit: int) -> TaskPage:
    """The newest ``limit`` tasks of a session, rewound ones included, as what the one undo can undo
    is read from them (``chat.undo.undo_point``): where the server cuts histories, without any (a
    rewind's Task among them would be the whole session), and the one task whose messages are
    read (:func:`~rewindtui.chat.undo.history_read`: the newest current turn, undos' Tasks after it
    passed over -- is it an edit's?) read whole on its own."""
    caps = client.capabilities
    if caps is None or not caps.newest_task:
        return await client.session_tasks_page(session_id, limit, include_rewound=True)
    page = await client.session_tasks_page(session_id, limit, include_rewound=True, history_length=0)
    wanted = history_read(page.tasks)
    if wanted is not None:
        whole = await client.get_task(wanted)  # a turn's Task: its own messages only
        page.tasks = [
            {**t, "history": raw.history(whole)} if isinstance(t, dict) and t.get("id") == wanted else t
            for t in page.tasks
        ]
    return page
