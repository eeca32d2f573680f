"""The 1.0 stream's frames written without sse-starlette's and protobuf's per-frame work
(``server/http/fast_stream.py``, ``server/shared/wire_v1.py``), held equal to theirs.

``frame_bytes`` is sse-starlette's ``ensure_bytes`` for any frame (any text, line breaks, lone
surrogates, any separator), the response's writes are the bytes sse-starlette writes, and a status
timestamp prints as protobuf's ``Timestamp.ToJsonString`` prints what it parses, for any time.
"""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime
from typing import Any

import pytest
from google.protobuf.timestamp_pb2 import Timestamp
from hypothesis import example, given
from hypothesis import strategies as st
from sse_starlette.sse import EventSourceResponse, ensure_bytes

from rewindtui.server.http import fast_stream
from rewindtui.server.shared import wire_v1
from rewindtui.server.shared.wire import now_iso, set_timestamp, utc_text

SEPS = st.sampled_from(["\r\n", "\n", "\r"])
#: text with the characters that matter to an SSE encoder: line breaks of every kind, the ones
#: ``str.splitlines`` also breaks at but SSE does not, and lone surrogates (UTF-8 cannot encode them)
TEXT = st.lists(st.one_of(st.text(), st.sampled_from(["\r", "\n", "\r\n", "\u2028", "\x85", "\ud800", ":"]))).map(
    "".join
)


def _outcome(fn: Any, *args: Any) -> Any:
    try:
        return fn(*args)
    except Exception as exc:  # the same failure is part of the same behaviour
        return type(exc)


@given(TEXT, SEPS)
@example('{"result":{"kind":"status-update"},"id":1,"jsonrpc":"2.0"}', "\r\n")
def test_a_data_frame_is_sse_starlettes_bytes(text: str, sep: str) -> None:
    assert _outcome(fast_stream.frame_bytes, {"data": text}, sep) == _outcome(ensure_bytes, {"data": text}, sep)


@given(TEXT, SEPS, st.sampled_from(["error", "message"]))
def test_any_other_frame_is_sse_starlettes_bytes(text: str, sep: str, event: str) -> None:
    frame = {"event": event, "data": text}
    assert _outcome(fast_stream.frame_bytes, frame, sep) == _outcome(ensure_bytes, frame, sep)


@given(st.lists(st.lists(st.builds(lambda d: {"data": d}, TEXT.filter(lambda t: "\ud800" not in t)), max_size=4)))
def test_the_response_writes_what_sse_starlette_writes(batches: list[list[dict[str, str]]]) -> None:
    """The fast path's response, driven as an ASGI app: its body is sse-starlette's encoding of each
    frame, in order, and it starts and ends the response as sse-starlette's own does."""

    async def run() -> list[dict[str, Any]]:
        async def frames() -> Any:
            for batch in batches:
                yield batch

        response: Any = None
        response = fast_stream.SseResponse(fast_stream.coalesced(frames(), lambda: response.sep))
        sent: list[dict[str, Any]] = []
        disconnect = asyncio.Event()

        async def receive() -> dict[str, Any]:
            await disconnect.wait()
            return {"type": "http.disconnect"}

        async def send(message: dict[str, Any]) -> None:
            sent.append(message)

        await response({"type": "http", "method": "POST"}, receive, send)
        return sent

    sent = asyncio.run(run())
    plain = EventSourceResponse([])
    assert sent[0] == {"type": "http.response.start", "status": 200, "headers": plain.raw_headers}
    assert sent[-1] == {"type": "http.response.body", "body": b"", "more_body": False}
    body = b"".join(m["body"] for m in sent[1:-1])
    assert all(m["more_body"] for m in sent[1:-1])
    assert body == b"".join(ensure_bytes(frame, plain.sep) for batch in batches for frame in batch)
    assert len(sent) == 2 + sum(1 for batch in batches if batch)


def test_a_send_timeout_still_applies() -> None:
    """Where a timeout is set, the write goes through sse-starlette's own timed send."""

    async def run() -> None:
        async def frames() -> Any:
            yield [{"data": "x"}]

        response = fast_stream.SseResponse(fast_stream.coalesced(frames(), lambda: "\r\n"))
        response.send_timeout = 0.05

        async def stuck(message: dict[str, Any]) -> None:
            await asyncio.sleep(3600)

        from sse_starlette.sse import SendTimeoutError

        with pytest.raises(SendTimeoutError):
            await response._send_with_timeout(stuck, {"type": "http.response.body", "body": b"x"})

    asyncio.run(run())


def _protobufs(text: str) -> str:
    stamp = Timestamp()
    set_timestamp(stamp, text)
    out: str = stamp.ToJsonString()
    return out


@given(st.datetimes(min_value=datetime(1, 1, 1), max_value=datetime(9999, 12, 31, 23, 59, 59, 999999)))
@example(datetime(2026, 11, 29, 6, 0, 0, 0))
@example(datetime(2026, 11, 29, 6, 0, 0, 120000))
@example(datetime(2026, 11, 29, 6, 0, 0, 123000))
@example(datetime(2026, 11, 29, 6, 0, 0, 123))
def test_a_status_time_prints_as_protobuf_prints_it(moment: datetime) -> None:
    text = moment.strftime("%Y-%m-%dT%H:%M:%S.%fZ")  # now_iso's layout
    assert _outcome(wire_v1._timestamp, text) == _outcome(_protobufs, text)


@given(
    st.from_regex(r"\A[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}\.[0-9]{6}Z\Z")
    | st.from_regex(
        r"\A[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}(\.[0-9]{1,9})?(Z|[+-][0-9]{2}:[0-9]{2})\Z"
    )
)
@example("2026-02-30T10:00:00.000000Z")
@example("0000-01-01T00:00:00.000000Z")
@example("2026-11-29T24:00:00.000000Z")
def test_any_time_text_prints_or_fails_as_protobuf(text: str) -> None:
    """In the layout or not, a real date or not: the same text or the same error as protobuf."""
    assert _outcome(wire_v1._timestamp, text) == _outcome(_protobufs, text)


def test_the_servers_own_times_take_the_short_way(monkeypatch: pytest.MonkeyPatch) -> None:
    """now_iso's times are printed without protobuf (the point of the short way)."""
    monkeypatch.setattr(wire_v1, "Timestamp", lambda: pytest.fail("printed through protobuf"))
    assert wire_v1._timestamp(now_iso()).endswith("Z")
    assert wire_v1._timestamp(datetime(2026, 1, 2, tzinfo=UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")) == (
        "2026-01-02T00:00:00Z"
    )


@given(st.datetimes(min_value=datetime(1000, 1, 1), max_value=datetime(9999, 12, 31, 23, 59, 59, 999999)))
@example(datetime(2026, 11, 29, 6, 0, 0, 0))
def test_the_servers_times_are_strftimes_text(moment: datetime) -> None:
    """``now_iso``'s text of a time: what ``strftime`` writes for it, for any UTC time."""
    aware = moment.replace(tzinfo=UTC)
    assert utc_text(aware) == aware.strftime("%Y-%m-%dT%H:%M:%S.%fZ")
