"""Read the real wire captures in tests/fixtures (request JSON, response status, SSE data lines)."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

FIXTURES = Path(__file__).parent / "fixtures"


@dataclass
class Capture:
    path: Path
    request: dict | None
    status: int
    headers: dict[str, str]
    body: bytes  # the response body exactly as captured

    @property
    def data_lines(self) -> list[str]:
        return [line[5:].lstrip(" ") for line in self.body.decode().splitlines() if line.startswith("data:")]

    @property
    def json_body(self):
        return json.loads(self.body)


def load(relative: str) -> Capture:
    path = FIXTURES / relative
    text = path.read_bytes()
    request = None
    if text.startswith(b"### REQUEST"):
        req_part, _, text = text.partition(b"### RESPONSE\n")
        head, _, req_body = req_part.partition(b"\n\n")
        req_body = req_body.strip()
        request = json.loads(req_body) if req_body else None
    head, _, body = text.partition(b"\r\n\r\n") if b"\r\n\r\n" in text.split(b"\n\n", 1)[0] else text.partition(b"\n\n")
    lines = head.decode().splitlines()
    status = int(lines[0].split()[1])
    headers = {}
    for line in lines[1:]:
        k, _, v = line.partition(":")
        headers[k.strip().lower()] = v.strip()
    return Capture(path, request, status, headers, body)
