"""A 1.0 streaming turn's SSE frames written in batches (server/http/fast_stream.py ``coalesced``,
``AgentService.handle_batches``): the bytes are those of one write per frame, every frame is still
its own SSE event, and every delta arrives, in order."""

from __future__ import annotations

import json
import uuid
from typing import Any

from hypothesis import given
from hypothesis import strategies as st
from srvkit import Turn, normalize_result, texts
from sse_starlette.sse import ensure_bytes

from rewindtui.server.http import fast_stream

SEP = "\r\n"  # sse-starlette's default separator, what a2a-sdk's response uses


def _drain(batches: list[list[dict[str, str]]]) -> list[dict[str, str] | bytes]:
    import asyncio

    async def source() -> Any:
        for batch in batches:
            yield batch

    async def run() -> list[dict[str, str] | bytes]:
        return [chunk async for chunk in fast_stream.coalesced(source(), lambda: SEP)]

    return asyncio.run(run())


_frame = st.one_of(
    st.builds(lambda d: {"data": d}, st.text(max_size=40)),
    st.builds(lambda d: {"event": "error", "data": d}, st.text(max_size=40)),
)


@given(st.lists(st.lists(_frame, max_size=6), max_size=8))
def test_the_bytes_are_one_write_per_frame(batches):
    """Whatever the batches, the stream's bytes are what sse-starlette writes frame by frame, one
    body chunk per non-empty batch."""
    chunks = _drain(batches)
    assert len(chunks) == sum(1 for b in batches if b)
    written = b"".join(ensure_bytes(chunk, SEP) for chunk in chunks)
    assert written == b"".join(ensure_bytes(frame, SEP) for batch in batches for frame in batch)


def _events(raw: bytes) -> list[dict[str, Any]]:
    """The JSON-RPC frames in an SSE body, in order (each event one ``data:`` line here)."""
    text = raw.decode()
    assert "\r\n\r\n" in text
    events = [e for e in text.split("\r\n\r\n") if e]
    return [json.loads(e.split("data: ", 1)[1]) for e in events]


def test_a_turns_frames_in_batches_carry_every_delta_in_order(server, make_a2a, monkeypatch):
    written: list[bytes] = []

    async def spy(batches: Any, sep: Any) -> Any:
        async for chunk in coalesced(batches, sep):
            written.append(ensure_bytes(chunk, sep()))
            yield chunk

    coalesced = fast_stream.coalesced
    monkeypatch.setattr(fast_stream, "coalesced", spy)
    a2a = make_a2a(server, "1.0")
    sid = f"batch-{uuid.uuid4().hex[:8]}"
    turns = []
    for text in ("hello there, how are you today", "and a second message, a little longer than the first"):
        written.clear()
        raw = a2a.stream(text, sid)
        frames = [f for chunk in written for f in _events(chunk)]
        assert frames == a2a.last_raw  # the client read every frame the server wrote, in order
        events = [normalize_result(f["result"]) for f in frames]
        assert events == raw
        turn = Turn(events)
        assert turn.final["status"]["state"] == "completed"
        deltas = [
            texts(e["status"]["message"])
            for e in events
            if e["kind"] == "status-update"
            and "message" in e["status"]
            and e["status"]["message"]["metadata"].get("kagent_adk_partial")
        ]
        assert len(deltas) >= 3
        assert "".join(deltas) == turn.answer  # every delta, in order
        turns.append((len(written), len(frames)))
    # the turn's job emits some events back to back: at least one write carried several
    assert any(writes < frames for writes, frames in turns), turns
