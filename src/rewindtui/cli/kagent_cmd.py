"""``rewindtui kagent ACTION --session ID``: what kagent 1.0's own UI offers for a session, headless.

- ``checkpoints``: the session's checkpoints, with their names (``--json``: one record each);
- ``rename-checkpoint CHECKPOINT NAME`` (an empty NAME restores kagent's generated one);
- ``delete-checkpoint CHECKPOINT``;
- ``fork CHECKPOINT``: a new session from that checkpoint (the original is kept; ``rewindtui redo
  --session FORK`` goes back to it, as after a rewind);
- ``shares``, ``share [--writable]`` (the token is printed once: kagent returns it only then),
  ``revoke SHARE``.

A CHECKPOINT or SHARE is its id or a prefix of it that names one. Needs a kagent 1.0 controller
(``--kagent URL --agent NS/NAME``); on any other the command says what was found instead.
CheckpointService's field numbers are unverified (docs/kagent.md): a failure says so.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
from collections.abc import Callable
from typing import Any

from rewindtui.cli.output import CommandFailed
from rewindtui.config.settings import Settings

ACTIONS = ("checkpoints", "rename-checkpoint", "delete-checkpoint", "fork", "shares", "share", "revoke")


def add_parser(sub: Any, connection_options: Callable[[argparse.ArgumentParser], None]) -> None:
    p = sub.add_parser(
        "kagent",
        help="kagent 1.0: a session's checkpoints (rename, delete, fork from) and shares (create, list, revoke)",
        description=__doc__.split("\n\n")[1] if __doc__ else None,
    )
    p.add_argument("action", choices=ACTIONS)
    p.add_argument("target", nargs="?", metavar="ID", help="the checkpoint or share (its id or a prefix naming one)")
    p.add_argument("name", nargs="?", default=None, metavar="NAME", help="rename-checkpoint: the new name")
    p.add_argument("--session", required=True, metavar="ID", help="the session")
    p.add_argument("--writable", action="store_true", help="share: a read-write share (default: read-only)")
    p.add_argument("--json", action="store_true", help="one JSON record per line")
    connection_options(p)


def main(settings: Settings, args: argparse.Namespace) -> int:
    return asyncio.run(run(settings, args))


def _one(rows: list[Any], prefix: str | None, what: str) -> Any:
    if not prefix:
        raise CommandFailed(f"name the {what} (its id, or a prefix of it)", code="usage")
    found = [r for r in rows if r.id == prefix] or [r for r in rows if r.id.startswith(prefix)]
    if len(found) != 1:
        known = ", ".join(r.id[:8] for r in rows) or "none"
        raise CommandFailed(
            f"{'no' if not found else 'more than one'} {what} of this session is {prefix!r} (its {what}s: {known})"
        )
    return found[0]


async def run(settings: Settings, args: argparse.Namespace, out: Any = None) -> int:
    import json

    from rewindtui.base.textsafe import sanitize_line
    from rewindtui.config.connection import connection
    from rewindtui.kagent1.client import Kagent1Client
    from rewindtui.kagent1.records import checkpoint_record, share_record  # protobuf: not for the parser

    out = out or sys.stdout

    def say(record: dict[str, Any], text: str) -> None:
        out.write((json.dumps(record) if args.json else sanitize_line(text)) + "\n")

    async with connection(settings) as conn:
        client = conn.client
        if not isinstance(client, Kagent1Client):
            found = (
                conn.kagent.said
                if conn.kagent is not None
                else "no kagent controller (give --kagent URL --agent NS/NAME)"
            )
            raise CommandFailed(f"`rewindtui kagent {args.action}` needs kagent 1.0; found: {found}")
        session = args.session
        if args.action in ("checkpoints", "rename-checkpoint", "delete-checkpoint", "fork"):
            listed = await client.list_checkpoints(session)
            if args.action == "checkpoints":
                for c in listed:
                    r = checkpoint_record(c)
                    say(r, f"{c.id[:8]}  after turn {r['after_turn']}  {r['state']}  {c.name or '(unnamed)'}")
                if not listed and not args.json:
                    out.write("no checkpoints in this session\n")
                return 0
            chosen = _one(listed, args.target, "checkpoint")
            if args.action == "rename-checkpoint":
                if args.name is None:
                    raise CommandFailed("give the new name (an empty one restores kagent's)", code="usage")
                renamed = await client.rename_checkpoint(chosen.id, args.name)
                say(checkpoint_record(renamed), f"checkpoint {renamed.id[:8]} is now named {renamed.name!r}")
            elif args.action == "delete-checkpoint":
                await client.delete_checkpoint(session, chosen.id)
                say({"deleted": chosen.id}, f"checkpoint {chosen.id[:8]} ({chosen.name or 'unnamed'}) deleted")
            else:
                fork = await client.fork_checkpoint(session, chosen)
                say(
                    {"session": fork.id, "from": session, "checkpoint": chosen.id},
                    f"forked: session {fork.id} from checkpoint {chosen.id[:8]} ({chosen.name or 'unnamed'}); "
                    f"the original is kept (rewindtui redo --session {fork.id[:8]} goes back to it)",
                )
            return 0
        if args.action == "shares":
            shares = await client.list_shares(session)
            for s in shares:
                r = share_record(s)
                say(r, f"{s.id[:8]}  {r['permission']}  created {r['created_at'] or '?'}")
            if not shares and not args.json:
                out.write("no shares of this session\n")
            return 0
        if args.action == "share":
            share, token = await client.create_share(session, read_only=not args.writable)
            say(
                {**share_record(share), "token": token},
                f"share {share.id[:8]} ({share_record(share)['permission']}): token {token} (shown once)",
            )
            return 0
        chosen = _one(await client.list_shares(session), args.target, "share")
        await client.revoke_share(chosen.id)
        say({"revoked": chosen.id}, f"share {chosen.id[:8]} revoked")
        return 0
