"""Which conversation a rewind's fork came from, kept on this machine so that the last rewind of a
session can be undone after a restart.

kagent 1.0's controller cannot tell: a ``Session`` has no "forked from" field (sessions.proto@1e2422ff),
``ForkSession`` answers only the new session, and ``ListCheckpoints`` is per session (the fork's own).
So each rewind (a fork from a checkpoint)
is recorded in one small JSON file under the data dir, ``kagent1-forks.json`` (mode 0600), keyed by
the controller's origin and the fork's id. Undo reads it, opens the original again and drops the
record (the fork stays a session of its own). A store without a path keeps the records in memory.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

log = logging.getLogger(__name__)

FILE = "kagent1-forks.json"
#: the records kept at most (the oldest go first): one per rewind, never read in bulk
MAX_RECORDS = 500
_VERSION = 1


@dataclass(frozen=True)
class ForkRecord:
    """One rewind on kagent 1.0: the app moved to ``fork``; ``original`` is kept."""

    fork: str  # the new conversation's id
    original: str  # the conversation rewound (kept as it was)
    before_turn: int  # the rewind was to before this turn (1-based) of the original
    turns_gone: int  # the original's turns the fork does not have
    fork_turns: int  # the turns the fork had when it was made
    at: float  # when (seconds since the epoch)


def _record(value: Any) -> ForkRecord | None:
    if not isinstance(value, dict):
        return None
    try:
        record = ForkRecord(
            fork=str(value["fork"]),
            original=str(value["original"]),
            before_turn=int(value["before_turn"]),
            turns_gone=int(value["turns_gone"]),
            fork_turns=int(value["fork_turns"]),
            at=float(value["at"]),
        )
    except (KeyError, TypeError, ValueError):
        return None
    return record if record.fork and record.original else None


class ForkStore:
    """``ForkStore(path, origin)``: the records of one controller (``origin``) in the file at
    ``path`` (shared with other controllers' records), or in memory when ``path`` is None."""

    def __init__(self, path: Path | None, origin: str) -> None:
        self.path = path
        self.origin = origin.rstrip("/")
        self._memory: dict[str, dict[str, Any]] = {}

    def _key(self, fork_id: str) -> str:
        return f"{self.origin} {fork_id}"

    def _read(self) -> dict[str, dict[str, Any]]:
        if self.path is None:
            return self._memory
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            return {}
        except (OSError, ValueError) as exc:
            log.warning("kagent 1.0 fork records in %s could not be read (%s): starting afresh", self.path, exc)
            return {}
        forks = data.get("forks") if isinstance(data, dict) else None
        return {k: v for k, v in forks.items() if isinstance(v, dict)} if isinstance(forks, dict) else {}

    def _write(self, forks: dict[str, dict[str, Any]]) -> None:
        if len(forks) > MAX_RECORDS:
            newest = sorted(forks.items(), key=lambda kv: float(kv[1].get("at") or 0))[-MAX_RECORDS:]
            forks = dict(newest)
        if self.path is None:
            self._memory = forks
            return
        self.path.parent.mkdir(parents=True, exist_ok=True)
        tmp = self.path.with_name(f".{self.path.name}.{os.getpid()}.tmp")
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as out:
                json.dump({"version": _VERSION, "forks": forks}, out, indent=1, sort_keys=True)
            os.chmod(tmp, 0o600)  # also when the file was left by an earlier run with other bits
            os.replace(tmp, self.path)
        except BaseException:
            with contextlib.suppress(OSError):
                tmp.unlink()
            raise

    # -- the records -----------------------------------------------------------------------------
    def get(self, fork_id: str) -> ForkRecord | None:
        return _record(self._read().get(self._key(fork_id)))

    def put(self, record: ForkRecord) -> None:
        forks = self._read()
        forks[self._key(record.fork)] = asdict(record)
        self._write(forks)

    def pop(self, fork_id: str) -> ForkRecord | None:
        forks = self._read()
        record = _record(forks.pop(self._key(fork_id), None))
        self._write(forks)
        return record


def new_record(fork: str, original: str, before_turn: int, original_turns: int) -> ForkRecord:
    kept = max(0, before_turn - 1)
    return ForkRecord(fork, original, before_turn, max(0, original_turns - kept), kept, time.time())
