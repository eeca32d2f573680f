"""A hostile server's huge answers are bounded while they are read, not after: one endless SSE
line, an endless run of ``data:`` lines, an endless error body, an endless plain answer to a
turn. Each answer is 128 MB; the limit is set to 1 MB. The client must stop reading near the
limit (the server counts what it got to send before the client hung up) and its memory must
stay near the limit too -- reading the whole answer first, then refusing it, fails both."""

from __future__ import annotations

import asyncio
import tracemalloc
from collections.abc import Iterator

import httpx
import pytest
from hostile import Lies, hostile_app
from hypothesis import given, settings
from hypothesis import strategies as st

from asgi_thread import ServeInThread
from rewindtui.client.a2a_client import A2AClient, ServerConfig
from rewindtui.client.limits import STREAM_FACTOR
from rewindtui.client.transports.http import AnswerTooLarge, sse_frames

pytestmark = pytest.mark.timeout(60)

MB = 1024 * 1024
HUGE = 128 * MB


@pytest.fixture
def liar() -> Iterator[tuple[ServeInThread, Lies]]:
    lies = Lies()
    with ServeInThread(factory=lambda url: hostile_app(url, lies)) as served:
        yield served, lies


@pytest.mark.parametrize(
    "kind, says",
    [
        ("sse_line", "a stream frame from .* is larger than 1 MB"),
        ("sse_lines", "a stream frame from .* is larger than 1 MB"),
        ("error", "the error answer from .* is larger than 1 MB"),
        ("plain", "the answer from .* is larger than 1 MB"),
    ],
)
async def test_a_huge_turn_answer_stops_being_read_at_the_limit(liar, monkeypatch, kind, says):
    served, lies = liar
    monkeypatch.setenv("REWINDTUI_MAX_ANSWER_MB", "1")
    lies.huge_turn, lies.huge_bytes = kind, HUGE
    client = A2AClient(ServerConfig(url=served.url + "/", timeout=10))
    try:
        await client.connect()
        tracemalloc.start()
        try:
            with pytest.raises(AnswerTooLarge, match=says) as caught:
                async for _ in client.stream(client.build_message("hi", session_id=None)):
                    pass
            _, peak = tracemalloc.get_traced_memory()
        finally:
            tracemalloc.stop()
    finally:
        await client.aclose()
    assert "REWINDTUI_MAX_ANSWER_MB" in str(caught.value)
    sent = lies.sent[0]
    # what the client read, plus what the loopback socket buffers held when it hung up
    assert sent < 40 * MB, f"the server sent {sent / MB:.1f} MB of a {HUGE // MB} MB answer before the client stopped"
    assert peak < 8 * MB, f"peak {peak / MB:.1f} MB while refusing a {HUGE // MB} MB answer with a 1 MB limit"


# -- the bounded SSE reader reads what httpx-sse read --------------------------------------------
class _Pieces(httpx.AsyncByteStream):
    def __init__(self, pieces: list[bytes]) -> None:
        self.pieces = pieces

    async def __aiter__(self):  # type: ignore[override]
        for piece in self.pieces:
            yield piece


async def _frames(pieces: list[bytes], limit: int = MB) -> list[tuple[str, str]]:
    response = httpx.Response(200, stream=_Pieces(pieces), request=httpx.Request("POST", "http://agent.test/"))
    return [frame async for frame in sse_frames(response, limit)]


BODY = (
    b": keep-alive\r\n\r\n"
    b"data: one\r\ndata: two\r\n\r\n"
    b'event: error\ndata: {"a":\ndata:  1}\n\n'
    b"id: 7\rretry: 10\rdata:three\r\r"
    b"data: \xc3\xa9t\xc3\xa9\n\n"
    b"data: unfinished"
)
EXPECTED = [("one\ntwo", ""), ('{"a":\n 1}', "error"), ("three", ""), ("\u00e9t\u00e9", "")]


@settings(max_examples=200, deadline=None)
@given(cuts=st.lists(st.integers(min_value=0, max_value=len(BODY)), max_size=12))
def test_sse_frames_do_not_depend_on_where_the_body_is_cut(cuts):
    """CR, LF and CRLF line ends (a CRLF cut between two reads is one newline), multi-line data,
    event names, comments, a multi-byte character cut in two; an unfinished event is dropped."""
    points = sorted(set(cuts))
    pieces = [BODY[a:b] for a, b in zip([0, *points], [*points, len(BODY)], strict=True) if b > a]
    assert asyncio.run(_frames(pieces)) == EXPECTED


async def test_sse_frames_stop_at_a_line_longer_than_the_limit_before_it_ends():
    async def endless():
        yield b"data: "
        while True:
            yield b"x" * 1000

    response = httpx.Response(200, stream=_Endless(endless()), request=httpx.Request("POST", "http://agent.test/"))
    with pytest.raises(AnswerTooLarge, match="larger than 10,000 bytes"):
        async for _ in sse_frames(response, 10_000):
            pass


class _Endless(httpx.AsyncByteStream):
    def __init__(self, source) -> None:
        self.source = source

    async def __aiter__(self):  # type: ignore[override]
        async for piece in self.source:
            yield piece


async def test_an_endless_run_of_small_events_stops_at_the_limit_in_all():
    """Each event is small, so no frame is too large: the stream as a whole stops once its bytes
    pass STREAM_FACTOR times the limit (before: read for as long as the server sent)."""
    read = [0]

    async def endless():
        while True:
            read[0] += 1
            yield b"data: " + b"x" * 100 + b"\n\n"

    response = httpx.Response(200, stream=_Endless(endless()), request=httpx.Request("POST", "http://agent.test/"))
    frames = 0
    with pytest.raises(AnswerTooLarge, match="the stream from .* is larger than 40,000 bytes"):
        async for _ in sse_frames(response, 10_000):
            frames += 1
    assert STREAM_FACTOR == 4 and 360 <= frames <= 371 and read[0] <= 371
