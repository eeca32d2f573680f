"""The fast path's SSE response on plain asyncio (``server/http/sse_response.py``) does what
sse-starlette's ``EventSourceResponse`` does, case by case, each run against both.

A stream that ends; a client that disconnects mid-stream; the server shutting down mid-stream
(sse-starlette's ``AppStatus``); a stream that fails; a long stream with pings between its frames;
a request cancelled from outside. Compared: the messages sent (a ping's time masked), what the
stream's iterator saw (its end, its close), and what the call raised.
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import AsyncIterator, Callable
from typing import Any

import pytest
from sse_starlette.sse import AppStatus, EventSourceResponse

from rewindtui.server.http.sse_response import StreamResponse

SCOPE = {"type": "http", "method": "POST"}


class Case:
    """One run: a generator of frames the test steers, a receive the test steers, what was sent."""

    def __init__(self) -> None:
        self.sent: list[dict[str, Any]] = []
        self.seen: list[str] = []
        self.go = asyncio.Event()  # the generator's second half may go on
        self.disconnect = asyncio.Event()

    async def frames(self, fail: bool = False, pause: float = 0.0) -> AsyncIterator[bytes]:
        try:
            yield b"data: one\r\n\r\n"
            if pause:
                await asyncio.sleep(pause)
            await self.go.wait()
            if fail:
                raise ValueError("the stream failed")
            yield b"data: two\r\n\r\n"
            self.seen.append("ended")
        finally:
            self.seen.append("closed")

    async def receive(self) -> dict[str, Any]:
        await self.disconnect.wait()
        return {"type": "http.disconnect"}

    async def send(self, message: dict[str, Any]) -> None:
        if message["type"] == "http.response.body" and message["body"].startswith(b": ping"):
            message = {**message, "body": re.sub(rb"ping - .*?\r\n", b"ping - TIME\r\n", message["body"])}
        self.sent.append(message)


async def _run(
    make: Callable[..., EventSourceResponse], steer: Callable[[Case, asyncio.Task[None]], Any], **frames: Any
) -> tuple[list[dict[str, Any]], list[str], str]:
    case = Case()
    response = make(case.frames(**frames))
    response.ping_interval = 0.05 if frames.get("pause") else 15
    call = asyncio.ensure_future(response(SCOPE, case.receive, case.send))
    while len(case.sent) < 2:  # the start and the first frame
        await asyncio.sleep(0.005)
    await steer(case, call)
    try:
        await asyncio.wait_for(call, 10)
        outcome = "returned"
    except asyncio.CancelledError:
        outcome = "cancelled"
    except ValueError as exc:
        outcome = f"raised {exc}"
    return case.sent, case.seen, outcome


async def _ends(case: Case, call: asyncio.Task[None]) -> None:
    case.go.set()


async def _disconnects(case: Case, call: asyncio.Task[None]) -> None:
    case.disconnect.set()


async def _shuts_down(case: Case, call: asyncio.Task[None]) -> None:
    AppStatus.should_exit = True


async def _cancelled(case: Case, call: asyncio.Task[None]) -> None:
    call.cancel()


def _is_ping(message: dict[str, Any]) -> bool:
    return message["type"] == "http.response.body" and message["body"] == b": ping - TIME\r\n\r\n"


def _pings(sent: list[dict[str, Any]]) -> int:
    """How many pings were sent, checked to be in one run right after the start and the first frame."""
    where = [i for i, m in enumerate(sent) if _is_ping(m)]
    assert where == list(range(2, 2 + len(where))), sent
    return len(where)


def _no_pings(sent: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [m for m in sent if not _is_ping(m)]


@pytest.mark.parametrize(
    ("steer", "frames"),
    [
        (_ends, {}),
        (_disconnects, {}),
        (_shuts_down, {}),
        (_ends, {"fail": True}),
        (_ends, {"pause": 0.23}),
        (_cancelled, {}),
    ],
    ids=["ends", "client disconnects", "server shuts down", "stream fails", "pings", "request cancelled"],
)
def test_each_case_goes_as_with_sse_starlette(steer: Any, frames: dict[str, Any]) -> None:
    results = []
    for make in (EventSourceResponse, StreamResponse):
        try:
            results.append(asyncio.run(_run(make, steer, **frames)))
        finally:
            AppStatus.should_exit = False
    theirs, ours = results
    # how many pings fit in the pause is the scheduler's: the same messages besides them, and pings
    # in the same place (right after the first frame, where the pause is)
    assert (_no_pings(ours[0]), *ours[1:]) == (_no_pings(theirs[0]), *theirs[1:])
    pings = (_pings(ours[0]), _pings(theirs[0]))
    assert all(n >= 3 for n in pings) if frames.get("pause") else pings == (0, 0)
    sent, seen, outcome = ours
    if steer is _ends and not frames:
        assert seen == ["ended", "closed"] and sent[-1] == {
            "type": "http.response.body",
            "body": b"",
            "more_body": False,
        }
    if steer is not _ends:
        assert seen == ["closed"] and outcome in {"returned", "cancelled"}  # stopped, its iterator closed


def test_what_it_does_not_cover_is_sse_starlettes(monkeypatch: pytest.MonkeyPatch) -> None:
    """HEAD, pings off: sse-starlette's own ``__call__``."""
    calls: list[str] = []

    async def own(self: EventSourceResponse, scope: Any, receive: Any, send: Any) -> None:
        calls.append(scope["method"])

    monkeypatch.setattr(EventSourceResponse, "__call__", own)

    async def run() -> None:
        async def nothing() -> AsyncIterator[bytes]:
            yield b""

        case = Case()
        await StreamResponse(nothing())({"type": "http", "method": "HEAD"}, case.receive, case.send)
        await StreamResponse(nothing(), ping=0)(SCOPE, case.receive, case.send)

    asyncio.run(run())
    assert calls == ["HEAD", "POST"]
