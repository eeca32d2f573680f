"""The A2A side: an a2a-sdk ``RequestHandler`` over :class:`AgentService`.

a2a-sdk's ``JsonRpcDispatcher`` (with ``enable_v0_3_compat=True``) parses both dialects on
one endpoint -- A2A 1.0 (``SendStreamingMessage``, header ``A2A-Version: 1.0``) and 0.3
(``message/stream``, ``message/send``, ``tasks/get`` ... with ``kind`` fields) -- converts them
to the 1.0 protos this handler receives, and renders the protos this handler yields back in
the caller's dialect. JSON-RPC errors (parse, invalid request, unknown method, version) are the
dispatcher's.

This handler is used instead of a2a-sdk's ``DefaultRequestHandler`` because that one drives an
``AgentExecutor`` through an ``ActiveTask`` that ends the stream at the first terminal state:
rewind-and-send (a completed rewind Task followed by the next turn in the same stream) does
not fit it. What the spec asks of a handler, it does here:

* ``SendMessage``/``SendStreamingMessage``: a ``taskId`` of an unknown task is
  TaskNotFound (-32001), of a finished one UnsupportedOperation (-32004), with a ``contextId``
  of another session InvalidParams (-32602). A task waiting for approval (``input-required``)
  takes the answer to its question (a ``decision_type`` data part) and nothing else.
* ``GetTask``/``ListTasks``: ``historyLength`` below 0, ``pageSize`` outside 1..100 and a
  ``pageToken`` that is not one of ours are InvalidParams; ``ListTasks`` filters by context,
  status and update time, newest first, with cursor pagination.
* ``SubscribeToTask``: a running turn's Task now, then its events; an unknown task is
  TaskNotFound; a finished one UnsupportedOperation in 1.0 (spec §3.1.6), and its final Task
  for a 0.3 ``tasks/resubscribe`` (a client resuming a cut stream gets the outcome).
"""

from __future__ import annotations

import json
from collections.abc import AsyncGenerator
from dataclasses import replace
from typing import Any

from a2a.server.context import ServerCallContext
from a2a.server.request_handlers.request_handler import RequestHandler, validate_request_params
from a2a.server.routes.common import DefaultServerCallContextBuilder
from a2a.types import a2a_pb2 as pb
from a2a.utils.constants import DEFAULT_LIST_TASKS_PAGE_SIZE, MAX_LIST_TASKS_PAGE_SIZE
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
from rewindtui.a2a.outgoing import APPROVE, DECISION_KEY, REJECT
from rewindtui.server.http.team_turns import TeamTurns
from rewindtui.server.http.users import InvalidUser, resolve_user
from rewindtui.server.service.agent_service import AgentService
from rewindtui.server.service.requests import Kind, classify
from rewindtui.server.service.requests import Request as A2ARequest
from rewindtui.server.shared.errors import BadRequest, Conflict, NotFound
from rewindtui.server.shared.wire import EFFECTIVE_HISTORY_KEY, event_to_proto, message_from_proto, task_to_proto
from rewindtui.server.storage.store import InvalidPageToken, task_json

USER_STATE_KEY = "rewindtui_user_id"
USER_ERROR_KEY = "rewindtui_user_error"
#: ``request.state`` key set by the endpoint: the A2A version a headerless request is served as
VERSION_STATE_KEY = "rewindtui_a2a_version"
RESUBSCRIBE_03 = "tasks/resubscribe"
#: the one state in which a task takes a message: a tool call waits for the user's approval
WAITING_STATE = "input-required"

_STATE_FROM_PB = {
    pb.TASK_STATE_SUBMITTED: "submitted",
    pb.TASK_STATE_WORKING: "working",
    pb.TASK_STATE_COMPLETED: "completed",
    pb.TASK_STATE_FAILED: "failed",
    pb.TASK_STATE_CANCELED: "canceled",
    pb.TASK_STATE_INPUT_REQUIRED: "input-required",
    pb.TASK_STATE_REJECTED: "rejected",
    pb.TASK_STATE_AUTH_REQUIRED: "auth-required",
}


