"""Push notifications (A2A ``TaskPushNotificationConfig``): a turn that runs longer than the
client's connection still reaches the client, at a webhook it names.

* A config comes with the message (``configuration.taskPushNotificationConfig`` of a send, on
  any binding) -- it is kept for the turn's task as soon as the stream says the task's id -- or
  afterwards with ``CreateTaskPushNotificationConfig`` for a task of the caller's. ``Get``,
  ``List`` and ``Delete`` see the caller's own configs only.
* When the task's turn ends (completed, failed, canceled, rejected, or waiting for input), the
  task as stored is POSTed to each of its configs' URLs by a2a-sdk's
  ``BasePushNotificationSender``: the body is a ``StreamResponse`` (``{"task": {...}}``), the
  config's ``token`` rides in ``X-A2A-Notification-Token`` (the receiver checks it), its
  ``authentication`` in ``Authorization``. A config registered for a task that has already ended
  is answered at once.
* Delivery is tried up to :data:`DELIVERY_ATTEMPTS` times, waiting :data:`RETRY_BASE` s, then
  twice that, ... between tries (bounded by :data:`RETRY_MAX` each), when the webhook cannot be
  reached or answers 408, 429 or 5xx; another answer (401, 404, ...) is not tried again. Each
  config ends ``delivered`` or ``failed`` (logged).
* Configs are kept in SQLite (:mod:`rewindtui.server.storage.push_store`, ``push_configs.db`` in
  the data directory) when the server has a data directory, so they survive a restart: at start
  the tasks with a notification not yet sent are watched again and notified once their turn has
  ended (a turn the stop cut short is marked failed at start, and that is what is sent). Without a
  path they live in memory (a2a-sdk's ``InMemoryPushNotificationConfigStore``).

* URLs are screened (:mod:`rewindtui.server.http.push_screen`): a host that resolves to a loopback,
  link-local or private address is refused -- when the config is registered (a send that carries
  one is refused before its turn starts) and again before each delivery, which connects to the
  address checked -- unless the server's ``push_allow`` setting allows that range. The app's own
  embedded server allows ``loopback`` (where the app's receiver listens), by name.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
from collections.abc import AsyncGenerator
from pathlib import Path
from typing import Any

import httpx
from a2a.server.context import ServerCallContext
from a2a.server.tasks.base_push_notification_sender import BasePushNotificationSender
from a2a.server.tasks.inmemory_push_notification_config_store import InMemoryPushNotificationConfigStore
from a2a.server.tasks.push_notification_config_store import PushNotificationConfigStore
from a2a.types import a2a_pb2 as pb
from a2a.utils.errors import InvalidParamsError, TaskNotFoundError
from a2a.utils.proto_utils import to_stream_response
from google.protobuf.json_format import MessageToDict

from rewindtui.a2a.dialect import TERMINAL_STATES
from rewindtui.base.tls import default_context
from rewindtui.server.http.handler import WAITING_STATE, AgentRequestHandler, _user
from rewindtui.server.http.push_screen import PushScreen, PushURLRefused
from rewindtui.server.service.agent_service import AgentService
from rewindtui.server.shared.errors import NotFound
from rewindtui.server.shared.wire import EFFECTIVE_HISTORY_KEY, task_to_proto
from rewindtui.server.storage.push_store import DELIVERED, FAILED, PushConfigStore

log = logging.getLogger(__name__)

#: how long one delivery may take
DELIVERY_TIMEOUT = 10.0
#: tries per notification and config, and the waits between them (seconds: base, doubled, capped)
DELIVERY_ATTEMPTS = 4
RETRY_BASE = 0.5
RETRY_MAX = 8.0
#: answers worth trying again (besides no answer at all)
_RETRY_STATUSES = frozenset({408, 425, 429})
_ENDED = frozenset(TERMINAL_STATES) | {WAITING_STATE}


class RetryingSender(BasePushNotificationSender):
    """a2a-sdk's sender (the configs read with ``get_info_for_dispatch``, one POST per config, the
    body ``StreamResponse`` and the headers as a2a-sdk sends them), each POST tried again with
    backoff, and each config marked delivered / failed in a persistent store."""

    def __init__(
        self,
        http: httpx.AsyncClient,
        store: PushNotificationConfigStore,
        *,
        attempts: int = DELIVERY_ATTEMPTS,
        base: float = RETRY_BASE,
        cap: float = RETRY_MAX,
        screen: PushScreen | None = None,
    ) -> None:
        super().__init__(http, store)
        self.http, self.store = http, store
        self.screen = screen or PushScreen()
        self.attempts, self.base, self.cap = max(1, attempts), base, cap
        #: (task id, config id, tries, delivered) per notification, the newest last (bounded)
        self.outcomes: list[tuple[str, str, int, bool]] = []

    async def _dispatch_notification(self, event: Any, push_info: pb.TaskPushNotificationConfig, task_id: str) -> bool:
        headers: dict[str, str] = {}
        if push_info.token:
            headers["X-A2A-Notification-Token"] = push_info.token
        auth = push_info.authentication
        if push_info.HasField("authentication") and auth.scheme and auth.credentials:
            headers["Authorization"] = f"{auth.scheme} {auth.credentials}"
        body = MessageToDict(to_stream_response(event))
        delivered, tries, wait = False, 0, self.base
        while tries < self.attempts:
            tries += 1
            try:  # checked again (DNS may answer otherwise now), and posted to the address checked
                target = await self.screen.check(push_info.url)
            except PushURLRefused as exc:
                why = str(exc)
                break
            extensions = {"sni_hostname": target.sni} if target.sni else None
            try:
                response = await self.http.post(
                    target.url, json=body, headers={**headers, "Host": target.host_header}, extensions=extensions
                )
            except httpx.HTTPError as exc:
                why = f"{type(exc).__name__}"
            else:
                if response.status_code < 300:
                    delivered = True
                    break
                why = f"HTTP {response.status_code}"
                if response.status_code < 500 and response.status_code not in _RETRY_STATUSES:
                    break  # the webhook said no (a wrong token, no such path): trying again will not help
            if tries < self.attempts:
                log.info(
                    "push: task %s, try %d of %d failed (%s); again in %.1f s", task_id, tries, self.attempts, why, wait
                )
                await asyncio.sleep(wait)
                wait = min(wait * 2, self.cap)
        if not delivered:
            log.warning(
                "push: no notification for task %s reached its webhook after %d tries (%s)", task_id, tries, why
            )
        if isinstance(self.store, PushConfigStore):
            await self.store.mark(task_id, push_info.id, DELIVERED if delivered else FAILED)
        self.outcomes = [*self.outcomes[-99:], (task_id, push_info.id, tries, delivered)]  # once marked
        return delivered


#: how often a team server's replica reads whether another replica's turn has ended
SHARED_POLL_SECONDS = 0.25


class PushNotifications:
    """The configs, the sender, and one watcher per task that has configs. ``path``: the SQLite
    file that keeps the configs (None: in memory, as long as the process)."""

    def __init__(
        self,
        service: AgentService,
        path: Path | None = None,
        screen: PushScreen | None = None,
        *,
        database_url: str | None = None,
    ) -> None:
        self.service = service
        self.screen = screen or PushScreen()
        self.store: PushNotificationConfigStore = (
            PushConfigStore(path, owner_resolver=_user)
            if path is not None
            else InMemoryPushNotificationConfigStore(owner_resolver=_user)
        )
        #: a team server: the configs in its database, seen by every replica
        self.shared = database_url is not None
        if database_url is not None:
            from rewindtui.server.storage.push_store_pg import PgPushConfigStore

            self.store = PgPushConfigStore(database_url, owner_resolver=_user)
        # a redirect is not followed; no connection is kept (one checked per host name: a kept one
        # to the same address would carry a TLS session verified for another name). The process's
        # one default TLS context (base/tls.py): httpx's own would load certifi's bundle again at
        # every start of the server, about a fifth of an embedded server's start
        self._http = httpx.AsyncClient(
            timeout=DELIVERY_TIMEOUT,
            follow_redirects=False,
            limits=httpx.Limits(max_keepalive_connections=0),
            verify=default_context(),
        )
        self.sender = RetryingSender(self._http, self.store, screen=self.screen)
        self._watching: dict[str, asyncio.Task[None]] = {}

    async def start(self) -> int:
        """Open the stored configs and watch again every task whose notification has not gone out
        (a restart); how many."""
        if not isinstance(self.store, PushConfigStore):
            return 0
        await self.store.open()
        pending = await self.store.pending_tasks()
        if self.shared:  # a turn still running is another replica's, which notifies when it ends
            running = {"submitted", "working"}
            rows = [(u, t, await self.service.store.get_task(t)) for u, t in pending]
            pending = [(u, t) for u, t, row in rows if row is None or row.state not in running]
        for user_id, task_id in pending:
            self.watch(user_id, task_id)
        if pending:
            log.info("push: %d task(s) with a notification still to send", len(pending))
        return len(pending)

    async def screened(self, url: str) -> None:
        """InvalidParamsError (the reason) when ``url`` may not be posted to."""
        try:
            await self.screen.check(url)
        except PushURLRefused as exc:
            raise InvalidParamsError(message=str(exc)) from None

    async def register(self, task_id: str, config: pb.TaskPushNotificationConfig, context: ServerCallContext) -> Any:
        await self.screened(config.url)
        stored = await self.store.set_info(task_id, config, context)
        self.watch(_user(context), task_id)
        return stored

    def watch(self, user_id: str, task_id: str) -> None:
        """Deliver the task to its configs once its turn ends (once per task)."""
        if task_id in self._watching and not self._watching[task_id].done():
            return
        watcher = asyncio.get_running_loop().create_task(self._deliver_when_done(user_id, task_id))
        self._watching[task_id] = watcher
        watcher.add_done_callback(
            lambda done: self._watching.pop(task_id, None) if self._watching.get(task_id) is done else None
        )

    async def _deliver_when_done(self, user_id: str, task_id: str) -> None:
        live = self.service.live_task(task_id)
        if live is not None:
            async for _ in live.follow():
                pass
        try:
            data = json.loads(await self.service.task_json(user_id, task_id))
            while self.shared and (data.get("status") or {}).get("state") in ("submitted", "working"):
                # a team server: the turn runs on another replica -- its end is read from the database
                await asyncio.sleep(SHARED_POLL_SECONDS)
                data = json.loads(await self.service.task_json(user_id, task_id))
        except NotFound:  # gone (its session deleted): nothing will ever be sent
            if isinstance(self.store, PushConfigStore):
                for config in await self.store.get_info_for_dispatch(task_id):
                    await self.store.mark(task_id, config.id, FAILED)
            return
        if (data.get("status") or {}).get("state") not in _ENDED:
            log.info("push: task %s ended its stream but not its turn; nothing sent", task_id)
            return
        await self.sender.send_notification(task_id, task_to_proto(data))

    async def close(self) -> None:
        watchers = list(self._watching.values())
        for task in watchers:
            task.cancel()
        for task in watchers:
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task
        self._watching.clear()
        await self._http.aclose()
        if isinstance(self.store, PushConfigStore):
            await self.store.close()


class PushingRequestHandler(AgentRequestHandler):
    """:class:`AgentRequestHandler` with the push-config methods and a send's own config."""

    def __init__(self, service: AgentService, push: PushNotifications) -> None:
        super().__init__(service)
        self.push = push

    async def _owned(self, task_id: str, context: ServerCallContext) -> None:
        try:
            await self.service.owned_task(_user(context), task_id)
        except NotFound:
            raise TaskNotFoundError(message=f"Task {task_id} not found") from None

    async def on_message_send_stream(
        self, params: pb.SendMessageRequest, context: ServerCallContext
    ) -> AsyncGenerator[Any, None]:
        wanted = params.configuration.task_push_notification_config if params.HasField("configuration") else None
        if wanted is not None and not wanted.url:
            wanted = None
        if wanted is not None:
            await self.push.screened(wanted.url)  # refused before the turn starts: nothing is stored or run
        registered = False
        async for event in super().on_message_send_stream(params, context):
            if wanted is not None and not registered and _turn_task(event):
                await self.push.register(event.id, wanted, context)
                registered = True
            yield event

    async def on_message_send(self, params: pb.SendMessageRequest, context: ServerCallContext) -> pb.Task:
        if params.HasField("configuration") and params.configuration.task_push_notification_config.url:
            await self.push.screened(params.configuration.task_push_notification_config.url)
        task = await super().on_message_send(params, context)
        if params.HasField("configuration") and params.configuration.task_push_notification_config.url:
            await self.push.register(task.id, params.configuration.task_push_notification_config, context)
        return task

    async def on_create_task_push_notification_config(
        self, params: pb.TaskPushNotificationConfig, context: ServerCallContext
    ) -> pb.TaskPushNotificationConfig:
        if not params.task_id:
            raise InvalidParamsError(message="taskId is required")
        await self._owned(params.task_id, context)
        stored: pb.TaskPushNotificationConfig = await self.push.register(params.task_id, params, context)
        return stored

    async def on_get_task_push_notification_config(
        self, params: pb.GetTaskPushNotificationConfigRequest, context: ServerCallContext
    ) -> pb.TaskPushNotificationConfig:
        await self._owned(params.task_id, context)
        for config in await self.push.store.get_info(params.task_id, context):
            if config.id == params.id:
                return config
        raise TaskNotFoundError(message=f"no push notification config {params.id!r} for task {params.task_id}")

    async def on_list_task_push_notification_configs(
        self, params: pb.ListTaskPushNotificationConfigsRequest, context: ServerCallContext
    ) -> pb.ListTaskPushNotificationConfigsResponse:
        await self._owned(params.task_id, context)
        configs = await self.push.store.get_info(params.task_id, context)
        return pb.ListTaskPushNotificationConfigsResponse(configs=configs)

    async def on_delete_task_push_notification_config(
        self, params: pb.DeleteTaskPushNotificationConfigRequest, context: ServerCallContext
    ) -> None:
        await self._owned(params.task_id, context)
        await self.push.store.delete_info(params.task_id, context, params.id or None)


def _turn_task(event: Any) -> bool:
    """The Task a turn's stream opens with (not a rewind's effective-history Task)."""
    return isinstance(event, pb.Task) and bool(event.id) and EFFECTIVE_HISTORY_KEY not in event.metadata
