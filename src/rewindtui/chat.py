"""The operations a user performs on a session — open, send, rewind, edit-and-resend, fork —
as plain asyncio over the client and the conversation model. The app and the headless commands
both drive this; it knows nothing about terminals.

Every change to the conversation is passed to ``listener`` (a :class:`~rewindtui.conversation.Change`)
as it happens, so a view can redraw incrementally.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable
from dataclasses import dataclass

from rewindtui.a2a import contract, raw
from rewindtui.a2a.classify import EventKind, StreamEvent
from rewindtui.a2a.dialect import norm_state
from rewindtui.client import A2AClient, ClientError, Session, Unsupported
from rewindtui.conversation import Change, Conversation, RewindToken

Listener = Callable[[Change], None]


class RewindFailed(ClientError):
    """The server refused or failed the rewind; the view was rolled back."""


class Busy(ClientError):
    """Another rewind (or a turn) is in flight."""


@dataclass
class PendingEdit:
    invocation_id: str
    token: RewindToken
    text: str


def _failure_text(event: StreamEvent) -> str | None:
    """The reason, if this event says the request failed (a failed status or a JSON-RPC error)."""
    if event.kind is EventKind.ERROR:
        body = event.body if isinstance(event.body, dict) else {}
        return f"JSON-RPC error {body.get('code')}: {body.get('message') or 'no message'}"
    if event.kind is EventKind.STATUS and isinstance(event.body, dict):
        status = event.body.get("status")
        if isinstance(status, dict) and norm_state(status.get("state")) in ("failed", "rejected"):
            return raw.text_of(status.get("message")) or "the server reported failure"
    return None


def _is_effective_history(event: StreamEvent) -> bool:
    """The rewind answer: a Task flagged as the effective history, or (for servers that do not
    flag it) a completed Task carrying a history."""
    if not event.is_task or not isinstance(event.body, dict):
        return False
    if raw.metadata(event.body).get(contract.EFFECTIVE_HISTORY_KEY) is True:
        return True
    status = event.body.get("status")
    state = norm_state(status.get("state")) if isinstance(status, dict) else None
    return state == "completed" and isinstance(event.body.get("history"), list)


class Chat:
    def __init__(self, client: A2AClient, listener: Listener | None = None) -> None:
        self.client = client
        self.conversation = Conversation()
        self.listener = listener
        self.session: Session | None = None
        self.rewinding = False
        self.sending = False
        self.edit: PendingEdit | None = None
        self._rewound = False

    @property
    def session_id(self) -> str | None:
        return self.conversation.session_id

    def _emit(self, change: Change) -> None:
        if self.listener is not None and not change.empty:
            self.listener(change)

    # -- sessions ----------------------------------------------------------------------------
    async def open(self, session_id: str | None = None) -> None:
        """Open a session (its tasks from the REST API when there is one) or start a new one."""
        await self.client.connect()
        conversation = Conversation(session_id)
        session: Session | None = None
        if session_id is None:
            if self.client.has_api:
                session = await self.client.create_session()
                conversation.session_id = session.id
            else:
                conversation.session_id = str(uuid.uuid4())
        elif self.client.has_api:
            session = await self.client.get_session(session_id)
            conversation.load_tasks(await self.client.session_tasks(session_id))
        self.conversation = conversation
        self.session = session
        self.edit = None
        self._emit(Change(first=0, turn_ended=True))

    async def connect_and_open(self, session_id: str | None = None) -> None:
        """Connect, then open ``session_id``, else the most recently updated session, else a new one."""
        await self.client.connect()
        if session_id is None and self.client.has_api:
            sessions = await self.client.list_sessions()
            if sessions:
                session_id = max(sessions, key=lambda s: s.updated_at or s.created_at or "").id
        await self.open(session_id)

    async def refresh(self) -> None:
        """Re-read the session's tasks (the server's view is the truth after a rewind)."""
        if self.client.has_api and self.session_id:
            tasks = await self.client.session_tasks(self.session_id)
            self._emit(self.conversation.load_tasks(tasks))

    # -- turns -------------------------------------------------------------------------------
    async def send(self, text: str) -> None:
        """Send a message. During an edit, this is the rewind-and-send request."""
        if self.edit is not None:
            edit, self.edit = self.edit, None
            await self._rewind(edit.invocation_id, text, token=edit.token)
            return
        if self.sending or self.rewinding:
            raise Busy("a turn is still running")
        conversation = self.conversation
        message = self.client.build_message(
            text, session_id=conversation.session_id, task_id=conversation.input_task_id
        )
        self.sending = True
        self._emit(conversation.add_user_message(message))
        try:
            async for event in self.client.stream(message):
                self._emit(conversation.apply(event))
        except ClientError as exc:
            self._emit(conversation.add_error(str(exc)))
            raise
        finally:
            self.sending = False
            self._emit(conversation.end_turn())

    # -- rewind ------------------------------------------------------------------------------
    def _require_rewind(self) -> None:
        caps = self.client.capabilities
        if caps is None or not caps.can_rewind:
            raise Unsupported(caps.why_no_rewind() if caps else "not connected")
        if self.rewinding:
            raise Busy("a rewind is already in flight")
        if self.sending:
            raise Busy("wait for the current turn to finish")

    async def rewind(self, invocation_id: str, text: str | None = None) -> None:
        """Rewind before ``invocation_id`` (and, with ``text``, send it as the next turn).

        The view is truncated at once; the server's answer then becomes the view; on any failure
        the view is rolled back exactly and the error re-raised.
        """
        await self._rewind(invocation_id, text, token=None)

    async def _rewind(self, invocation_id: str, text: str | None, token: RewindToken | None) -> None:
        self._require_rewind()
        conversation = self.conversation
        if token is None:
            token, change = conversation.truncate_before(invocation_id)
            self._emit(change)
        self.rewinding = True
        self._rewound = False
        followup: str | None = None
        try:
            followup = await self._rewind_on_server(invocation_id, text)
        except BaseException as exc:
            if self._rewound:
                # the rewind itself went through; what failed is the turn sent after it
                if isinstance(exc, ClientError):
                    self._emit(conversation.add_error(str(exc)))
                raise
            self._emit(conversation.rollback(token))
            if isinstance(exc, ClientError) and not isinstance(exc, RewindFailed):
                raise RewindFailed(f"rewind failed: {exc}") from exc
            raise
        finally:
            self.rewinding = False
            self._emit(conversation.end_turn())
        if followup:
            await self.refresh()
            await self.send(followup)
        await self.refresh()

    async def _rewind_on_server(self, invocation_id: str, text: str | None) -> str | None:
        """Do the rewind; returns text still to be sent as the next turn (REST mode)."""
        conversation = self.conversation
        caps = self.client.capabilities
        assert caps is not None and conversation.session_id is not None
        if caps.rewind_mode == "rest":
            await self.client.rewind_rest(conversation.session_id, invocation_id)
            self._rewound = True
            return text or None
        message = self.client.rewind_message(conversation.session_id, invocation_id, text)
        if text:
            self._emit(conversation.add_user_message(message))
        async for event in self.client.rewind_stream(message):
            if not self._rewound:
                failure = _failure_text(event)
                if failure is not None:
                    raise RewindFailed(f"rewind failed: {failure}")
                if _is_effective_history(event):
                    self._rewound = True
                    self._emit(conversation.apply(event, effective=True))
                    continue
            self._emit(conversation.apply(event))
        if not self._rewound:
            raise RewindFailed("rewind failed: the server did not send the rewound history")
        return None

    # -- edit and resend ---------------------------------------------------------------------
    def begin_edit(self, invocation_id: str) -> str:
        """Truncate the view before a turn and return its user text for the composer. Nothing is
        sent until :meth:`send` (rewind-and-send); :meth:`cancel_edit` puts the view back."""
        self._require_rewind()
        if self.edit is not None:
            self.cancel_edit()
        text = self.conversation.user_text_of(invocation_id)
        token, change = self.conversation.truncate_before(invocation_id)
        self.edit = PendingEdit(invocation_id, token, text)
        self._emit(change)
        return text

    def cancel_edit(self) -> None:
        if self.edit is not None:
            edit, self.edit = self.edit, None
            self._emit(self.conversation.rollback(edit.token))

    # -- fork --------------------------------------------------------------------------------
    async def fork(self, invocation_id: str) -> Session:
        """Fork a new session holding what came before ``invocation_id``, and open it."""
        if self.rewinding or self.sending:
            raise Busy("wait for the current request to finish")
        assert self.session_id is not None
        session = await self.client.fork(self.session_id, invocation_id)
        await self.open(session.id)
        return session
