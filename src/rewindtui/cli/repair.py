"""``rewindtui repair [--data-dir DIR] [SESSION ...]``: repair the embedded server's data (the
server stopped): rebuild a session state that cannot be read from the session's events, and
rewind the view past turns the agent's database lacks. See
:mod:`rewindtui.server.service.repair`.

Exit status 0 (it says what it did, one line per change, or that there was nothing to do), 1 on
failure (one line on stderr: what and what to do)."""

from __future__ import annotations

import argparse
import asyncio
import sqlite3
import sys
from pathlib import Path

from rewindtui.base.dirs import default_data_dir


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="rewindtui repair",
        description="Repair the server's data (the server must be stopped): rebuild a session's state that "
        "cannot be read from its events, and rewind the view past turns the agent's database lacks. "
        "Every replaced value is kept in DIR/repaired-<time>/.",
    )
    parser.add_argument(
        "--data-dir", type=Path, default=None, help=f"the server's data directory (default: {default_data_dir()})"
    )
    parser.add_argument("sessions", nargs="*", metavar="SESSION", help="only these sessions (default: every one)")
    return parser


def main(argv: list[str]) -> int:
    """``argv``: ``repair`` and its arguments."""
    from rewindtui.server.process.instance import LOCK_FILE, FileLock, read_state
    from rewindtui.server.service.repair import RepairError, repair

    args = build_parser().parse_args(argv[1:])
    data_dir: Path = args.data_dir if args.data_dir is not None else default_data_dir()
    if not data_dir.is_dir():
        print(f"rewindtui repair: {data_dir} does not exist", file=sys.stderr)
        return 1
    lock = FileLock(data_dir / LOCK_FILE)
    if not lock.acquire(wait=False):
        state = read_state(data_dir)
        who = state.describe() if state else "another process"
        print(
            f"rewindtui repair: {data_dir} is in use by a running server ({who}): stop it first; nothing was changed",
            file=sys.stderr,
        )
        return 1
    try:
        lines = asyncio.run(repair(data_dir, list(args.sessions) or None))
    except (RepairError, OSError, sqlite3.Error) as exc:
        print(f"rewindtui repair: {exc}", file=sys.stderr)
        return 1
    finally:
        lock.release()
    for line in lines:
        print(line)
    return 0
