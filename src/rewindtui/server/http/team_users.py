"""Users of a team server (``rewindtui serve --users``): who a request is comes from its token.

An ASGI middleware inside :class:`~rewindtui.server.http.guard.Guard`. Every request but the agent
card must carry ``Authorization: Bearer rwt_…``, a token made by ``rewindtui team token``
(:mod:`rewindtui.server.storage.team_store`: only its SHA-256 is stored); an unknown or missing
token is a 401. The request then goes on as that user: its ``X-User-Id`` header is replaced by the
token's user (a ``user_id`` in the query is ignored, the header wins), so every session and task the
server hands out is the token's user's, as ``X-User-Id`` separates them on a solo server
(:mod:`.users`) -- except that here it cannot be chosen.

**Shares.** A session belongs to the user who made it. Its owner shares it with another user,
``read`` or ``write`` (``POST /api/sessions/{id}/shares`` ``{"user": …, "mode": …}``, or
``rewindtui team share``). A request of that other user that names the session -- a REST path
``/api/sessions/{id}…``, an A2A message whose ``contextId`` is it, or a task call (get, subscribe,
cancel) whose task is in it -- then runs as the owner, when the share allows it: ``read`` allows
reading (REST ``GET``, ``tasks/get``/``GetTask``, ``tasks/resubscribe``/``SubscribeToTask``),
``write`` everything (a turn, a rewind, a redo, a fork, a rename, a cancel, a delete); a change
asked with a ``read`` share is refused with a 403 that says so (nothing is sent on). Without a
share another user's session is unknown to them (404), as before. Listing sessions lists one's own.
"""

from __future__ import annotations

import hmac
import json
import re
import time
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any

from rewindtui.server.http.users import USER_HEADER
from rewindtui.server.shared.paths import AGENT_PATH
from rewindtui.server.storage.store import Store
from rewindtui.server.storage.team_store import READ, WRITE, TeamStore

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]

_SESSION_PATH = re.compile(r"^/api/sessions/([^/]+)(/.*)?$")
_SHARES_PATH = re.compile(r"^/api/sessions/([^/]+)/shares$")
_READ_METHODS = frozenset({"tasks/get", "GetTask", "tasks/resubscribe", "SubscribeToTask"})
_TASK_METHODS = _READ_METHODS | {"tasks/cancel", "CancelTask"}
_MESSAGE_METHODS = frozenset({"message/send", "message/stream", "SendMessage", "SendStreamingMessage"})
_NO_TOKEN = "this server has users: send Authorization: Bearer <your token> (rewindtui team token NAME makes one)"
_UNKNOWN_TOKEN = (
    "this server does not know the bearer token sent (mistyped, revoked, or made for another server):"
    " ask for a new one (rewindtui team token NAME)"
)
#: seconds a token's user is remembered (a revoked token stops working within this)
TOKEN_CACHE_SECONDS = 5.0
MAX_BODY = 64 * 1024 * 1024


class TeamDoor:
    """Who a token is, and as whom a request on a session runs (its shares): the one place both
    bindings ask, HTTP (:class:`UserTokens`) and gRPC (:mod:`.grpc_users`)."""

    def __init__(self, team: TeamStore, store: Store) -> None:
        self.team = team
        self.store = store
        self._cache: dict[str, tuple[str, float]] = {}

    async def user(self, token: str) -> str | None:
        """The user of ``token`` (remembered :data:`TOKEN_CACHE_SECONDS`), or None."""
        now = time.monotonic()
        cached = self._cache.get(token)
        if cached is not None and cached[1] > now:
            return cached[0]
        user = await self.team.user_of(token) if token else None
        if user is not None:
            if len(self._cache) > 10_000:
                self._cache.clear()
            self._cache[token] = (user, now + TOKEN_CACHE_SECONDS)
        return user

    async def task_session(self, task_id: str) -> str | None:
        row = await self.store.get_task(task_id)
        return row.session_id if row is not None else None

    async def acting_user(self, user: str, session_id: str, needs: str) -> str:
        """The owner of ``session_id`` when ``user`` has a share that allows ``needs``; else ``user``
        (whose own session it is, or to whom it is unknown)."""
        session = await self.store.get_session(session_id)
        if session is None or session.user_id == user:
            return user
        mode = await self.team.share_of(session_id, user)
        if mode == WRITE or (mode == READ and needs == READ):
            return session.user_id
        return user

    async def read_only(self, user: str, session_id: str, needs: str) -> str | None:
        """Why ``user`` may not change ``session_id`` when a read share is all they have (the
        sentence to answer with), else None: a refusal in true words, not "not found", to someone
        who can read the session."""
        if needs != WRITE:
            return None
        session = await self.store.get_session(session_id)
        if session is None or session.user_id == user or await self.team.share_of(session_id, user) != READ:
            return None
        return (
            f"session {session_id!r} is shared with you read-only: you can read it, not change it "
            f"(ask its owner, {session.user_id}, for a write share)"
        )


