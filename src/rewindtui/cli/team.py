"""``rewindtui team``: the users of a team server (``rewindtui serve --users``), their tokens and shares.

::

    rewindtui team token NAME            # a new bearer token for NAME (made a user if new): printed once
    rewindtui team users                 # the users
    rewindtui team revoke NAME           # NAME's tokens stop working (within seconds on running replicas)
    rewindtui team share SESSION NAME [--mode read|write]   # let NAME read (or also write) SESSION
    rewindtui team unshare SESSION NAME
    rewindtui team import DIR            # move a solo data directory's sessions into the team database
    rewindtui team export DIR            # ... and the team database's sessions into a solo data directory

Each takes the server's database as ``serve`` does: ``--database-url URL`` (or
``REWINDTUI_DATABASE_URL``, or ``database_url`` in the config file's ``[server]`` table), else the
SQLite store in ``--data-dir``. The token is printed once; only its SHA-256 is kept. A user gives
it to rewindtui through the named-auth settings (``--bearer-env VAR``, ``[auth] bearer_env``;
docs/auth.md), which send it to the configured server's origin only.

Exit status 0 on success, 1 on failure (one line on stderr), 2 for a usage error.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
from pathlib import Path

from sqlalchemy.exc import SQLAlchemyError

from rewindtui.base.dirs import default_data_dir
from rewindtui.server.http.options import DATABASE_URL_ENV, database_url_problem, normalized_database_url
from rewindtui.server.http.users import InvalidUser, user_from
from rewindtui.server.process.serve import config_database_url
from rewindtui.server.shared.paths import STORE_FILE
from rewindtui.server.storage.adk_sessions import sqlite_url
from rewindtui.server.storage.store_pg import is_postgres_url, shown_url
from rewindtui.server.storage.team_store import SHARE_MODES, TeamStore, UserExists


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="rewindtui team", description="Users, tokens and shares of a team server.")
    parser.add_argument(
        "--database-url", default=None, metavar="URL", help=f"the team database (or {DATABASE_URL_ENV})"
    )
    parser.add_argument(
        "--data-dir",
        type=Path,
        default=None,
        help=f"without a database URL: the server's data directory (default: {default_data_dir()})",
    )
    commands = parser.add_subparsers(dest="action", required=True)
    token = commands.add_parser("token", help="make a bearer token for a user (printed once)")
    token.add_argument("name")
    token.add_argument("--label", default="", help="what the token is for (kept beside its hash)")
    commands.add_parser("users", help="list the users")
    revoke = commands.add_parser("revoke", help="revoke every token of a user")
    revoke.add_argument("name")
    share = commands.add_parser("share", help="share a session with another user")
    share.add_argument("session")
    share.add_argument("name")
    share.add_argument("--mode", choices=SHARE_MODES, default="read")
    unshare = commands.add_parser("unshare", help="stop sharing a session with a user")
    unshare.add_argument("session")
    unshare.add_argument("name")
    into = commands.add_parser(
        "import", help="copy every session of a solo data directory (no server running on it) into the team database"
    )
    into.add_argument("dir", type=Path, metavar="DIR")
    out = commands.add_parser(
        "export", help="copy every session of the team database into a solo data directory (no server running on it)"
    )
    out.add_argument("dir", type=Path, metavar="DIR")
    return parser


def _url(args: argparse.Namespace) -> str:
    url = (
        normalized_database_url(args.database_url or os.environ.get(DATABASE_URL_ENV) or None) or config_database_url()
    )
    problem = database_url_problem(url)
    if problem is not None:
        raise ValueError(problem)
    if url is not None:
        return url
    data_dir: Path = args.data_dir if args.data_dir is not None else default_data_dir()
    data_dir.mkdir(parents=True, exist_ok=True, mode=0o700)
    path = data_dir / STORE_FILE
    if not path.exists():  # private from the start, as the server makes it (token hashes, conversations)
        os.close(os.open(path, os.O_CREAT | os.O_WRONLY, 0o600))
    return sqlite_url(str(path))


async def _run(args: argparse.Namespace, url: str) -> str:
    where = f"the database {shown_url(url)}" if is_postgres_url(url) else f"{url.split('///', 1)[-1]}"
    team = TeamStore(url)
    await team.open()
    try:
        if args.action == "token":
            try:
                if user_from(args.name) != args.name:
                    raise InvalidUser(args.name)
            except InvalidUser:
                raise ValueError(
                    f"{args.name!r} cannot be a user name: use 1-200 printable characters, no slashes"
                ) from None
            token = await team.new_token(args.name, args.label)
            return f"{token}\n(the token of {args.name}: shown once; give it to rewindtui with --bearer-env VAR)"
        if args.action == "users":
            return "\n".join(await team.users()) or "(no users yet: rewindtui team token NAME makes one)"
        if args.action in ("revoke", "share") and not await team.has_user(args.name):
            raise ValueError(f"no user named {args.name!r} (rewindtui team users lists them)")
        if args.action == "revoke":
            count = await team.revoke_tokens(args.name)
            return f"revoked {count} token(s) of {args.name}"
        if args.action in ("share", "unshare"):
            owner = await team.session_owner(args.session)
            if owner is None:
                raise ValueError(f"no session {args.session!r} in {where} (give the whole id)")
            if owner == args.name:
                raise ValueError(f"session {args.session!r} is {owner}'s already: share it with another user")
        if args.action == "share":
            await team.share(args.session, args.name, args.mode)
            return f"shared session {args.session} with {args.name} ({args.mode})"
        if await team.share_of(args.session, args.name) is None:
            raise ValueError(f"session {args.session} is not shared with {args.name}: nothing to unshare")
        await team.unshare(args.session, args.name)
        return f"session {args.session} is no longer shared with {args.name}"
    finally:
        await team.close()


def _move(args: argparse.Namespace) -> str:
    """``import`` / ``export``: the data directory is held (no server may run on it meanwhile)."""
    from rewindtui.server.process.instance import DataDirBusy, DataDirHold, DataDirUnusable
    from rewindtui.server.shared.paths import DATA_FILES
    from rewindtui.server.storage.move import MoveRefused, Place, move

    url = (
        normalized_database_url(args.database_url or os.environ.get(DATABASE_URL_ENV) or None) or config_database_url()
    )
    if url is None:
        raise ValueError(f"{args.action} needs the team database: --database-url URL or {DATABASE_URL_ENV}")
    problem = database_url_problem(url)
    if problem is not None:
        raise ValueError(problem)
    data_dir: Path = args.dir
    if args.action == "import" and not (data_dir / STORE_FILE).exists():
        raise ValueError(f"{data_dir} holds no rewindtui data ({STORE_FILE} is missing)")
    hold = DataDirHold(data_dir, DATA_FILES)
    try:
        hold.acquire()
    except (DataDirBusy, DataDirUnusable) as exc:
        raise ValueError(str(exc)) from None
    try:
        solo, team = Place(data_dir=data_dir), Place(database_url=url)
        source, target = (solo, team) if args.action == "import" else (team, solo)
        try:
            report = asyncio.run(move(source, target))
        except MoveRefused as exc:
            raise ValueError(str(exc)) from None
    finally:
        hold.release()
    return "\n".join([f"{report.summary()}, from {source.describe()} to {target.describe()}", *report.notes])


def main(argv: list[str]) -> int:
    args = build_parser().parse_args(argv)
    try:
        if args.action in ("import", "export"):
            print(_move(args))
            return 0
        url = _url(args)
        print(asyncio.run(_run(args, url)))
    except (ValueError, UserExists, OSError) as exc:
        print(f"rewindtui team: {exc}", file=sys.stderr)
        return 1
    except SQLAlchemyError as exc:  # the database is away, or refuses us: one line, which and why
        reason = str(getattr(exc, "orig", None) or exc).strip().splitlines()[0]
        print(f"rewindtui team: cannot use the database {shown_url(url)}: {reason}", file=sys.stderr)
        return 1
    return 0
