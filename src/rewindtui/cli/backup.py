"""``rewindtui backup`` and ``rewindtui restore``: a consistent copy of the embedded server's data.

::

    rewindtui backup  [--data-dir DIR] OUT       # OUT: a new directory
    rewindtui restore [--data-dir DIR] BACKUP    # BACKUP: a directory written by `backup`

``backup`` copies both databases (``rewindtui.db``: sessions, tasks, messages; ``adk_sessions.db``:
ADK's events; ``push_configs.db``, the push-notification configs, when there is one) with SQLite's
online backup API, so it may run while a server serves ``DIR``: a
read transaction is opened on both first, so the two copies are of the same moment (a write
the server makes meanwhile waits for neither, and is in neither). Each copy is checked
(``PRAGMA quick_check``) and written 0600 in a 0700 directory. Artifacts (``artifacts/``) are
copied as files.

``restore`` refuses while a server serves ``DIR`` (it holds the directory's lock); otherwise it
checks the backup, moves the current databases aside to ``DIR/replaced-<time>/`` (nothing is
deleted) and puts the backup's in place, 0600.

Exit status 0 on success, 1 on failure (one line on stderr saying what and what to do).
"""

from __future__ import annotations

import argparse
import os
import shutil
import sqlite3
import sys
import time
from contextlib import ExitStack
from pathlib import Path

from rewindtui.base.dirs import default_data_dir
from rewindtui.server.shared.paths import DATA_FILES, PUSH_FILE

DATABASES = DATA_FILES
#: copied when present (a server that never had a push config has none)
OPTIONAL = (PUSH_FILE,)
ARTIFACTS = "artifacts"


class BackupError(RuntimeError):
    """One line: what failed and what to do."""


def build_parser(command: str) -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog=f"rewindtui {command}")
    parser.add_argument(
        "--data-dir", type=Path, default=None, help=f"the server's data directory (default: {default_data_dir()})"
    )
    if command == "backup":
        parser.description = "Write a consistent copy of the server's databases (safe while it runs)."
        parser.add_argument("out", type=Path, metavar="OUT", help="a new directory to write the backup to")
    else:
        parser.description = "Put a backup in place of the server's databases (the server must be stopped)."
        parser.add_argument("backup", type=Path, metavar="BACKUP", help="a directory written by `rewindtui backup`")
    return parser


def backup(data_dir: Path, out: Path) -> list[Path]:
    """Copy the databases of ``data_dir`` into the new directory ``out``; the files written."""
    present = [name for name in DATABASES if (data_dir / name).is_file()]
    if present:
        present += [name for name in OPTIONAL if (data_dir / name).is_file()]
    if not present:
        raise BackupError(f"no databases in {data_dir} (looked for {', '.join(DATABASES)}); give --data-dir")
    if out.exists() and any(out.iterdir()):
        raise BackupError(f"{out} exists and is not empty: give a new directory")
    out.mkdir(parents=True, exist_ok=True, mode=0o700)
    os.chmod(out, 0o700)
    written = []
    with ExitStack() as stack:
        sources = []
        for name in present:
            src = sqlite3.connect(f"file:{data_dir / name}?mode=ro", uri=True, isolation_level=None)
            stack.callback(src.close)
            src.execute("BEGIN")  # a read transaction on each: both copies are of this moment
            src.execute("SELECT COUNT(*) FROM sqlite_master").fetchone()
            sources.append((name, src))
        for name, src in sources:
            target = out / name
            fd = os.open(target, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o600)
            os.close(fd)
            dst = sqlite3.connect(target)
            try:
                src.backup(dst)
                _check(dst, target)
            finally:
                dst.close()
            written.append(target)
    artifacts = data_dir / ARTIFACTS
    if artifacts.is_dir():
        shutil.copytree(artifacts, out / ARTIFACTS)
        written.append(out / ARTIFACTS)
    return written


def restore(data_dir: Path, source: Path) -> Path | None:
    """Put the backup ``source`` in place in ``data_dir``; the directory the replaced files were
    moved to (None when there were none). BackupError while a server serves ``data_dir``."""
    from rewindtui.server.process.instance import LOCK_FILE, FileLock, read_state

    missing = [name for name in DATABASES if not (source / name).is_file()]
    if missing:
        raise BackupError(f"{source} is not a backup: {', '.join(missing)} missing")
    restored = [*DATABASES, *(name for name in OPTIONAL if (source / name).is_file())]
    for name in restored:
        conn = sqlite3.connect(f"file:{source / name}?mode=ro", uri=True)
        try:
            _check(conn, source / name)
        finally:
            conn.close()
    data_dir.mkdir(parents=True, exist_ok=True, mode=0o700)
    lock = FileLock(data_dir / LOCK_FILE)
    if not lock.acquire(wait=False):
        state = read_state(data_dir)
        who = state.describe() if state else "another process"
        raise BackupError(f"{data_dir} is in use by a running server ({who}): stop it first; nothing was changed")
    try:
        aside = data_dir / time.strftime("replaced-%Y%m%d-%H%M%S")
        moved = False
        for name in (*DATABASES, *OPTIONAL):  # the current push configs go aside too: they are of the replaced data
            for suffix in ("", "-wal", "-shm", "-journal"):
                current = data_dir / (name + suffix)
                if current.exists():
                    aside.mkdir(mode=0o700, exist_ok=True)
                    current.rename(aside / current.name)
                    moved = True
        if (data_dir / ARTIFACTS).is_dir() and (source / ARTIFACTS).is_dir():
            aside.mkdir(mode=0o700, exist_ok=True)
            (data_dir / ARTIFACTS).rename(aside / ARTIFACTS)
            moved = True
        for name in restored:
            target = data_dir / name
            shutil.copyfile(source / name, target)
            os.chmod(target, 0o600)
        if (source / ARTIFACTS).is_dir():
            shutil.copytree(source / ARTIFACTS, data_dir / ARTIFACTS)
        return aside if moved else None
    finally:
        lock.release()


def _check(conn: sqlite3.Connection, path: Path) -> None:
    try:
        row = conn.execute("PRAGMA quick_check").fetchone()
    except sqlite3.DatabaseError as exc:
        raise BackupError(f"{path} is not a readable database ({exc})") from None
    if not row or row[0] != "ok":
        raise BackupError(f"{path} is damaged ({row[0] if row else 'no answer'})")


def main(argv: list[str]) -> int:
    """``argv``: the command (``backup`` / ``restore``) and its arguments."""
    command, rest = argv[0], argv[1:]
    args = build_parser(command).parse_args(rest)
    data_dir: Path = args.data_dir if args.data_dir is not None else default_data_dir()
    try:
        if command == "backup":
            written = backup(data_dir, args.out)
            print(f"backed up {data_dir} to {args.out} ({', '.join(p.name for p in written)})")
        else:
            aside = restore(data_dir, args.backup)
            print(f"restored {args.backup} into {data_dir}" + (f"; the replaced files are in {aside}" if aside else ""))
    except BackupError as exc:
        print(f"rewindtui {command}: {exc}", file=sys.stderr)
        return 1
    except (OSError, sqlite3.Error) as exc:
        print(f"rewindtui {command}: {exc}", file=sys.stderr)
        return 1
    return 0
