"""The A2A side: an a2a-sdk ``RequestHandler`` over :class:`AgentService`.

a2a-sdk's ``JsonRpcDispatcher`` (with ``enable_v0_3_compat=True``) parses both
dialects on one endpoint -- A2A 1.0 (``SendStreamingMessage``, header
``A2A-Version: 1.0``) and 0.3 (``message/stream``, ``message/send``,
``tasks/get`` ... with ``kind`` fields) -- converts them to the 1.0 protos this
handler receives, and renders the protos this handler yields back in the
caller's dialect. JSON-RPC errors (parse, invalid request, unknown method,
version) are the dispatcher's.

This handler is used instead of a2a-sdk's ``DefaultRequestHandler`` because
that one drives an ``AgentExecutor`` through an ``ActiveTask`` that requires a
Task event first and ends the stream at the first terminal state: neither
kagent's event order (a ``submitted`` status echoing the user message first)
nor rewind-and-send (a completed rewind Task followed by the next turn's
events in the same stream) fits it.
"""

from __future__ import annotations

import json
from collections.abc import AsyncGenerator
from typing import Any

from a2a.server.context import ServerCallContext
from a2a.server.request_handlers.request_handler import RequestHandler, validate_request_params
from a2a.server.routes.common import DefaultServerCallContextBuilder
from a2a.types import a2a_pb2 as pb
from a2a.utils.errors import (
    InvalidParamsError,
    PushNotificationNotSupportedError,
    TaskNotCancelableError,
    TaskNotFoundError,
    UnsupportedOperationError,
)
from a2a.utils.task import apply_history_length
from starlette.requests import Request

from rewindtui.a2a.dialect import TERMINAL_STATES
from rewindtui.server.errors import Conflict, NotFound
from rewindtui.server.executor import AgentService
from rewindtui.server.users import InvalidUser, resolve_user
from rewindtui.server.wire import event_to_proto, message_from_proto, task_to_proto

USER_STATE_KEY = "rewindtui_user_id"
USER_ERROR_KEY = "rewindtui_user_error"


class UserContextBuilder(DefaultServerCallContextBuilder):
    """Adds the request's user id (``X-User-Id`` / ``user_id``) to the call context."""

    def build(self, request: Request) -> ServerCallContext:
        context = super().build(request)
        try:
            context.state[USER_STATE_KEY] = resolve_user(request)
        except InvalidUser as exc:
            context.state[USER_ERROR_KEY] = str(exc)
        return context


def _user(context: ServerCallContext) -> str:
    error = context.state.get(USER_ERROR_KEY)
    if error:
        raise InvalidParamsError(message=error)
    return str(context.state.get(USER_STATE_KEY) or "local")