class UserTokens:
    """See the module's docstring."""

    def __init__(self, app: ASGIApp, *, team: TeamStore, store: Store, public_paths: frozenset[str]) -> None:
        self.app = app
        self.team = team
        self.store = store
        self.public_paths = public_paths
        self.door = TeamDoor(team, store)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope.get("path", "") in self.public_paths:
            await self.app(scope, receive, send)
            return
        headers = [(k, v) for k, v in scope.get("headers") or [] if k.lower() != USER_HEADER.lower().encode()]
        auth = next((v.decode("latin-1") for k, v in headers if k.lower() == b"authorization"), "")
        scheme, _, token = auth.partition(" ")
        user = await self._user(token.strip()) if scheme.lower() == "bearer" else None
        if user is None:
            sent = scheme.lower() == "bearer" and bool(token.strip())
            await _answer(
                send, 401, _UNKNOWN_TOKEN if sent else _NO_TOKEN, {"www-authenticate": 'Bearer realm="rewindtui"'}
            )
            return
        path = scope.get("path", "")
        method = scope.get("method", "GET")
        shares = _SHARES_PATH.match(path)
        if shares and method == "POST":
            await self._share(scope, receive, send, user, shares.group(1))
            return
        body = b""
        session_id: str | None = None
        needs = READ if method in ("GET", "HEAD") else WRITE
        match = _SESSION_PATH.match(path)
        if match:
            session_id = match.group(1)
        elif method == "POST" and path in (AGENT_PATH, AGENT_PATH.rstrip("/")):
            body = await _read_body(receive)
            session_id, needs = await self._a2a_target(body)
        acting = user
        if session_id is not None:
            refused = await self.door.read_only(user, session_id, needs)
            if refused is not None:
                await _answer(send, 403, refused)
                return
            acting = await self._acting_user(user, session_id, needs)
        scope = dict(scope)
        scope["headers"] = [*headers, (USER_HEADER.lower().encode(), acting.encode())]
        if body:
            await self.app(scope, _replay(body, receive), send)
        else:
            await self.app(scope, receive, send)

    async def _user(self, token: str) -> str | None:
        return await self.door.user(token)

    async def _a2a_target(self, body: bytes) -> tuple[str | None, str]:
        """The session a JSON-RPC request names, and what it needs of it (read or write)."""
        try:
            data = json.loads(body)
        except ValueError:
            return None, WRITE
        if not isinstance(data, dict):
            return None, WRITE
        method, params = data.get("method"), data.get("params")
        if not isinstance(params, dict):
            return None, WRITE
        if method in _MESSAGE_METHODS:
            message = params.get("message")
            context = message.get("contextId") if isinstance(message, dict) else None
            return (context if isinstance(context, str) else None), WRITE
        if method in _TASK_METHODS:
            task_id = params.get("id")
            if not isinstance(task_id, str):
                return None, WRITE
            return await self.door.task_session(task_id), (READ if method in _READ_METHODS else WRITE)
        return None, WRITE

    async def _acting_user(self, user: str, session_id: str, needs: str) -> str:
        return await self.door.acting_user(user, session_id, needs)

    async def _share(self, scope: Scope, receive: Receive, send: Send, user: str, session_id: str) -> None:
        try:
            data = json.loads(await _read_body(receive))
        except ValueError:
            data = None
        other = data.get("user") if isinstance(data, dict) else None
        mode = data.get("mode", READ) if isinstance(data, dict) else None
        if not isinstance(other, str) or not other or mode not in (READ, WRITE):
            await _answer(send, 400, 'send {"user": NAME, "mode": "read" or "write"}')
            return
        session = await self.store.get_session(session_id)
        if session is None or session.user_id != user:
            await _answer(send, 404, f"session {session_id!r} not found (only its owner shares it)")
            return
        if hmac.compare_digest(other, user):
            await _answer(send, 400, "a session is its owner's already: share it with another user")
            return
        if not await self.team.has_user(other):  # a typo, or a name no token was ever made for
            await _answer(send, 400, f"no user named {json.dumps(other)} (rewindtui team token NAME makes one)")
            return
        await self.team.share(session_id, other, mode)
        await _answer(send, 201, None, data={"session_id": session_id, "user": other, "mode": mode})


async def _read_body(receive: Receive) -> bytes:
    chunks: list[bytes] = []
    size = 0
    while True:
        message = await receive()
        chunk = message.get("body", b"")
        size += len(chunk)
        if size > MAX_BODY:
            raise ValueError("request body too large")
        chunks.append(chunk)
        if not message.get("more_body"):
            return b"".join(chunks)


def _replay(body: bytes, receive: Receive) -> Receive:
    sent = False

    async def again() -> Message:
        nonlocal sent
        if not sent:
            sent = True
            return {"type": "http.request", "body": body, "more_body": False}
        return await receive()  # the disconnect, when it comes

    return again


async def _answer(
    send: Send, status: int, error: str | None, extra: dict[str, str] | None = None, *, data: Any = None
) -> None:
    payload = {"error": error} if error is not None else {"error": False, "data": data}
    raw = json.dumps(payload).encode()
    headers = [(b"content-type", b"application/json"), (b"content-length", str(len(raw)).encode())]
    headers += [(k.encode(), v.encode()) for k, v in (extra or {}).items()]
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": raw})
