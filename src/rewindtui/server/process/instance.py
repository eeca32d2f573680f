"""One server per data directory, found again by every app that uses that directory.

Standard library only (``spawn`` imports it, and must stay light).

* ``server.lock`` -- the serving process holds an exclusive lock on it for its whole life, so
  a second server on the same directory (two ADK writers would make each other's turns fail
  with ``StaleSessionError``) is refused with a message naming the first one.
* ``server.json`` -- written by the serving process once it listens, mode 0600 (it holds the
  token): its pid, URLs, token and an instance id. Another app reads it, checks the server
  really is that one (``GET /api/server`` with the token answers the same instance id), and
  uses it instead of starting its own; it registers itself as a client
  (``POST /api/server/clients``) so a spawned server lives while any app that uses it lives.
"""

from __future__ import annotations

import contextlib
import json
import os
import secrets
import urllib.error
import urllib.request
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import IO, Any

from rewindtui.server.shared.paths import CLIENTS_PATH, SERVER_PATH
from rewindtui.server.shared.pids import alive

try:
    import fcntl
except ImportError:  # pragma: no cover - Windows: one server per directory is not enforced
    fcntl = None  # type: ignore[assignment]

LOCK_FILE = "server.lock"
STATE_FILE = "server.json"
SPAWN_LOCK_FILE = "spawn.lock"


class DataDirBusy(RuntimeError):
    """Another live server holds the data directory."""


class DataDirUnusable(RuntimeError):
    """The data directory cannot be written."""


def check_writable(data_dir: Path, files: tuple[str, ...] = ()) -> None:
    """Raise :class:`DataDirUnusable` (one actionable line) unless ``data_dir`` and ``files`` in it
    can be written."""
    try:
        data_dir.mkdir(parents=True, exist_ok=True, mode=0o700)  # private from the start (integrity.py)
        probe = data_dir / f".write-test-{os.getpid()}"
        probe.write_bytes(b"")
        probe.unlink()
        for name in files:
            path = data_dir / name
            if path.exists() and not os.access(path, os.W_OK):
                raise PermissionError(13, "read-only file", str(path))
    except OSError as exc:
        reason = exc.strerror or str(exc)
        where = f" ({exc.filename})" if getattr(exc, "filename", None) else ""
        raise DataDirUnusable(
            f"cannot write to the data directory {data_dir}: {reason}{where}; "
            "make it writable or choose another with --data-dir"
        ) from None


def new_token() -> str:
    return secrets.token_urlsafe(32)


def new_instance_id() -> str:
    return secrets.token_hex(8)


@dataclass(frozen=True)
class ServerState:
    pid: int
    base_url: str
    agent_url: str
    api_url: str
    token: str | None
    instance: str

    def describe(self) -> str:
        return f"pid {self.pid} at {self.agent_url}"