class AgentRequestHandler(RequestHandler):
    def __init__(self, service: AgentService) -> None:
        self.service = service

    async def _check_task_reference(self, user_id: str, message: pb.Message) -> None:
        """A message naming a taskId: only a running task could take it, and none can."""
        if not message.task_id:
            return
        try:
            state = await self.service.task_state(user_id, message.task_id)
        except NotFound:
            raise TaskNotFoundError(message=f"Task {message.task_id} not found") from None
        if state in TERMINAL_STATES:
            raise InvalidParamsError(message=f"Task {message.task_id} is in terminal state: {state}")
        raise InvalidParamsError(
            message=f"Task {message.task_id} is {state}; this agent does not take input for a running task"
        )

    @validate_request_params
    async def on_message_send_stream(
        self, params: pb.SendMessageRequest, context: ServerCallContext
    ) -> AsyncGenerator[Any, None]:
        user_id = _user(context)
        await self._check_task_reference(user_id, params.message)
        message = message_from_proto(params.message)
        async for event in self.service.handle_message(user_id, message, streaming=True):
            yield event_to_proto(event)

    @validate_request_params
    async def on_message_send(self, params: pb.SendMessageRequest, context: ServerCallContext) -> pb.Task:
        user_id = _user(context)
        await self._check_task_reference(user_id, params.message)
        message = message_from_proto(params.message)
        result: dict[str, Any] | None = None
        turn_task_id: str | None = None
        async for event in self.service.handle_message(user_id, message, streaming=False):
            kind = event.get("kind")
            if kind == "task":
                result = event
            elif kind == "status-update":
                if event["status"]["state"] == "submitted":
                    turn_task_id = event["taskId"]
                elif event.get("final"):
                    result = event
        if turn_task_id is not None:
            task = task_to_proto(json.loads(await self.service.task_json(user_id, turn_task_id)))
        elif result is not None and result.get("kind") == "task":
            task = task_to_proto(result)
        elif result is not None:
            # A refused request: report it as a failed task (it is not stored).
            task = task_to_proto(
                {
                    "kind": "task",
                    "id": result["taskId"],
                    "contextId": result.get("contextId", ""),
                    "status": result["status"],
                    "metadata": result.get("metadata"),
                }
            )
        else:  # pragma: no cover - handle_message always ends with an event
            raise UnsupportedOperationError(message="no result")
        return apply_history_length(task, params.configuration)

    @validate_request_params
    async def on_get_task(self, params: pb.GetTaskRequest, context: ServerCallContext) -> pb.Task | None:
        user_id = _user(context)
        try:
            data = json.loads(await self.service.task_json(user_id, params.id))
        except NotFound:
            raise TaskNotFoundError from None
        return apply_history_length(task_to_proto(data), params)

    @validate_request_params
    async def on_list_tasks(self, params: pb.ListTasksRequest, context: ServerCallContext) -> pb.ListTasksResponse:
        user_id = _user(context)
        if params.context_id:
            try:
                raw = await self.service.session_tasks_json(user_id, params.context_id)
            except NotFound:
                raw = "[]"
            tasks = json.loads(raw)
        else:
            tasks = []
            for session in await self.service.list_sessions(user_id):
                tasks.extend(json.loads(await self.service.session_tasks_json(user_id, session.id)))
        page_size = params.page_size if params.HasField("page_size") and params.page_size > 0 else 50
        selected = tasks[-page_size:]
        response = pb.ListTasksResponse(page_size=page_size, total_size=len(tasks))
        for data in selected:
            task = task_to_proto(data)
            if not params.include_artifacts:
                task.ClearField("artifacts")
            response.tasks.append(apply_history_length(task, params))
        return response

    @validate_request_params
    async def on_cancel_task(self, params: pb.CancelTaskRequest, context: ServerCallContext) -> pb.Task | None:
        user_id = _user(context)
        try:
            data = json.loads(await self.service.cancel_task(user_id, params.id))
        except NotFound:
            raise TaskNotFoundError from None
        except Conflict as exc:
            raise TaskNotCancelableError(message=exc.message) from None
        return task_to_proto(data)

    async def on_subscribe_to_task(
        self, params: pb.SubscribeToTaskRequest, context: ServerCallContext
    ) -> AsyncGenerator[Any, None]:
        raise UnsupportedOperationError(message="resubscribing to a task is not supported")
        yield  # pragma: no cover

    async def on_create_task_push_notification_config(self, params: Any, context: ServerCallContext) -> Any:
        raise PushNotificationNotSupportedError

    async def on_get_task_push_notification_config(self, params: Any, context: ServerCallContext) -> Any:
        raise PushNotificationNotSupportedError

    async def on_list_task_push_notification_configs(self, params: Any, context: ServerCallContext) -> Any:
        raise PushNotificationNotSupportedError

    async def on_delete_task_push_notification_config(self, params: Any, context: ServerCallContext) -> None:
        raise PushNotificationNotSupportedError

    async def on_get_extended_agent_card(self, params: Any, context: ServerCallContext) -> Any:
        raise UnsupportedOperationError(message="this agent has no extended agent card")
