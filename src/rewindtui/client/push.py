"""Push notifications, the client's side: a webhook receiver on loopback, and what a turn does
with it.

A2A lets a client give the server, with a message, a URL and a token (``TaskPushNotificationConfig``):
when the task's turn ends, the server POSTs it there, with the token in ``X-A2A-Notification-Token``.
A turn that runs longer than the connection (a laptop that sleeps, a proxy that cuts long streams)
still reaches the user.

* :class:`PushReceiver` -- ``async with PushReceiver() as receiver:`` listens on ``127.0.0.1`` (a
  free port, a random path and a random token); :meth:`PushReceiver.config` is what goes with a
  message (``client.push_config = receiver.config()``); :meth:`PushReceiver.wait_for` returns the
  notified task of an id; ``on_notification`` (a callable taking the task's dict) is called for each
  one -- the hook an app uses to say "the turn finished". A POST without the token (or another
  path, or not JSON, or JSON nested deeper than :data:`MAX_DEPTH` levels) is refused (401 / 404 /
  400), a body over :data:`MAX_BODY` bytes with 413 (said by its ``Content-Length`` before it is
  read, else once that much has come), each counted in ``rejected``; nothing else is served.
* :class:`SendPush` -- ``rewindtui send --push``: a receiver (or the user's webhook) for one send;
  after a turn whose stream was cut (``TurnInterrupted``), :meth:`SendPush.notified` waits for the
  task's notification. Putting it into the chat's view is the chat's (:mod:`rewindtui.chat.push`).

The receiver speaks HTTP/1.1 with h11 over asyncio streams (no server framework, no signal
handlers taken); one request per connection.
"""

from __future__ import annotations

import asyncio
import contextlib
import hmac
import ipaddress
import json
import secrets
import weakref
from collections.abc import Callable
from typing import Any
from urllib.parse import urlsplit

import h11

from rewindtui.a2a.classify import classify
from rewindtui.a2a.dialect import TURN_ENDING_STATES, norm_state
from rewindtui.client.bounded_json import bound_task, deeper_than
from rewindtui.client.errors import ClientError
from rewindtui.client.limits import MAX_PUSH_BYTES, MAX_PUSH_DEPTH

TOKEN_HEADER = "x-a2a-notification-token"
#: the largest notification taken (a task with its history and artifacts)
MAX_BODY = MAX_PUSH_BYTES
#: the deepest nesting taken (Python's parser dies of RecursionError near 1,000 levels)
MAX_DEPTH = MAX_PUSH_DEPTH
#: seconds a connection may take to send its request
READ_TIMEOUT = 30.0
#: notified tasks kept for :meth:`PushReceiver.wait_for` (the newest)
MAX_KEPT = 100