class UserContextBuilder(DefaultServerCallContextBuilder):
    """Adds the request's user id (``X-User-Id`` / ``user_id``) to the call context, and the A2A
    version the endpoint decided for a request that named a 1.0 method without the header."""

    def build(self, request: Request) -> ServerCallContext:
        context = super().build(request)
        try:
            context.state[USER_STATE_KEY] = resolve_user(request)
        except InvalidUser as exc:
            context.state[USER_ERROR_KEY] = str(exc)
        version = getattr(request.state, VERSION_STATE_KEY, None)
        headers = context.state.get("headers")
        if version and isinstance(headers, dict):
            headers["a2a-version"] = version
        return context


def _user(context: ServerCallContext) -> str:
    error = context.state.get(USER_ERROR_KEY)
    if error:
        raise InvalidParamsError(message=error)
    return str(context.state.get(USER_STATE_KEY) or "local")


def precheck(body: Any) -> InvalidParamsError | None:
    """What a2a-sdk's lenient parsing would let through: an unknown ``ListTasks`` status (it
    becomes "unspecified", i.e. no filter at all)."""
    if not isinstance(body, dict) or body.get("method") != "ListTasks" or not isinstance(body.get("params"), dict):
        return None
    status = body["params"].get("status")
    if status is None:
        return None
    known = status in pb.TaskState.keys() if isinstance(status, str) else status in pb.TaskState.values()
    if isinstance(status, bool) or not known:
        return InvalidParamsError(message=f"unknown status {status!r}: use one of {', '.join(pb.TaskState.keys())}")
    return None


def _check_history_length(params: Any) -> None:
    if params is not None and params.history_length < 0:
        raise InvalidParamsError(message=f"historyLength must be 0 or more, not {params.history_length}")


