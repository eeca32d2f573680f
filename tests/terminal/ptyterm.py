"""The app in a real pseudo-terminal, its screen read back by a terminal emulator (pyte).

Pilot hands the app key events; a terminal hands it bytes, and some keys arrive as something else
(most terminals send alt+f as ESC f, which Textual reads as ctrl+→). This runs ``rewindtui`` as a
child process on a pty, writes the bytes a terminal would send, and reads what it draws through
pyte's VT100 emulator. POSIX only (``pty``), as the app's own terminal driver is.
"""

from __future__ import annotations

import fcntl
import os
import pty
import select
import signal
import struct
import sys
import termios
import threading
import time
from collections.abc import Callable, Sequence
from pathlib import Path

import pyte

#: bytes a terminal sends for keys (xterm; what Textual's input parser reads)
KEYS = {
    "enter": b"\r",
    "escape": b"\x1b",
    "ctrl+c": b"\x03",
    "ctrl+d": b"\x04",
    "ctrl+q": b"\x11",
    "ctrl+z": b"\x1a",
    "ctrl+r": b"\x12",
    "ctrl+j": b"\n",
    "tab": b"\t",
    "up": b"\x1b[A",
    "down": b"\x1b[B",
    "alt+up": b"\x1b[1;3A",
    "alt+down": b"\x1b[1;3B",
    "pageup": b"\x1b[5~",
    "pagedown": b"\x1b[6~",
    "f2": b"\x1bOQ",
    "f4": b"\x1bOS",
    "backspace": b"\x7f",
}

PASTE_START, PASTE_END = b"\x1b[200~", b"\x1b[201~"


class Terminal:
    """``argv`` running on a pty of ``columns`` x ``lines``; its screen as pyte reads it."""

    def __init__(self, argv: Sequence[str], *, env: dict[str, str], columns: int = 100, lines: int = 30) -> None:
        self.screen = pyte.Screen(columns, lines)
        self.stream = pyte.ByteStream(self.screen)
        self._lock = threading.Lock()
        self.pid, self.fd = pty.fork()
        if self.pid == 0:  # the child: the app, on the pty's other side
            try:
                os.execvpe(argv[0], list(argv), env)
            finally:
                os._exit(127)
        fcntl.ioctl(self.fd, termios.TIOCSWINSZ, struct.pack("HHHH", lines, columns, 0, 0))
        self.status: int | None = None
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        while True:
            try:
                ready, _, _ = select.select([self.fd], [], [], 0.05)
                if not ready:
                    if self._exited():
                        return
                    continue
                data = os.read(self.fd, 65536)
            except OSError:  # the child closed the pty
                return
            if not data:
                return
            with self._lock:
                self.stream.feed(data)

    def _exited(self) -> bool:
        if self.status is None:
            pid, status = os.waitpid(self.pid, os.WNOHANG)
            if pid:
                self.status = os.waitstatus_to_exitcode(status)
        return self.status is not None

    # -- input -----------------------------------------------------------------------------------
    def type(self, text: str) -> None:
        os.write(self.fd, text.encode())

    def press(self, *keys: str) -> None:
        for key in keys:
            os.write(self.fd, KEYS[key])
            time.sleep(0.05)  # a person's pace: two Escs apart are two keys, not alt+<next>

    def paste(self, text: str) -> None:
        """A bracketed paste, as a terminal sends one (the app turns the mode on)."""
        os.write(self.fd, PASTE_START + text.encode() + PASTE_END)

    # -- output ----------------------------------------------------------------------------------
    def text(self) -> str:
        with self._lock:
            return "\n".join(line.rstrip() for line in self.screen.display)

    def wait_for(self, condition: str | Callable[[str], bool], timeout: float = 30.0) -> str:
        """Wait until the screen shows ``condition`` (a text, or a test of the whole screen)."""
        test = (lambda screen: condition in screen) if isinstance(condition, str) else condition
        deadline = time.monotonic() + timeout
        while True:
            screen = self.text()
            if test(screen):
                return screen
            if time.monotonic() > deadline:
                raise AssertionError(f"not on screen in {timeout} s: {condition!r}\n--- screen ---\n{screen}")
            if self._exited():
                raise AssertionError(f"the app exited ({self.status}) before showing {condition!r}\n{screen}")
            time.sleep(0.05)

    def wait_exit(self, timeout: float = 30.0) -> int:
        deadline = time.monotonic() + timeout
        while not self._exited():
            if time.monotonic() > deadline:
                raise AssertionError(f"the app did not exit in {timeout} s\n{self.text()}")
            time.sleep(0.05)
        assert self.status is not None
        return self.status

    def close(self) -> None:
        if not self._exited():
            os.kill(self.pid, signal.SIGTERM)
            try:
                self.wait_exit(15)
            except AssertionError:
                os.kill(self.pid, signal.SIGKILL)
                os.waitpid(self.pid, 0)
        self._reader.join(timeout=2)
        os.close(self.fd)


def app_argv(data_dir: Path, *args: str) -> list[str]:
    """``rewindtui`` on the embedded server with its own data dir (the venv's Python runs it)."""
    return [sys.executable, "-m", "rewindtui", "--data-dir", str(data_dir), *args]


def app_env(home: Path) -> dict[str, str]:
    """The child's environment: this one (PYTHONPATH: the sources under test), a terminal that
    speaks xterm, its own config and data (nothing of the user's)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("REWINDTUI_")}
    env.update(
        TERM="xterm-256color",
        COLORTERM="truecolor",
        HOME=str(home),
        XDG_CONFIG_HOME=str(home / "config"),
        XDG_DATA_HOME=str(home / "data"),
        REWINDTUI_DATA_DIR=str(home / "app-data"),
        TZ="UTC",
    )
    env.pop("TEXTUAL", None)
    return env
