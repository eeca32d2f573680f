"""The live view's core: has another client changed the open session (a turn, a rewind, a redo, an
answer), and if so, re-read it and say what changed in one line.

One check is one small request, the same the freshness check before a send makes
(:mod:`rewindtui.chat.freshness`): the session's newest task -- REST ``limit=1`` on a server whose
card says that this is a revision, else A2A 1.0 ``ListTasks`` of one task -- now with its state
(:func:`rewindtui.client.freshness.newest_mark`). The session changed when

- the newest task is not the one the view holds (another client's turn, rewind, redo or edit:
  each makes a new task), or
- it is, but its state is not the one this watch saw last (another client answered a question,
  another client's turn ended), or
- the server says it has no such session (another client deleted it): a new session is opened
  in its place, as the server has none of it.

The watch remembers the server's mark only while the view stays as it was: when the view itself
changed (a turn of ours, a rewind of ours, another session opened), the next check compares with
the view afresh, so one's own work is never taken for another client's. A server that cannot say
(A2A 0.3, no REST API and no ``ListTasks``, a failed read) is never taken for changed.

What timer runs the checks, and when it must not (a turn of ours running, a rewind preview or an
edit open), is the app's (:mod:`rewindtui.tui.live_view`).
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from rewindtui.a2a.dialect import Dialect
from rewindtui.chat.outcome import plural
from rewindtui.client import freshness as reads
from rewindtui.model.items import INTERRUPTED

if TYPE_CHECKING:
    from rewindtui.chat.core import Chat

log = logging.getLogger(__name__)

#: the view as the watch last compared it: (session, newest task, turn state, number of messages)
ViewMark = tuple[str | None, str | None, str, int]
#: task states (0.3 spelling) of a turn that waits for the user, and of one still running
WAITING = frozenset({"input-required", "auth-required"})
RUNNING = frozenset({"submitted", "working"})


#: what the live view says when the open session is no longer on the server
#: (the server cannot tell a deleted session from a share withdrawn: to the user both are unknown)
DELETED = (
    "This session is no longer on the server for you: another client deleted it, or it was shared "
    "with you and no longer is. A new session is open here; your draft stays (F2 lists the others)."
)


@dataclass(frozen=True)
class Followed:
    """A change another client made, after the view was re-read: ``said`` in one line."""

    session_id: str
    said: str
    came: int = 0
    went: int = 0


def _view_mark(chat: Chat) -> ViewMark:
    conv = chat.conversation
    return conv.session_id, conv.current_task_id, conv.turn_state, len(conv.items)


def _held(chat: Chat) -> set[str]:
    conv = chat.conversation
    held = {item.task_id for item in conv.items if isinstance(item.task_id, str)}
    if conv.current_task_id:
        held.add(conv.current_task_id)
    return held


def can_follow(chat: Chat) -> bool:
    """Whether the server offers a cheap way to see that the session changed."""
    caps = chat.client.capabilities
    return caps is not None and (caps.newest_task or caps.dialect is Dialect.V10)


class LiveWatch:
    """Follows the open session of one :class:`~rewindtui.chat.Chat` (one check at a time: the
    caller never runs two at once)."""

    def __init__(self, chat: Chat) -> None:
        self.chat = chat
        self._view: ViewMark | None = None
        self._server: tuple[str, str] | None = None
        #: how many checks were made (for tests and the benchmark of the timer's back-off)
        self.checks = 0

    async def _read(self, sid: str) -> tuple[str, str] | None:
        caps = self.chat.client.capabilities
        if caps is None:
            return None
        if caps.newest_task:
            return await reads.newest_mark(self.chat.client, sid, listed=False)
        if caps.dialect is Dialect.V10:
            return await reads.newest_mark(self.chat.client, sid, listed=True)
        return None  # A2A 0.3 has no cheap way to ask

    def _changed(self, mark: tuple[str, str]) -> bool:
        view = _view_mark(self.chat)
        if view != self._view or self._server is None:
            # the view moved by itself (or this is the first look): compare with the view
            self._view = view
            caps = self.chat.client.capabilities
            newest, state = mark
            conv = self.chat.conversation
            if caps is not None and caps.newest_task:
                differs = newest != conv.current_task_id
            else:
                differs = newest not in _held(self.chat)
            turn = any(item.task_id == newest for item in conv.items)  # a turn's task, not a rewind's
            if turn and newest == conv.current_task_id:  # the same turn: waiting, running, as the view says?
                differs = differs or (state in WAITING) != (conv.turn_state in WAITING)
                differs = differs or (state in RUNNING) != (conv.turn_state in RUNNING)
                # running there and read as running, but not followed here (the view was re-read by a
                # refused send, rewind or edit): re-read and shown, it is followed as on opening
                differs = differs or (state in RUNNING and newest != self.chat.interrupted_task_id)
                # the view could not say how the turn ended (its server was away: a replica killed
                # mid-turn); the server now has its ending: re-read, the view is the server's
                differs = differs or (conv.turn_state == INTERRUPTED and state not in RUNNING | WAITING)
            if not differs:
                self._server = mark
            return differs
        return mark != self._server

    async def check(self, ready: Callable[[], bool] = lambda: True) -> Followed | None:
        """One look at the server: None when the session did not change (or the server cannot
        say, or the chat is busy); else the session was re-read and :class:`Followed` says how.
        ``ready``: asked again before the view is re-read (False: leave it for a later check)."""
        chat = self.chat
        sid = chat.session_id
        if sid is None or chat.sending or chat.rewinding or chat.edit is not None:
            return None
        self.checks += 1
        try:
            mark = await self._read(sid)
        except reads.SessionGone:
            if sid != chat.session_id or chat.sending or chat.rewinding or not ready():
                return None
            log.info("session %s is no longer on the server", sid)
            await chat.open(None)  # the view is the server's: that session is gone; a new one (no id yet)
            self._view = self._server = None
            return Followed(sid, DELETED)
        if mark is None or sid != chat.session_id or chat.sending or chat.rewinding:
            return None  # cannot say, or the view moved while we asked: the next check sees it
        if not self._changed(mark) or not ready():
            return None
        log.info("session %s changed elsewhere (newest task %s, %s)", sid, *mark)
        conv = chat.conversation
        before = turn_keys(chat)
        asked = conv.pending_confirmation() is not None
        state = conv.turn_state
        await chat.open(sid)
        self._view, self._server = _view_mark(chat), mark
        return Followed(sid, *what_changed(chat, before, asked, state))


def turn_keys(chat: Chat) -> list[str]:
    """One key per turn of the view: its invocation id, or on a server whose messages say no
    turn (no invocation ids) its user message's key."""
    conv = chat.conversation
    return conv.turn_invocations() or [item.key for item in conv.items if item.role == "user"]


