"""Reading sessions: ``sessions`` (the list), ``history`` (one conversation), ``export``."""

from __future__ import annotations

import argparse
from typing import Any

from rewindtui.cli.commands.common import open_session, save_item_parts, show_rewound
from rewindtui.cli.output import CommandFailed, Output, say


async def cmd_sessions(conn: Any, args: argparse.Namespace, out: Output) -> int:
    from rewindtui.chat import Chat
    from rewindtui.output.render_text import format_session, json_line, session_record

    for session in await Chat(conn.client).list_sessions():
        out.line(json_line(session_record(session)) if out.as_json else format_session(session))
    return 0


async def cmd_history(conn: Any, args: argparse.Namespace, out: Output) -> int:
    from rewindtui.chat import Chat

    chat = Chat(conn.client)
    await open_session(chat, args.session)
    if not getattr(args, "include_rewound", False):
        saved = await save_item_parts(chat, chat.conversation.items, getattr(args, "save_dir", None))
        out.items(chat.conversation.items, saved=saved)
        return 0
    await show_rewound(chat)
    from rewindtui.model import turn_numbers
    from rewindtui.output.export import history_lines, marked_record
    from rewindtui.output.render_text import json_line

    items = chat.conversation.items
    numbered = zip(items, turn_numbers.item_numbers(items), strict=True)
    records = (json_line({**marked_record(i), "turn": n}) for i, n in numbered)
    for line in records if out.as_json else history_lines(items):
        out.line(line)
    return 0


async def cmd_export(conn: Any, args: argparse.Namespace, out: Output) -> int:
    from pathlib import Path

    from rewindtui.chat import Chat
    from rewindtui.output.export import ExportExists, export, files_dir_for, write_export

    chat = Chat(conn.client)
    await open_session(chat, args.session)
    if args.include_rewound:
        await show_rewound(chat)
    session = chat.session
    output = Path(args.output) if args.output else None
    if args.save_files and output is None:
        raise CommandFailed("--save-files needs --output (the files are saved beside it)")
    if output is not None and output.exists() and not args.force:
        raise CommandFailed(f"{output} exists; nothing was written (add --force to overwrite it)")
    saved: dict[int, str] = {}
    if output is not None and args.save_files:
        saved = await save_item_parts(chat, chat.conversation.items, str(files_dir_for(output)), users=True)
    text = export(
        chat.conversation.items,
        args.format,
        session_id=chat.session_id,
        title=session.name if session else "",
        times=chat.conversation.task_times,
        saved=saved,
    )
    if output is not None:
        try:
            write_export(output, text, force=args.force)
        except ExportExists as exc:
            raise CommandFailed(str(exc)) from None
        except OSError as exc:
            raise CommandFailed(f"cannot write {args.output}: {exc.strerror or exc}") from None
        say(f"exported {len(chat.conversation.items)} messages to {args.output}", kind="note")
    else:
        out.stream.write(text)
        out.stream.flush()
    return 0
