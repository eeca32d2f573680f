"""Which session was open when the app last ended, per server: a restart opens that one (not the
newest, which may be a fork or a session another client just made). Kept in the data dir; a
damaged or missing file means "none" (the newest opens, as before)."""

from __future__ import annotations

import json
import os
from pathlib import Path

FILE = "last-session.json"
#: at most this many servers remembered (the oldest entries go first)
MAX_SERVERS = 50


class LastSession:
    def __init__(self, directory: Path | None) -> None:
        self.path = directory / FILE if directory is not None else None

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
        return self._read().get(server)

    def save(self, server: str, session_id: str) -> None:
        if self.path is None or not session_id:
            return
        data = self._read()
        if data.get(server) == session_id:
            return
        data.pop(server, None)
        data[server] = session_id
        while len(data) > MAX_SERVERS:
            data.pop(next(iter(data)))
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            temporary = self.path.with_name(f"{FILE}.{os.getpid()}.tmp")
            temporary.write_text(json.dumps(data), encoding="utf-8")
            temporary.replace(self.path)
        except OSError:
            return  # only which session opens next time: the newest then
