"""The data directory checked before the server opens it.

* **Modes**: the directory 0700, the databases and their ``-wal``/``-shm`` files 0600 (they hold
  the conversations; the token file already was 0600). Missing databases are created empty with
  0600 first, so SQLite creates the ``-wal``/``-shm`` files with the same mode. Existing looser
  modes are tightened, with a note.
* **Damage**: ``PRAGMA quick_check`` on each database; a file that is not a database, or is
  damaged, refuses the start with one line naming the file and what to do (restore it from a
  backup, or move it away). The traceback goes to the log only.
* **Consistency** between ``rewindtui.db`` (sessions, tasks, messages) and ``adk_sessions.db``
  (ADK's events): one missing or empty while the other holds sessions is a mismatch this code
  cannot explain -- the server would start silently empty over existing data (or history would
  show and every send fail) -- so the start is refused, naming both files and the numbers.
* **Disk full**: no space left for the databases to grow says so in words.

:func:`check_data_dir` raises :class:`DataDirProblem` (its ``str()`` is the one line) and returns
the notes to log. A check that passed is not repeated in the same process while the files are
unchanged (``rewindtui serve`` checks before building the app; the app's startup checks again).
"""

from __future__ import annotations

import errno
import logging
import os
import shutil
import sqlite3
import stat
from pathlib import Path

from rewindtui.server.shared.paths import ADK_FILE, STORE_FILE

log = logging.getLogger(__name__)

DIR_MODE = 0o700
FILE_MODE = 0o600
SIDE_FILES = ("-wal", "-shm", "-journal")
#: Below this much free space the start is refused (SQLite needs room for its WAL and journal).
MIN_FREE_BYTES = 1024 * 1024
_WHAT_TO_DO = "restore it from a backup (rewindtui restore BACKUP --data-dir DIR) or move it away to start afresh"


_checked: dict[str, tuple[tuple[int, int], ...]] = {}


class DataDirProblem(RuntimeError):
    """The data directory cannot be served as it is; ``str()`` says which file and what to do."""


def _signature(data_dir: Path) -> tuple[tuple[int, int], ...]:
    out = []
    for name in (STORE_FILE, ADK_FILE):
        try:
            st = (data_dir / name).stat()
            out.append((st.st_size, st.st_mtime_ns))
        except OSError:
            out.append((-1, -1))
    return tuple(out)


def check_data_dir(data_dir: Path) -> list[str]:
    """Modes, damage, consistency and free space of ``data_dir``; the notes to log.
    DataDirProblem when it must not be served."""
    data_dir = Path(data_dir)
    notes = secure_modes(data_dir)
    _check_space(data_dir)
    key = str(data_dir.resolve())
    if _checked.get(key) == _signature(data_dir):
        return notes
    counts = {}
    for name in (STORE_FILE, ADK_FILE):
        counts[name] = _sessions_in(data_dir / name)
    store, adk = counts[STORE_FILE], counts[ADK_FILE]
    for empty, full, count in ((STORE_FILE, ADK_FILE, adk), (ADK_FILE, STORE_FILE, store)):
        lacking = counts[empty]
        if (lacking is None or lacking == 0) and count:
            state = "missing" if lacking is None else "empty (no sessions)"
            raise DataDirProblem(
                f"{data_dir / empty} is {state} while {data_dir / full} holds {count} session(s): refusing to start "
                f"over half the data; restore both databases from one backup (rewindtui restore BACKUP --data-dir "
                f"{data_dir}), or move {full} away too to start afresh"
            )
    for name in (STORE_FILE, ADK_FILE):  # 0600 from the start (SQLite gives -wal/-shm the same mode)
        create_private(data_dir / name)
    _checked[key] = _signature(data_dir)
    return notes


def secure_modes(data_dir: Path) -> list[str]:
    """Create/tighten the directory (0700) and the database files (0600); notes on what changed."""
    notes = []
    try:
        data_dir.mkdir(parents=True, exist_ok=True, mode=DIR_MODE)
    except OSError as exc:
        raise DataDirProblem(f"cannot create the data directory {data_dir}: {_os_words(exc)}") from None
    notes += _tighten(data_dir, DIR_MODE)
    for name in (STORE_FILE, ADK_FILE):
        path = data_dir / name
        for side in ("", *SIDE_FILES):
            target = Path(str(path) + side)
            if target.exists():
                notes += _tighten(target, FILE_MODE)
    return notes


def create_private(path: Path) -> None:
    """Create ``path`` empty with mode 0600 when it does not exist (before SQLite opens it)."""
    try:
        fd = os.open(path, os.O_CREAT | os.O_EXCL | os.O_WRONLY, FILE_MODE)
    except FileExistsError:
        return
    os.close(fd)


def _tighten(path: Path, mode: int) -> list[str]:
    try:
        current = stat.S_IMODE(path.stat().st_mode)
    except OSError:
        return []
    if current & ~mode:
        try:
            os.chmod(path, mode)
        except OSError as exc:
            return [f"{path} has mode {current:o} and could not be made {mode:o}: {_os_words(exc)}"]
        return [f"{path} had mode {current:o} (other local users could read it): now {mode:o}"]
    return []


def _sessions_in(path: Path) -> int | None:
    """How many sessions the database holds (None: no such file; 0: empty or no table yet).
    DataDirProblem when it is not a database or is damaged."""
    if not path.exists():
        return None
    if path.stat().st_size == 0:
        return 0
    try:
        conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    except sqlite3.Error as exc:
        raise _damaged(path, exc) from None
    try:
        rows = conn.execute("PRAGMA quick_check").fetchall()
        if not rows or rows[0][0] != "ok":
            first = rows[0][0] if rows else "no answer"
            raise DataDirProblem(f"{path} is damaged ({first}); {_WHAT_TO_DO}")
        tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
        if "sessions" not in tables:
            return 0
        return int(conn.execute("SELECT COUNT(*) FROM sessions").fetchone()[0])
    except sqlite3.Error as exc:
        raise _damaged(path, exc) from None
    finally:
        conn.close()


def _damaged(path: Path, exc: sqlite3.Error) -> DataDirProblem:
    log.debug("reading %s failed", path, exc_info=exc)
    text = str(exc)
    if "full" in text or "disk I/O" in text:
        return DataDirProblem(f"cannot read {path}: {text} -- is the disk full? ({_free_words(path.parent)})")
    return DataDirProblem(f"{path} cannot be read as a database ({text}); {_WHAT_TO_DO}")


def _check_space(data_dir: Path) -> None:
    try:
        free = shutil.disk_usage(data_dir).free
    except OSError:
        return
    if free < MIN_FREE_BYTES:
        raise DataDirProblem(
            f"the disk holding {data_dir} is full ({free:,} bytes free): free some space, then start again"
        )


def _free_words(path: Path) -> str:
    try:
        return f"{shutil.disk_usage(path).free:,} bytes free there"
    except OSError:
        return "free space unknown"


def _os_words(exc: OSError) -> str:
    if exc.errno == errno.ENOSPC:
        return "the disk is full"
    return exc.strerror or str(exc)


def describe_open_failure(path: Path, exc: BaseException) -> str:
    """One line for a database that failed to open at start (after the checks passed)."""
    if isinstance(exc, OSError) and exc.errno == errno.ENOSPC or "full" in str(exc) or "disk I/O" in str(exc):
        return f"cannot open {path}: {exc} -- is the disk full? ({_free_words(path.parent)})"
    return f"cannot open {path} ({exc}); {_WHAT_TO_DO}"