class AgentRequestHandler(RequestHandler):
    def __init__(self, service: AgentService) -> None:
        self.service = service
        #: a team server: following and cancelling turns that run on another replica (team_turns.py)
        self.team_turns: TeamTurns | None = None

    async def _request(self, user_id: str, params: pb.SendMessageRequest) -> A2ARequest:
        """The classified message; errors for a taskId that cannot take it. Only a task waiting
        for approval (``input-required``) takes a message, and only the answer to its question."""
        _check_history_length(params.configuration)
        message = params.message
        waiting = None
        if message.task_id:
            try:
                row = await self.service.owned_task(user_id, message.task_id)
            except NotFound:
                raise TaskNotFoundError(message=f"Task {message.task_id} not found") from None
            if message.context_id and message.context_id != row.session_id:
                raise InvalidParamsError(
                    message=f"contextId {message.context_id} is not the context of task {message.task_id}"
                )
            if row.state in TERMINAL_STATES:
                raise UnsupportedOperationError(
                    message=f"Task {message.task_id} is {row.state}; send a new message in its context instead"
                )
            if row.state != WAITING_STATE:
                raise InvalidParamsError(
                    message=f"Task {message.task_id} is {row.state}; this agent does not take input for a running task"
                )
            waiting = row
        try:
            request = classify(message_from_proto(message))
        except BadRequest as exc:
            raise InvalidParamsError(message=exc.message) from None
        if waiting is None:
            return request
        if request.kind is not Kind.ANSWER:
            raise InvalidParamsError(
                message=f"Task {message.task_id} waits for approval of a tool call: answer it with a data part "
                f'{{"{DECISION_KEY}": "{APPROVE}"}} or {{"{DECISION_KEY}": "{REJECT}"}}'
            )
        return replace(request, context_id=waiting.session_id)

    @validate_request_params
    async def on_message_send_stream(
        self, params: pb.SendMessageRequest, context: ServerCallContext
    ) -> AsyncGenerator[Any, None]:
        user_id = _user(context)
        request = await self._request(user_id, params)
        async for event in self.service.handle(user_id, request, streaming=True):
            yield event_to_proto(event)

    @validate_request_params
    async def on_message_send(self, params: pb.SendMessageRequest, context: ServerCallContext) -> pb.Task:
        user_id = _user(context)
        request = await self._request(user_id, params)
        rewind_task: dict[str, Any] | None = None
        turn_task_id: str | None = None
        refused: dict[str, Any] | None = None
        async for event in self.service.handle(user_id, request, streaming=False):
            if event.get("kind") == "task":
                if (event.get("metadata") or {}).get(EFFECTIVE_HISTORY_KEY):
                    rewind_task = event
                else:
                    turn_task_id = event["id"]
            elif event.get("kind") == "status-update" and event.get("final") and turn_task_id is None:
                refused = event
        if turn_task_id is not None:
            task = task_to_proto(json.loads(await self.service.task_json(user_id, turn_task_id)))
        elif rewind_task is not None and refused is None:
            task = task_to_proto(rewind_task)
        else:
            assert refused is not None, "handle() always ends with an event"
            # A refused request: reported as a failed task (it is not stored).
            task = task_to_proto(
                {
                    "kind": "task",
                    "id": refused["taskId"],
                    "contextId": refused.get("contextId", ""),
                    "status": refused["status"],
                    "metadata": refused.get("metadata"),
                }
            )
        return apply_history_length(task, params.configuration)

    @validate_request_params
    async def on_get_task(self, params: pb.GetTaskRequest, context: ServerCallContext) -> pb.Task | None:
        user_id = _user(context)
        _check_history_length(params)
        try:
            data = json.loads(await self.service.task_json(user_id, params.id))
        except NotFound:
            raise TaskNotFoundError from None
        return apply_history_length(task_to_proto(data), params)

    @validate_request_params
    async def on_list_tasks(self, params: pb.ListTasksRequest, context: ServerCallContext) -> pb.ListTasksResponse:
        user_id = _user(context)
        _check_history_length(params)
        page_size = DEFAULT_LIST_TASKS_PAGE_SIZE
        if params.HasField("page_size"):
            if not 1 <= params.page_size <= MAX_LIST_TASKS_PAGE_SIZE:
                raise InvalidParamsError(
                    message=f"pageSize must be between 1 and {MAX_LIST_TASKS_PAGE_SIZE}, not {params.page_size}"
                )
            page_size = params.page_size
        state = None
        if params.status != pb.TASK_STATE_UNSPECIFIED:
            state = _STATE_FROM_PB.get(params.status)
            if state is None:
                raise InvalidParamsError(message=f"unknown status filter {params.status}")
        after = None
        if params.HasField("status_timestamp_after"):
            after = params.status_timestamp_after.ToJsonString()
        try:
            page, histories = await self.service.list_tasks(
                user_id,
                context_id=params.context_id or None,
                state=state,
                updated_after=after,
                page_size=page_size,
                page_token=params.page_token,
            )
        except InvalidPageToken as exc:
            raise InvalidParamsError(message=str(exc)) from None
        # pageSize: the size of this page (the tasks in it), as the TCK reads the proto's "page size
        # used for this response"
        response = pb.ListTasksResponse(
            page_size=len(page.tasks), total_size=page.total, next_page_token=page.next_token
        )
        for row in page.tasks:
            task = task_to_proto(json.loads(task_json(row, histories[row.id])))
            if not params.include_artifacts:
                task.ClearField("artifacts")
            response.tasks.append(apply_history_length(task, params))
        return response

    @validate_request_params
    async def on_cancel_task(self, params: pb.CancelTaskRequest, context: ServerCallContext) -> pb.Task | None:
        user_id = _user(context)
        try:
            row = await self.service.owned_task(user_id, params.id)
            if self.team_turns is not None and self.team_turns.runs_elsewhere(row.state, params.id):
                data = json.loads(await self.team_turns.cancel(user_id, params.id))  # another replica's turn
            else:
                data = json.loads(await self.service.cancel_task(user_id, params.id))
        except NotFound:
            raise TaskNotFoundError from None
        except Conflict as exc:
            raise TaskNotCancelableError(message=exc.message) from None
        return task_to_proto(data)

    @validate_request_params
    async def on_subscribe_to_task(
        self, params: pb.SubscribeToTaskRequest, context: ServerCallContext
    ) -> AsyncGenerator[Any, None]:
        user_id = _user(context)
        try:
            row = await self.service.owned_task(user_id, params.id)
        except NotFound:
            raise TaskNotFoundError(message=f"Task {params.id} not found") from None
        live = self.service.live_task(params.id)
        if live is not None:
            async for event in live.follow():
                yield event_to_proto(event)
            return
        if self.team_turns is not None and self.team_turns.runs_elsewhere(row.state, params.id):
            async for event in self.team_turns.follow(user_id, params.id):  # running on another replica
                yield event_to_proto(event) if isinstance(event, dict) else event
            return
        if row.state in TERMINAL_STATES and context.state.get("method") != RESUBSCRIBE_03:
            raise UnsupportedOperationError(
                message=f"Task {params.id} is {row.state}: there is nothing more to stream; read it with GetTask"
            )
        yield task_to_proto(json.loads(await self.service.task_json(user_id, params.id)))

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