class FileLock:
    """An exclusive ``flock`` on a file in the data dir (released on ``release`` or process exit)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._file: IO[str] | None = None

    def acquire(self, *, wait: bool) -> bool:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        handle = open(self.path, "a+")
        if fcntl is None:  # pragma: no cover - Windows
            self._file = handle
            return True
        try:
            fcntl.flock(handle.fileno(), fcntl.LOCK_EX | (0 if wait else fcntl.LOCK_NB))
        except BlockingIOError:
            handle.close()
            return False
        self._file = handle
        return True

    def release(self) -> None:
        handle, self._file = self._file, None
        if handle is not None:
            if fcntl is not None:
                with contextlib.suppress(OSError):
                    fcntl.flock(handle.fileno(), fcntl.LOCK_UN)
            handle.close()

    @property
    def held(self) -> bool:
        return self._file is not None


def read_state(data_dir: Path) -> ServerState | None:
    try:
        data = json.loads((data_dir / STATE_FILE).read_text())
        return ServerState(**{k: data[k] for k in ServerState.__dataclass_fields__})
    except (OSError, ValueError, KeyError, TypeError):
        return None


def write_state(data_dir: Path, state: ServerState) -> None:
    """Write ``server.json`` atomically, readable by this user only."""
    path = data_dir / STATE_FILE
    tmp = path.with_name(f".{STATE_FILE}.{os.getpid()}")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w") as out:
        json.dump(asdict(state), out)
    os.chmod(tmp, 0o600)
    os.replace(tmp, path)


def remove_state(data_dir: Path, instance: str) -> None:
    """Remove ``server.json`` if it still describes ``instance``."""
    state = read_state(data_dir)
    if state is not None and state.instance == instance:
        with contextlib.suppress(OSError):
            (data_dir / STATE_FILE).unlink()


class DataDirHold:
    """This process serves ``data_dir``: it checks it can write there, holds ``server.lock``, and
    publishes ``server.json`` once it listens (``rewindtui serve`` and ``EmbeddedServer``)."""

    def __init__(self, data_dir: Path, files: tuple[str, ...] = ()) -> None:
        self.data_dir = data_dir
        self.files = files
        self.instance = new_instance_id()
        self._lock = FileLock(data_dir / LOCK_FILE)

    def acquire(self) -> None:
        """Raises :class:`DataDirUnusable` or :class:`DataDirBusy` (naming the server that has it)."""
        check_writable(self.data_dir, self.files)
        if not self._lock.acquire(wait=False):
            state = read_state(self.data_dir)
            where = state.describe() if state else "another process"
            use = state.agent_url if state else "URL"
            raise DataDirBusy(
                f"{self.data_dir} is already served by {where}; use that server (rewindtui --url {use}) "
                "or another --data-dir"
            )

    def publish(self, *, base_url: str, agent_url: str, api_url: str, token: str | None) -> ServerState:
        state = ServerState(os.getpid(), base_url, agent_url, api_url, token, self.instance)
        write_state(self.data_dir, state)
        return state

    def release(self) -> None:
        if self._lock.held:
            remove_state(self.data_dir, self.instance)
            self._lock.release()


def _call(state: ServerState, method: str, path: str, body: Any = None, timeout: float = 3.0) -> Any:
    data = None if body is None else json.dumps(body).encode()
    request = urllib.request.Request(state.base_url + path, data=data, method=method)
    if data is not None:
        request.add_header("Content-Type", "application/json")
    if state.token:
        request.add_header("Authorization", f"Bearer {state.token}")
    with urllib.request.urlopen(request, timeout=timeout) as response:
        raw = response.read()
    return json.loads(raw) if raw else None


def healthy(state: ServerState, timeout: float = 3.0) -> bool:
    """The process of ``state`` lives and answers as that instance, with that token."""
    if not alive(state.pid):
        return False
    try:
        answer = _call(state, "GET", SERVER_PATH, timeout=timeout)
    except (OSError, ValueError, urllib.error.URLError):
        return False
    data = answer.get("data") if isinstance(answer, dict) else None
    return isinstance(data, dict) and data.get("instance") == state.instance


def clients(base_url: str, token: str | None, timeout: float = 3.0) -> list[int] | None:
    """The pids of the apps the server at ``base_url`` serves (its ``GET /api/server``); None when
    it does not answer."""
    state = ServerState(0, base_url, "", "", token, "")
    try:
        answer = _call(state, "GET", SERVER_PATH, timeout=timeout)
    except (OSError, ValueError, urllib.error.URLError):
        return None
    data = answer.get("data") if isinstance(answer, dict) else None
    pids = data.get("clients") if isinstance(data, dict) else None
    return [p for p in pids if isinstance(p, int)] if isinstance(pids, list) else None


def attach(state: ServerState, pid: int) -> None:
    """Register ``pid`` as a client of ``state``'s server (it lives while a client does)."""
    _call(state, "POST", CLIENTS_PATH, {"pid": pid})


def detach(state: ServerState, pid: int) -> None:
    with contextlib.suppress(OSError, ValueError, urllib.error.URLError):
        _call(state, "DELETE", f"{CLIENTS_PATH}/{pid}")
