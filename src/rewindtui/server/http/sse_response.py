"""sse-starlette's ``EventSourceResponse`` for the 1.0 stream's fast path, without anyio's task group.

sse-starlette answers each streamed request with an anyio task group of four tasks -- the stream,
a ping every 15 s, a listener for the server's shutdown and one for the client's disconnect --
each under a cancel scope, the first to end cancelling the rest: about 250 µs of CPU per response
where its writes alone cost under 10 µs (``bench/README.md``, "Throughput, round 3").

:class:`StreamResponse` runs the same parts with plain asyncio: sse-starlette's own stream,
disconnect and shutdown coroutines as three tasks, the first to end cancelling the others, and the
ping as a timer that starts a ping (sse-starlette's, under its send lock, only while the response
is active) every ``ping_interval``. The bytes are the same, a disconnect or a shutdown stops the
stream and closes its iterator as before, the first failure of any part is raised, and a
cancelled request cancels every part. What it does not cover -- another scope than an HTTP
request, HEAD, a data sender, a shutdown event or grace period, pings turned off -- goes to
sse-starlette's own ``__call__``. ``tests/server/test_sse_response.py`` runs each case against both.
One difference is left: anyio delivers a cancellation again and again until a task ends, asyncio
once, so a stream iterator that swallowed the cancellation of a disconnect would run on here (the
server's own iterators do not). A response costs 90-120 µs of CPU instead of 250-270 µs (six
frames, alone in process).
"""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime

from sse_starlette.event import ServerSentEvent, ensure_bytes
from sse_starlette.sse import EventSourceResponse
from starlette.types import Message, Receive, Scope, Send


class StreamResponse(EventSourceResponse):
    """``EventSourceResponse`` (as a2a-sdk makes it: ``create_event_source_response``) run on plain
    asyncio tasks (see the module)."""

    def _covered(self, scope: Scope) -> bool:
        return (
            scope["type"] == "http"
            and scope["method"].upper() != "HEAD"
            and self.data_sender_callable is None
            and self._shutdown_event is None
            and not self._shutdown_grace_period
            and self.ping_interval > 0
        )

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if not self._covered(scope):
            await super().__call__(scope, receive, send)
            return
        loop = asyncio.get_running_loop()
        stream = loop.create_task(self._stream_response(send))
        parts = [
            stream,
            loop.create_task(self._listen_for_exit_signal_with_grace()),
            loop.create_task(self._listen_for_disconnect(receive)),
        ]
        pings: list[asyncio.Task[None]] = []
        timer: asyncio.TimerHandle | None = None

        def ping_failed(task: asyncio.Task[None]) -> None:
            if not task.cancelled() and task.exception() is not None:
                stream.cancel()  # as a failed part of the task group cancels the rest

        def ping_due() -> None:
            nonlocal timer
            if not self.active or stream.done():
                return
            task = loop.create_task(self._ping_once(send))
            task.add_done_callback(ping_failed)
            pings.append(task)
            timer = loop.call_later(self.ping_interval, ping_due)

        timer = loop.call_later(self.ping_interval, ping_due)
        try:
            await asyncio.wait(parts, return_when=asyncio.FIRST_COMPLETED)
        finally:
            if timer is not None:
                timer.cancel()
            everything = [*parts, *pings]
            for task in everything:
                task.cancel()
            await asyncio.wait(everything)
        for task in everything:  # the first failure, as the task group raises it
            if not task.cancelled() and task.exception() is not None:
                raise task.exception()  # type: ignore[misc]
        if self.background is not None:
            await self.background()

    async def _ping_once(self, send: Send) -> None:
        """One turn of sse-starlette's ``_ping`` loop after its sleep: the ping, under the send lock,
        while the response is active."""
        sse_ping = (
            self.ping_message_factory()
            if self.ping_message_factory
            else ServerSentEvent(comment=f"ping - {datetime.now(UTC)}", sep=self.sep)
        )
        ping_bytes = ensure_bytes(sse_ping, self.sep)
        async with self._send_lock:
            if self.active:
                await self._send_with_timeout(
                    send, {"type": "http.response.body", "body": ping_bytes, "more_body": True}
                )

    async def _send_with_timeout(self, send: Send, message: Message) -> None:
        """sse-starlette's, without the anyio cancel scope per write that can never fire when no
        ``send_timeout`` is set (a2a-sdk sets none)."""
        if self.send_timeout is None:
            await send(message)
        else:
            await super()._send_with_timeout(send, message)
