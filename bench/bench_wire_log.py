"""What the wire log costs a stream: an A2A client reading one long SSE stream (the a2a-sdk 1.3
capture's frames repeated, tests/fixtures/a2a-1.0/a2a-sdk-1.3.0_SendStreamingMessage_v1.0.txt) through
httpx's MockTransport, three ways in one run: a bare httpx client, the client as every A2AClient now
has it (the recording transport attached, no log active: it passes through), and with a log
active (each frame parsed, redacted and kept, bounded). Prints the ratios against the bare client.

    python bench/bench_wire_log.py [--frames N]
    python bench/bench_wire_log.py --quick   # a smoke run: 500 frames (the figures mean nothing)
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import time
from pathlib import Path

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

from captures import load
from rewindtui.client import wire_log
from rewindtui.client.transports.http import sse_frames


def events(frames: int) -> list[bytes]:
    capture = load("a2a-1.0/a2a-sdk-1.3.0_SendStreamingMessage_v1.0.txt")
    one = [e + b"\n\n" for e in capture.body.replace(b"\r\n", b"\n").split(b"\n\n") if e.strip()]
    return [one[i % len(one)] for i in range(frames)]


async def read_all(body: list[bytes], how: str) -> float:
    async def stream():
        for chunk in body:
            yield chunk

    def answer(request: httpx.Request) -> httpx.Response:
        return httpx.Response(200, headers={"content-type": "text/event-stream"}, content=stream())

    log = wire_log.WireLog() if how == "active" else None
    previous = wire_log.activate(log)
    try:
        async with httpx.AsyncClient(transport=httpx.MockTransport(answer)) as http:
            if how != "bare":
                wire_log.attach(http)
            started = time.perf_counter()
            async with http.stream("POST", "http://127.0.0.1:1/", json={"jsonrpc": "2.0"}) as response:
                count = 0
                async for _ in sse_frames(response, 64 * 1024 * 1024):
                    count += 1
            elapsed = time.perf_counter() - started
    finally:
        wire_log.activate(previous)
    assert count == len(body), (count, len(body))
    if log is not None:
        assert len(log.entries) <= wire_log.MAX_ENTRIES
    return elapsed


async def main(frames: int) -> None:
    body = events(frames)
    await read_all(body[:100], "bare")  # warm up
    times = {how: min([await read_all(body, how) for _ in range(3)]) for how in ("bare", "inactive", "active")}
    bare = times["bare"]
    print(f"{frames:,} SSE frames, best of 3 (one run)")
    for how, seconds in times.items():
        print(f"  {how:9} {seconds * 1000:8.1f} ms  {seconds / bare:5.2f}x  ({frames / seconds:,.0f} frames/s)")
    print("targets: recording attached but no log active within 1.2x of bare; a log active at least 5,000 frames/s")


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--frames", type=int, default=20_000)
    parser.add_argument("--quick", action="store_true", help="a smoke run (the figures mean nothing): 500 frames")
    args = parser.parse_args()
    asyncio.run(main(500 if args.quick else args.frames))