class PushReceiver:
    """A loopback webhook for A2A push notifications."""

    def __init__(
        self,
        host: str = "127.0.0.1",
        port: int = 0,
        *,
        on_notification: Callable[[dict[str, Any]], Any] | None = None,
    ) -> None:
        self.host = host
        self.requested_port = port
        self.token = secrets.token_urlsafe(24)
        self.path = "/a2a-push/" + secrets.token_urlsafe(12)
        self.on_notification = on_notification
        #: the tasks notified, in order of arrival (the newest MAX_KEPT)
        self.tasks: list[dict[str, Any]] = []
        #: requests refused (wrong token, path or body)
        self.rejected = 0
        self.port: int | None = None
        self._server: asyncio.Server | None = None
        self._arrived = asyncio.Event()

    @property
    def url(self) -> str:
        if self.port is None:
            raise RuntimeError("the push receiver is not listening")
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"http://{host}:{self.port}{self.path}"

    def config(self) -> dict[str, Any]:
        """The push notification config to send with a message."""
        return {"url": self.url, "token": self.token}

    async def start(self) -> PushReceiver:
        self._server = await asyncio.start_server(self._connection, self.host, self.requested_port)
        self.port = self._server.sockets[0].getsockname()[1]
        return self

    async def stop(self) -> None:
        server, self._server = self._server, None
        if server is not None:
            server.close()
            await server.wait_closed()

    async def __aenter__(self) -> PushReceiver:
        return await self.start()

    async def __aexit__(self, *exc: object) -> None:
        await self.stop()

    async def wait_for(self, task_id: str, timeout: float | None = None) -> dict[str, Any]:
        """The notified task ``task_id`` whose turn has ended (TimeoutError when none came)."""

        async def arrived() -> dict[str, Any]:
            while True:
                for task in self.tasks[::-1]:  # the newest first
                    if task.get("id") == task_id and _ended(task):
                        return task
                self._arrived.clear()
                await self._arrived.wait()

        return await asyncio.wait_for(arrived(), timeout)

    # -- HTTP ------------------------------------------------------------------------------------
    async def _connection(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        conn = h11.Connection(h11.SERVER)
        request: h11.Request | None = None
        body = bytearray()
        try:
            while True:
                event = conn.next_event()
                if event is h11.NEED_DATA:
                    conn.receive_data(await asyncio.wait_for(reader.read(65536), READ_TIMEOUT))
                    continue
                if isinstance(event, h11.Request):
                    request = event
                    if _declared_length(event) > MAX_BODY:
                        self.rejected += 1
                        await self._answer(conn, writer, 413, f"too large: at most {MAX_BODY:,} bytes")
                        return
                elif isinstance(event, h11.Data):
                    body += event.data
                    if len(body) > MAX_BODY:
                        self.rejected += 1
                        await self._answer(conn, writer, 413, f"too large: at most {MAX_BODY:,} bytes")
                        return
                elif isinstance(event, h11.EndOfMessage) and request is not None:
                    status, text = self._take(request, bytes(body))
                    await self._answer(conn, writer, status, text)
                    return
                else:
                    return
        except (h11.RemoteProtocolError, TimeoutError, ConnectionError):
            return
        finally:
            writer.close()
            with contextlib.suppress(ConnectionError):
                await writer.wait_closed()

    def _take(self, request: h11.Request, body: bytes) -> tuple[int, str]:
        headers = {name.decode("latin-1").lower(): value.decode("latin-1") for name, value in request.headers}
        if request.method != b"POST" or request.target.decode("latin-1") != self.path:
            self.rejected += 1
            return 404, "not found"
        if not hmac.compare_digest(headers.get(TOKEN_HEADER, "").encode(), self.token.encode()):
            self.rejected += 1
            return 401, "wrong or missing notification token"
        if deeper_than(body, MAX_DEPTH):
            self.rejected += 1
            return 400, f"nested deeper than {MAX_DEPTH} levels"
        try:
            event = classify(bound_task(json.loads(body)))
        except (ValueError, RecursionError):
            self.rejected += 1
            return 400, "not JSON"
        if not event.is_task or not isinstance(event.body, dict):
            return 200, "ignored: not a task"
        self.tasks.append(event.body)
        del self.tasks[:-MAX_KEPT]  # an app's receiver hears every turn: keep the newest only
        self._arrived.set()
        if self.on_notification is not None:
            self.on_notification(event.body)
        return 200, "ok"

    async def _answer(self, conn: h11.Connection, writer: asyncio.StreamWriter, status: int, text: str) -> None:
        data = json.dumps({"status": status, "message": text}).encode()
        headers = [("content-type", "application/json"), ("content-length", str(len(data))), ("connection", "close")]
        writer.write(conn.send(h11.Response(status_code=status, headers=headers)) or b"")
        writer.write(conn.send(h11.Data(data=data)) or b"")
        writer.write(conn.send(h11.EndOfMessage()) or b"")
        with contextlib.suppress(ConnectionError):
            await writer.drain()


def _declared_length(request: h11.Request) -> int:
    for name, value in request.headers:
        if name.lower() == b"content-length":
            try:
                return int(value)
            except ValueError:
                return 0
    return 0


def _ended(task: dict[str, Any]) -> bool:
    status = task.get("status")
    return isinstance(status, dict) and norm_state(status.get("state")) in TURN_ENDING_STATES


class PushTimeout(ClientError):
    category = "push-timeout"


class PushUnsupported(ClientError):
    category = "unsupported"


def _on_this_machine(endpoint: str) -> bool:
    text = endpoint if "://" in endpoint else "//" + endpoint
    host = (urlsplit(text).hostname or "").lower()
    if host in ("localhost", "::1") or host.endswith(".localhost"):
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


class SendPush:
    """``rewindtui send --push``: a receiver on loopback (or the URL the user gives, with the token
    from ``token`` or a made-up one) whose config goes with the message; after a cut turn,
    :meth:`finish` waits for the notification. Without ``enabled`` it does nothing."""

    def __init__(
        self, client: Any, *, enabled: bool, url: str | None = None, token: str | None = None, wait: float | None = None
    ) -> None:
        self.client = client
        self.enabled = enabled or bool(url)
        self.url = url
        self.token = token or secrets.token_urlsafe(24)
        self.wait = wait
        self.receiver: PushReceiver | None = None

    def check(self) -> None:
        """Refuse, before anything is sent, a push the agent cannot do: its card does not offer push
        notifications, or it is not on this machine and so cannot reach a loopback receiver."""
        if not self.enabled:
            return
        caps = self.client.capabilities
        card = caps.card if caps is not None else {}
        offered = (card.get("capabilities") or {}).get("pushNotifications") if isinstance(card, dict) else None
        if offered is not True:
            raise PushUnsupported(
                f"{caps.name if caps else 'the agent'} does not offer push notifications (its agent card says so)"
            )
        if not self.url and caps is not None and not _on_this_machine(caps.endpoint):
            raise PushUnsupported(
                f"the agent at {caps.endpoint} is not on this machine: it cannot reach a receiver on 127.0.0.1; "
                "give --push-url with a webhook it can reach"
            )

    async def __aenter__(self) -> SendPush:
        if not self.enabled:
            return self
        if self.url:
            self.client.push_config = {"url": self.url, "token": self.token}
        else:
            self.receiver = await PushReceiver().start()
            self.client.push_config = self.receiver.config()
        return self

    async def __aexit__(self, *exc: object) -> None:
        self.client.push_config = None
        if self.receiver is not None:
            await self.receiver.stop()

    async def notified(self, task_id: str) -> dict[str, Any] | None:
        """After a cut turn: the notified task ``task_id`` (None: no receiver of ours). PushTimeout
        when none came in time. :func:`rewindtui.chat.push.finish_send` shows it in the chat."""
        if self.receiver is None:
            return None
        try:
            return await self.receiver.wait_for(task_id, self.wait)
        except TimeoutError:
            raise PushTimeout(
                f"the turn's stream was cut and no push notification for task {task_id} came within {self.wait:g} s"
            ) from None


# -- the app's side: one receiver per client, for the whole connection ---------------------------
_RECEIVERS: weakref.WeakKeyDictionary[Any, PushReceiver] = weakref.WeakKeyDictionary()


async def attach(client: Any) -> PushReceiver:
    """Start a receiver for ``client`` (the ``push`` setting): every message it sends from now on
    asks for a push notification when its turn ends. The app sets ``on_notification`` on it (see
    :func:`receiver_of`) to say "the turn finished" for a turn it no longer streams."""
    found = _RECEIVERS.get(client)
    if found is not None:
        return found
    receiver = await PushReceiver().start()
    _RECEIVERS[client] = receiver
    client.push_config = receiver.config()
    return receiver


def receiver_of(client: Any) -> PushReceiver | None:
    """The receiver :func:`attach` started for ``client`` (None: push is off)."""
    return _RECEIVERS.get(client)


async def detach(client: Any) -> None:
    receiver = _RECEIVERS.pop(client, None)
    if receiver is not None:
        client.push_config = None
        await receiver.stop()


def describe(task: dict[str, Any]) -> str:
    """One line for a notified task: what an app shows ("the turn finished")."""
    state = norm_state((task.get("status") or {}).get("state"))
    context = task.get("contextId") or task.get("context_id") or "?"
    return f"a turn in session {context} ended {state}"
