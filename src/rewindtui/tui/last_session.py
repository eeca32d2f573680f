"""Which session was open when the app last ended, per server: a restart opens that one (not the
newest, which may be a fork or a session another client just made). Kept in the data dir; a
damaged or missing file means "none" (the newest opens, as before).

Per terminal too: two apps on one data dir in two terminals (tmux panes, windows) each reopen
the session they had open, not the one the other opened last. The terminal is the app's tty
(``/dev/pts/N``); a terminal the file does not name (a new one, or no tty) opens the session
opened last on that server from any terminal."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

FILE = "last-session.json"
#: at most this many entries remembered (servers, and servers per terminal; the oldest go first)
MAX_SERVERS = 100


def this_terminal() -> str:
    """The terminal the app runs in: its tty's path ("" when it has none)."""
    for stream in (sys.__stdin__, sys.__stdout__):
        try:
            return os.ttyname(stream.fileno()) if stream is not None else ""
        except (OSError, ValueError):
            continue
    return ""


class LastSession:
    def __init__(self, directory: Path | None, *, terminal: str | None = None) -> None:
        self.path = directory / FILE if directory is not None else None
        self.terminal = this_terminal() if terminal is None else terminal

    def _keys(self, server: str) -> list[str]:
        """This terminal's key first, then the server's (the last opened from any terminal)."""
        return [f"{server}\t{self.terminal}", server] if self.terminal else [server]

    def _read(self) -> dict[str, str]:
        if self.path is None:
            return {}
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return {}
        if not isinstance(data, dict):
            return {}
        return {k: v for k, v in data.items() if isinstance(k, str) and isinstance(v, str) and v}

    def load(self, server: str) -> str | None:
        data = self._read()
        return next((data[key] for key in self._keys(server) if key in data), None)

    def save(self, server: str, session_id: str) -> None:
        if self.path is None or not session_id:
            return
        data = self._read()
        keys = self._keys(server)
        if all(data.get(key) == session_id for key in keys):
            return
        for key in reversed(keys):  # newest last: the oldest entries are let go first
            data.pop(key, None)
            data[key] = session_id
        while len(data) > MAX_SERVERS:
            data.pop(next(iter(data)))
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            temporary = self.path.with_name(f"{FILE}.{os.getpid()}.tmp")
            temporary.write_text(json.dumps(data), encoding="utf-8")
            temporary.replace(self.path)
        except OSError:
            return  # only which session opens next time: the newest then