def what_changed(chat: Chat, before: list[str], asked: bool, state: str) -> tuple[str, int, int]:
    """What changed, in one line (and how many turns came and went); ``before``: the
    :func:`turn_keys` of the view before it was re-read."""
    conv = chat.conversation
    after = turn_keys(chat)
    came = len(set(after) - set(before))
    went = len(set(before) - set(after))
    # a turn holds messages of its own task; a rewind's (a redo's) task holds none
    newest_is_turn = any(item.task_id == conv.current_task_id for item in conv.items)
    running = " (still running)" if conv.running_task_id is not None else ""
    counts = []
    if went:
        counts.append(f"{plural(went, 'turn')} went")
    if came:
        counts.append(f"{plural(came, 'turn')} came")
    tail = ", ".join(counts)
    if came and went and newest_is_turn:
        return f"Another client rewound this session and sent a turn: {tail}{running}.", came, went
    if came and newest_is_turn:
        return f"Another client sent a turn in this session: {tail}{running}.", came, went
    if came:
        return f"Another client brought rewound turns back (redo): {tail}.", came, went
    if went:
        return f"Another client rewound this session: {tail}.", came, went
    if asked and conv.pending_confirmation() is None:
        return (
            "Another client answered the question; the turn goes on."
            if running
            else "Another client answered the question.",
            0,
            0,
        )
    if state in RUNNING and conv.turn_state not in RUNNING:
        return "The turn running on the server ended.", 0, 0
    if running:
        return "A turn of another client is running in this session; the view follows it.", 0, 0
    if conv.turn_state in WAITING and state not in WAITING:
        return "The agent asks a question in this session.", 0, 0
    return "This session changed on the server; it was read again.", 0, 0
