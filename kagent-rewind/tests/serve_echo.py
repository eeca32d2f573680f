"""Serve the echo agent (``echo_agent.py``) on a loopback port, for tests driven from another venv.

    python serve_echo.py [--no-rewind] [--stream] [--record FILE]

Prints ``READY <url>`` once the agent card is served. ``--record`` appends every JSON-RPC request
body the server receives to FILE, one JSON object per line (to check what a client sent).
Stops on SIGTERM or when its standard input closes (so it never outlives the test that started it).
"""

from __future__ import annotations

import argparse
import json
import signal
import sys
import threading
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from echo_agent import build_app, serve


class Recorder:
    """ASGI middleware: a copy of each POST body, as JSON lines, in ``path``."""

    def __init__(self, app: Any, path: Path) -> None:
        self.app = app
        self.path = path
        self.lock = threading.Lock()

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http" or scope["method"] != "POST":
            await self.app(scope, receive, send)
            return
        chunks: list[bytes] = []

        async def tee() -> Any:
            event = await receive()
            if event["type"] == "http.request":
                chunks.append(event.get("body", b""))
                if not event.get("more_body"):
                    self._write(b"".join(chunks))
            return event

        await self.app(scope, tee, send)

    def _write(self, body: bytes) -> None:
        try:
            line = json.dumps(json.loads(body))
        except ValueError:
            line = json.dumps({"unparsable": body.decode("utf-8", "replace")})
        with self.lock, self.path.open("a", encoding="utf-8") as f:
            f.write(line + "\n")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--no-rewind", action="store_true", help="stock kagent-adk, without the add-on")
    parser.add_argument("--stream", action="store_true", help="model streaming on (text deltas)")
    parser.add_argument("--record", type=Path, help="append each request body to this file")
    args = parser.parse_args()

    def make(url: str) -> Any:
        app = build_app(url, rewind=not args.no_rewind, stream=args.stream)
        if args.record:
            app.add_middleware(Recorder, path=args.record)
        return app

    served = serve(make)
    done = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: done.set())
    threading.Thread(target=lambda: (sys.stdin.read(), done.set()), daemon=True).start()
    print(f"READY {served.url}", flush=True)
    done.wait()
    served.stop()


if __name__ == "__main__":
    main()
