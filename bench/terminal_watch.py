"""Reading a real terminal's screen (a tmux session) without loading the machine: the benches
that time what a terminal shows (``bench_launch.py``, ``bench_app.py``'s first paint) wait for a
text on the screen this way."""

from __future__ import annotations

import os
import select
import subprocess
import sys
import time


class Watch:
    """The screen of one tmux session, read without polling: a tmux control-mode client
    (``tmux -C attach``) attached to it reports each write to the pane (``%output``), and the
    screen is read (``capture-pane``) through that same client after each burst of writes.

    Reading the screen every few milliseconds with a ``tmux capture-pane`` process each was the
    observer's own load: about 1.7 ms of CPU per read (a process started, the tmux server's
    work), a third of a core at a 5 ms interval, taken from the core the app and its server
    share when the other one is busy. Here the screen is read only when the app wrote to it, by
    a process that already runs."""

    #: read the screen at least this often even without a write reported (a safety net only)
    IDLE = 0.5

    def __init__(self, tmux: tuple[str, ...], name: str) -> None:
        """``tmux``: the command that reaches the session's tmux server (``tmux -L SOCKET ...``)."""
        self.name = name
        self.client = subprocess.Popen(
            [*tmux, "-C", "attach-session", "-t", name],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            bufsize=0,
        )
        assert self.client.stdin is not None and self.client.stdout is not None
        self.commands, self.replies = self.client.stdin, self.client.stdout.fileno()
        self.partial = b""
        self.unread: list[bytes] = []  # complete lines printed by the client, not read yet
        self.wrote = True  # read the screen once before waiting for a write

    def next_line(self, timeout: float) -> bytes | None:
        """The client's next line, waiting up to ``timeout`` seconds for it; None if none came."""
        deadline = time.perf_counter() + timeout
        while not self.unread:
            ready, _, _ = select.select([self.replies], [], [], max(0.0, deadline - time.perf_counter()))
            if not ready:
                return None
            data = os.read(self.replies, 1 << 16)
            if not data:
                raise RuntimeError(f"the tmux control client of {self.name} ended")
            *self.unread, self.partial = (self.partial + data).split(b"\n")
        return self.unread.pop(0)

    def note(self, line: bytes) -> None:
        if line.startswith(b"%output"):
            self.wrote = True

    def screen(self) -> str:
        """The pane's text now (``capture-pane -p`` through the control client)."""
        self.commands.write(f"capture-pane -p -t {self.name}\n".encode())
        while (line := self.next_line(10.0)) is not None and not line.startswith(b"%begin"):
            self.note(line)  # a notification before the reply
        body: list[bytes] = []
        while (line := self.next_line(10.0)) is not None and not line.startswith((b"%end", b"%error")):
            body.append(line)  # a reply's lines are never interleaved with notifications
        return b"\n".join(body).decode(errors="replace")

    def wait(self, marker: str | tuple[str, ...], start: float, timeout: float) -> float:
        """Seconds from ``start`` until the screen shows ``marker`` (or one of them); nan on timeout."""
        markers = (marker,) if isinstance(marker, str) else marker
        while time.perf_counter() - start < timeout:
            if self.wrote:
                self.wrote = False
                if any(m in self.screen() for m in markers):
                    return time.perf_counter() - start
            line = self.next_line(min(self.IDLE, timeout - (time.perf_counter() - start)))
            if line is None:
                self.wrote = True  # nothing for a while: read the screen anyway
            else:
                self.note(line)
                while self.unread:  # the rest of the burst
                    self.note(self.unread.pop(0))
        # the figure is nan (the case did not run); what the screen showed instead says why
        shown = self.screen()
        print(f"{self.name}: no {marker!r} on the screen in {timeout:.0f} s; it shows:\n{shown}", file=sys.stderr)
        return float("nan")

    def shows(self, marker: str, timeout: float) -> bool:
        """Whether the screen shows ``marker`` within ``timeout`` seconds; False as soon as the
        session ends (the client reports ``%exit`` and its output closes), without waiting on."""
        start = time.perf_counter()
        try:
            while time.perf_counter() - start < timeout:
                if self.wrote:
                    self.wrote = False
                    if marker in self.screen():
                        return True
                line = self.next_line(max(0.0, min(self.IDLE, timeout - (time.perf_counter() - start))))
                if line is None:
                    self.wrote = True
                elif line.startswith(b"%exit"):
                    return False
                else:
                    self.note(line)
        except (RuntimeError, OSError):  # the client ended with the session (its pipes closed)
            return False
        return False

    def close(self) -> None:
        self.client.kill()
        self.client.wait()
