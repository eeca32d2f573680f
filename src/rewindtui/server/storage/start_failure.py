"""A database that fails to open after the start's checks passed (the file turned unreadable or
damaged between the check and the open, or a check cannot see the damage): one line naming the
file and what to do, the traceback in the log only.

Two places open the databases once ``rewindtui serve`` listens: the front opens ``rewindtui.db``
in its startup (uvicorn then logs the failure and "Application startup failed" and exits), and
the full app opens ``adk_sessions.db`` (google-adk, through SQLAlchemy) in the background, where
the failure was logged with a 180-line traceback that named no file. :class:`StartLog` keeps the
ERROR records of the start (with their tracebacks) out of stderr and appends them to
``server.log`` in the data directory -- the file a server the app spawns writes to anyway --
until the agent has loaded; :func:`describe_start_failure` is the one line ``serve`` prints.
"""

from __future__ import annotations

import logging
import sqlite3
import traceback
from pathlib import Path
from types import TracebackType

from rewindtui.server.shared.paths import ADK_FILE
from rewindtui.server.storage.integrity import DataDirProblem, describe_open_failure

#: the log file in the data directory (the spawned server's stderr goes there too)
LOG_FILE = "server.log"


class StoreOpenFailed(DataDirProblem):
    """A database that did not open; ``str()`` is one line naming the file and what to do."""


def open_failure(path: Path, exc: BaseException) -> StoreOpenFailed:
    return StoreOpenFailed(describe_open_failure(path, exc))


def describe_start_failure(data_dir: Path, exc: BaseException | None, message: str = "") -> str:
    """One line for a start that failed (``exc``, or only the ``message`` logged): a database's
    failure names its file and what to do; anything else its first line (the traceback is in
    the log)."""
    chain: list[BaseException] = []
    seen: BaseException | None = exc
    while seen is not None and seen not in chain:
        chain.append(seen)
        seen = seen.__cause__ or seen.__context__
    for error in chain:
        if isinstance(error, DataDirProblem):
            return str(error).splitlines()[0]
    for error in chain:
        # google-adk opens adk_sessions.db through SQLAlchemy, whose DatabaseError wraps sqlite3's
        if isinstance(error, sqlite3.DatabaseError) or (
            type(error).__name__ in ("DatabaseError", "OperationalError")
            and type(error).__module__.startswith("sqlalchemy")
        ):
            root = getattr(error, "orig", None) or error
            return describe_open_failure(data_dir / ADK_FILE, root)
    text = str(exc) if exc is not None else message
    if exc is None and text.startswith("cannot open "):  # a StoreOpenFailed, as uvicorn logged it
        return text.splitlines()[0]
    first = (text.splitlines() or [""])[0] or "see the log"
    return f"the agent could not start: {first} (the details are in {data_dir / LOG_FILE})"


class StartLog(logging.Handler):
    """``with StartLog(data_dir) as start:`` -- while the server starts (until :meth:`done`), an
    ERROR record (its traceback too) goes to ``<data_dir>/server.log`` only, and uvicorn's
    "startup failed" lines too; ``start.error`` is the first exception logged. Other records go
    where they went before (Python's last-resort handler: stderr)."""

    def __init__(self, data_dir: Path) -> None:
        super().__init__(logging.DEBUG)
        self.path = data_dir / LOG_FILE
        self.error: BaseException | None = None
        #: the first ERROR record's message (uvicorn's startup failure carries no exception)
        self.message = ""
        self.starting = True
        self._uvicorn = logging.getLogger("uvicorn.error")

    def __enter__(self) -> StartLog:
        logging.getLogger().addHandler(self)
        self._uvicorn.addFilter(self._divert)
        return self

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None) -> None:
        logging.getLogger().removeHandler(self)
        self._uvicorn.removeFilter(self._divert)

    def done(self) -> None:
        """The agent loaded: errors from now on are the running server's, shown as before."""
        self.starting = False

    def _divert(self, record: logging.LogRecord) -> bool:
        if self.starting and record.levelno >= logging.ERROR:
            self._write(record)
            return False
        return True

    def emit(self, record: logging.LogRecord) -> None:
        if self.starting and record.levelno >= logging.ERROR:
            self._write(record)
        elif logging.lastResort is not None and record.levelno >= logging.lastResort.level:
            logging.lastResort.handle(record)

    def _write(self, record: logging.LogRecord) -> None:
        if record.exc_info and record.exc_info[1] is not None and self.error is None:
            self.error = record.exc_info[1]
        self.message = self.message or record.getMessage()
        lines = [f"{record.levelname} {record.name}: {record.getMessage()}\n"]
        if record.exc_info:
            lines += traceback.format_exception(*record.exc_info)
        try:
            with open(self.path, "a", encoding="utf-8") as out:
                out.writelines(lines)
        except OSError:
            pass  # no log to write to: the one line on stderr still says what failed
