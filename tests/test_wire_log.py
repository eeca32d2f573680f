"""``--wire-log FILE``: every request, answer and SSE / gRPC frame of a command, in order, with
timings, credentials redacted, bounded; a curl line per HTTP request. Run against a2a-sdk's own
server on JSON-RPC, HTTP+JSON and gRPC."""

from __future__ import annotations

import json
import shlex
import sys
from pathlib import Path

import httpx
import pytest

sys.path.insert(0, str(Path(__file__).parent / "a2a_servers"))

from full_servers import full_app

from asgi_thread import ServeInThread
from clirun import isolate, runner
from rewindtui.client import wire_log
from rewindtui.client.wire_log import WireLog, curl_of, redact_body

SECRET = "wire-secret-token-0042"


def test_secrets_in_bodies_and_headers_are_redacted():
    body = json.dumps(
        {"url": "http://h/", "token": "abc", "nested": [{"pushNotificationConfig": {"token": "def"}}], "n": 1}
    )
    shown = json.loads(redact_body(body))
    assert shown == {
        "url": "http://h/",
        "token": "***",
        "nested": [{"pushNotificationConfig": {"token": "***"}}],
        "n": 1,
    }
    headers = wire_log.redact_headers({"Authorization": "Bearer x", "X-API-Key": "k", "Accept": "a"})
    assert headers == {"Authorization": "***", "X-API-Key": "***", "Accept": "a"}
    big = redact_body(b"x" * (wire_log.MAX_BODY + 10))
    assert len(big) < wire_log.MAX_BODY + 100 and big.endswith(f"({wire_log.MAX_BODY + 10:,} bytes in all)")


def test_the_log_is_bounded_and_keeps_the_newest(tmp_path):
    log = WireLog(tmp_path / "w.jsonl", max_entries=5, max_bytes=10_000)
    for n in range(12):
        log.add("frame", id=1, body=str(n))
    assert [e["body"] for e in log.entries] == ["7", "8", "9", "10", "11"] and log.dropped == 7
    log.close()
    assert len((tmp_path / "w.jsonl").read_text().splitlines()) == 12  # the file has every entry
    small = WireLog(max_entries=100, max_bytes=500)
    for _ in range(50):
        small.add("frame", body="y" * 40)
    assert small.size <= 500 and len(small.entries) < 50


def test_curl_repeats_the_request():
    line = curl_of(
        "POST", "http://h/a b", {"Content-Type": "application/json", "Authorization": "***", "Host": "h"}, '{"a": 1}'
    )
    assert shlex.split(line) == [
        "curl",
        "-sS",
        "-X",
        "POST",
        "http://h/a b",
        "-H",
        "Content-Type: application/json",
        "-H",
        "Authorization: ***",
        "--data-raw",
        '{"a": 1}',
    ]


async def test_an_endless_sse_event_is_logged_cut_not_kept():
    log = WireLog()
    limit = wire_log.MAX_BODY

    async def chunks():
        yield b"data: "
        for _ in range(12):
            yield b"z" * (limit // 4)

    def endless(request: httpx.Request) -> httpx.Response:  # one event that never ends, streamed
        return httpx.Response(200, headers={"content-type": "text/event-stream"}, content=chunks())

    async with httpx.AsyncClient(transport=httpx.MockTransport(endless)) as http:
        wire_log.attach(http, log)
        response = await http.get("http://h/stream")
        assert len(response.content) == (limit // 4) * 12 + 6  # the client still reads all of it
    frames = [e for e in log.entries if e["kind"] == "frame"]
    assert frames and all(e.get("cut") for e in frames) and all(len(e["body"]) < limit + 100 for e in frames)


@pytest.fixture(scope="module")
def sdk():
    served = ServeInThread(factory=lambda url: full_app(url + "/")).start()
    yield served
    served.stop()


@pytest.mark.slow
@pytest.mark.parametrize("binding", ["jsonrpc", "http+json", "grpc"])
def test_send_with_a_wire_log(binding, sdk, tmp_path, monkeypatch, capsys):
    isolate(tmp_path, monkeypatch)
    monkeypatch.setenv("WIRE_TOKEN", SECRET)
    path = tmp_path / "wire.jsonl"
    run = runner(capsys, "--url", sdk.url + "/", "--binding", binding, "--bearer-env", "WIRE_TOKEN", "--grpc-same-host")
    result = run("send", "four words come back", "--wire-log", str(path))
    assert result.rc == 0, result.err
    text = path.read_text()
    assert SECRET not in text
    entries = [json.loads(line) for line in text.splitlines()]
    assert [e["seq"] for e in entries] == sorted(e["seq"] for e in entries)
    assert [e["t"] for e in entries] == sorted(e["t"] for e in entries)
    card = [e for e in entries if e["kind"] == "request" and e["url"].endswith("/.well-known/agent-card.json")]
    assert card and card[0]["headers"].get("authorization") == "***" and "authorization: ***" in card[0]["curl"]
    turn = next(
        e for e in entries if e["kind"] == "request" and e is not card[0] and "four words" in (e.get("body") or "")
    )
    frames = [e for e in entries if e["kind"] == "frame" and e["id"] == turn["id"]]
    words = "".join(
        p.get("text", "")
        for f in frames
        for p in (json.loads(f["body"]).get("result", json.loads(f["body"])).get("artifactUpdate") or {})
        .get("artifact", {})
        .get("parts", [])
    )
    assert words == "You said: four words come back (turn 1)"  # every frame of the stream, in order
    assert entries[-1]["kind"] == "end" or any(e["kind"] == "end" and e["id"] == turn["id"] for e in entries)
    if binding != "grpc":
        assert "curl" in turn and turn["curl"].startswith("curl -sS -X POST")
    assert wire_log.active() is None  # the command's log ends with it
