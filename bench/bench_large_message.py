"""What one large message costs the embedded server: its peak memory and the disk it takes.

Starts a real ``rewindtui serve`` on a fresh data directory, reads its resident memory (Linux:
``VmRSS`` and the peak ``VmHWM`` of ``/proc/PID/status``) when idle, sends TURNS messages of SIZE
MB each (A2A ``message/send``, one text part), and prints, measured in this run: the answer (or
the refusal), the peak resident memory above the idle one as a multiple of the message's size,
and the data directory's size on disk as a multiple of what was sent.

    python bench/bench_large_message.py                 # 50 MB, two turns
    python bench/bench_large_message.py --mb 20 --turns 1
    python bench/bench_large_message.py --quick         # a smoke run: one 1 MB message
    REWINDTUI_SERVER_MAX_REQUEST_MB=100 python bench/bench_large_message.py   # with a higher limit
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import time
import uuid
from pathlib import Path
from typing import Any

import httpx

from scratch import scratch

AGENT_PATH = "/api/a2a/local/demo/"


def status_kb(pid: int, field: str) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1])
    raise RuntimeError(f"no {field} for {pid}")


def disk_bytes(path: Path) -> int:
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file())


def _send_body(request_id: str, session: str, text: str) -> dict[str, Any]:
    """A JSON-RPC ``message/send`` (A2A 0.3) of ``text`` in ``session``, a fresh message id."""
    message = {
        "kind": "message",
        "role": "user",
        "messageId": str(uuid.uuid4()),
        "contextId": session,
        "parts": [{"kind": "text", "text": text}],
    }
    return {"jsonrpc": "2.0", "id": request_id, "method": "message/send", "params": {"message": message}}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mb", type=float, default=50.0, help="size of each message in MB (default 50)")
    parser.add_argument("--turns", type=int, default=2, help="messages sent (default 2)")
    parser.add_argument("--quick", action="store_true", help="a smoke run (the figures mean nothing): one 1 MB message")
    args = parser.parse_args()
    if args.quick:
        args.mb, args.turns = 1.0, 1
    if not Path("/proc/self/status").exists():
        print("needs Linux (/proc/PID/status)")
        return 1
    with scratch("rewindtui-bench-large-") as data:
        proc = subprocess.Popen(
            [sys.executable, "-m", "rewindtui.server.process.serve", "--port", "0", "--data-dir", str(data)],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        try:
            first = proc.stdout.readline() if proc.stdout else ""
            if not first.startswith("serving on "):
                print("the server did not start:", first, proc.stderr.read() if proc.stderr else "")
                return 1
            base = first.split("serving on ", 1)[1].strip()
            size = int(args.mb * 1024 * 1024)
            http = httpx.Client(timeout=600)
            session = str(uuid.uuid4())
            warm = _send_body("warm", session, "hello")
            http.post(base + AGENT_PATH, json=warm).raise_for_status()  # the agent loaded, one turn taken
            idle_kb = status_kb(proc.pid, "VmRSS")
            sent = 0
            for turn in range(args.turns):
                text = (f"turn {turn} " + "x" * size)[:size]
                body = _send_body(str(turn), session, text)
                started = time.monotonic()
                resp = http.post(base + AGENT_PATH, json=body)
                seconds = time.monotonic() - started
                answer = resp.json()
                if "error" in answer:
                    said = f"refused: HTTP {resp.status_code}, {answer['error'].get('message', '')[:160]}"
                else:
                    sent += size
                    said = f"answered ({answer['result'].get('status', {}).get('state')})"
                print(f"turn {turn + 1}: {args.mb:g} MB in {seconds:.1f} s: {said}")
            peak_kb = status_kb(proc.pid, "VmHWM")
            total = args.mb * args.turns
            print(
                f"server memory idle {idle_kb / 1024:.0f} MB, peak {peak_kb / 1024:.0f} MB: "
                f"{(peak_kb - idle_kb) / 1024:.0f} MB above idle = {(peak_kb - idle_kb) / 1024 / args.mb:.1f}x one "
                f"message ({args.mb:g} MB)"
            )
        finally:
            proc.terminate()
            try:
                proc.wait(30)
            except subprocess.TimeoutExpired:
                proc.kill()
        on_disk = disk_bytes(data)
        stored = f" = {on_disk / sent:.1f}x what was stored ({sent / 1024 / 1024:.0f} MB)" if sent else ""
        print(
            f"data directory after {args.turns} turn(s) of {total:g} MB sent: {on_disk / 1024 / 1024:.0f} MB on "
            f"disk{stored}"
        )
        return 0


if __name__ == "__main__":
    sys.exit(main())
