"""A server with users (``rewindtui serve --users``) over gRPC: the same tokens, users and shares as
over HTTP (:mod:`.team_users`).

* The door: every call carries the metadata ``authorization: Bearer rwt_…``, a user's token
  (:meth:`~.team_users.TeamDoor.user`), or ends ``UNAUTHENTICATED`` (the listener's interceptor,
  :mod:`.grpc_listener`). ``x-user-id`` is ignored: the token says who the caller is.
* :class:`UserScopedHandler` wraps the request handler the HTTP bindings use and runs each call as
  that user -- or as a session's owner when the call names the session (a message's
  ``context_id``; ``GetTask``/``SubscribeToTask``/``CancelTask`` by the task's session) and the
  user has a share that allows it: ``read`` for ``GetTask`` and ``SubscribeToTask``, ``write``
  for everything. The same rules as :class:`~.team_users.UserTokens` applies to a JSON-RPC body.
  A change asked with a ``read`` share ends ``INVALID_ARGUMENT`` saying the session is shared
  read-only (a2a-sdk maps its errors to gRPC codes and has no permission error).
"""

from __future__ import annotations

from collections.abc import AsyncGenerator
from typing import Any

from a2a.server.context import ServerCallContext
from a2a.server.request_handlers.request_handler import RequestHandler
from a2a.types import a2a_pb2 as pb

from rewindtui.server.http.handler import USER_ERROR_KEY, USER_STATE_KEY
from rewindtui.server.http.team_users import TeamDoor
from rewindtui.server.storage.team_store import READ, WRITE

#: the call context's state key of the call's bearer token (put there by the listener)
BEARER_STATE_KEY = "rewindtui_bearer_token"
UNAUTHENTICATED_TEXT = (
    "this server has users: send the metadata authorization: Bearer <your token> (rewindtui team token NAME makes one)"
)


def bearer_of(authorization: str | None) -> str:
    """The token of an ``authorization`` value ``Bearer <token>`` ("" for anything else)."""
    scheme, _, value = (authorization or "").partition(" ")
    return value.strip() if scheme.lower() == "bearer" else ""


class UserScopedHandler(RequestHandler):
    """``inner``, each call as its token's user, or the named session's owner under a share."""

    def __init__(self, inner: RequestHandler, door: TeamDoor) -> None:
        self.inner = inner
        self.door = door

    async def _as(self, context: ServerCallContext, session_id: str | None, needs: str) -> ServerCallContext:
        user = await self.door.user(str(context.state.get(BEARER_STATE_KEY) or ""))
        if user is None:  # the interceptor let no such call in; a token revoked in between
            context.state[USER_ERROR_KEY] = UNAUTHENTICATED_TEXT
            return context
        refused = await self.door.read_only(user, session_id, needs) if session_id else None
        if refused is not None:  # a read share asked to change: refused in those words (nothing runs)
            context.state[USER_ERROR_KEY] = refused
            return context
        acting = await self.door.acting_user(user, session_id, needs) if session_id else user
        context.state.pop(USER_ERROR_KEY, None)  # x-user-id is not asked here
        context.state[USER_STATE_KEY] = acting
        return context

    async def _as_for_task(self, context: ServerCallContext, task_id: str, needs: str) -> ServerCallContext:
        return await self._as(context, await self.door.task_session(task_id) if task_id else None, needs)

    async def on_message_send(self, params: pb.SendMessageRequest, context: ServerCallContext) -> Any:
        context = await self._as(context, params.message.context_id or None, WRITE)
        return await self.inner.on_message_send(params, context)

    async def on_message_send_stream(
        self, params: pb.SendMessageRequest, context: ServerCallContext
    ) -> AsyncGenerator[Any, None]:
        context = await self._as(context, params.message.context_id or None, WRITE)
        async for event in self.inner.on_message_send_stream(params, context):
            yield event

    async def on_get_task(self, params: pb.GetTaskRequest, context: ServerCallContext) -> Any:
        return await self.inner.on_get_task(params, await self._as_for_task(context, params.id, READ))

    async def on_list_tasks(self, params: pb.ListTasksRequest, context: ServerCallContext) -> Any:
        return await self.inner.on_list_tasks(params, await self._as(context, None, READ))  # one's own

    async def on_cancel_task(self, params: pb.CancelTaskRequest, context: ServerCallContext) -> Any:
        return await self.inner.on_cancel_task(params, await self._as_for_task(context, params.id, WRITE))

    async def on_subscribe_to_task(
        self, params: pb.SubscribeToTaskRequest, context: ServerCallContext
    ) -> AsyncGenerator[Any, None]:
        context = await self._as_for_task(context, params.id, READ)
        async for event in self.inner.on_subscribe_to_task(params, context):
            yield event

    # push configs: one's own tasks only (as over HTTP, where a share covers no push call)
    async def on_create_task_push_notification_config(self, params: Any, context: ServerCallContext) -> Any:
        return await self.inner.on_create_task_push_notification_config(params, await self._as(context, None, WRITE))

    async def on_get_task_push_notification_config(self, params: Any, context: ServerCallContext) -> Any:
        return await self.inner.on_get_task_push_notification_config(params, await self._as(context, None, READ))

    async def on_list_task_push_notification_configs(self, params: Any, context: ServerCallContext) -> Any:
        return await self.inner.on_list_task_push_notification_configs(params, await self._as(context, None, READ))

    async def on_delete_task_push_notification_config(self, params: Any, context: ServerCallContext) -> None:
        await self.inner.on_delete_task_push_notification_config(params, await self._as(context, None, WRITE))

    async def on_get_extended_agent_card(self, params: Any, context: ServerCallContext) -> Any:
        return await self.inner.on_get_extended_agent_card(params, context)
