"""Changing where a session stands: ``rewind``, ``fork`` and ``redo``."""

from __future__ import annotations

import argparse
from typing import Any

from rewindtui.base.textsafe import sanitize_line
from rewindtui.cli.commands.common import (
    open_session,
    require,
    require_invocation,
    resolve_before,
    turn_failure,
    unique,
)
from rewindtui.cli.output import CommandFailed, Output, say


async def cmd_redo(conn: Any, args: argparse.Namespace, out: Output) -> int:
    from rewindtui.chat import Chat

    chat = Chat(conn.client)
    await chat.client.connect()
    caps = chat.client.capabilities
    if caps is not None and not caps.redo:
        raise CommandFailed(caps.why_no_redo())  # nothing is sent
    await open_session(chat, args.session)
    target = await _resolve_rewind_task(chat, args.rewind_task) if args.rewind_task else None
    await chat.redo(target)
    sid = chat.session_id or args.session
    redo_of = chat.conversation.current_task_id
    undo = (
        f"rewindtui redo --session {sid[:8]} --rewind-task {(redo_of or '')[:8]}"
        if caps is None or caps.rewind_mode
        else None
    )
    out.header(f"session: {sanitize_line(sid)}", {"session": sid, "redo": redo_of, "undo": undo})
    out.items(chat.conversation.items)
    if undo and not out.as_json:
        say(f"to undo this redo (rewind again): {undo}", kind="note")
    return 0


async def _resolve_rewind_task(chat: Any, prefix: str) -> str:
    """``--rewind-task``: a rewind's task id, or any unique prefix of one."""
    from rewindtui.a2a import contract

    if not prefix.strip():
        raise CommandFailed("the rewind task id is empty: give the id, or a unique start of it", code="usage")
    sid = chat.session_id
    point = chat.undo_point()
    if point is not None and point.rewind_task_id.startswith(prefix):
        return point.rewind_task_id  # the one undo's own (kagent 1.0: the original the fork came from)
    if not sid or not chat.client.has_api:
        return prefix
    tasks = await chat.client.session_tasks(sid, include_rewound=True)
    ids = [
        t["id"]
        for t in tasks
        if isinstance(t.get("id"), str) and (t.get("metadata") or {}).get(contract.EFFECTIVE_HISTORY_KEY) is True
    ]
    found = unique(prefix, ids, "rewind task")
    if found is None:
        raise CommandFailed(
            f"no rewind task {prefix!r} in session {sid}; `rewindtui history --include-rewound --session {sid[:8]}` "
            "shows the rewinds that took turns away"
        )
    return found


async def cmd_rewind(conn: Any, args: argparse.Namespace, out: Output) -> int:
    from rewindtui.chat import Chat

    chat = Chat(conn.client)
    await chat.client.connect()
    require(chat, "rewind")
    await open_session(chat, args.session)
    before = resolve_before(chat, args)
    require_invocation(chat, before)
    from rewindtui.model.effects import effect_lines, effects_from

    not_undone = effect_lines(effects_from(chat.conversation.items, before), limit=20)  # read before they go
    await chat.rewind(before, args.text or None)
    sid = chat.session_id or args.session
    point = chat.undo_point()
    undo = f"rewindtui redo --session {sid[:8]}" + (f" --rewind-task {point.rewind_task_id[:8]}" if point else "")
    record: dict[str, Any] = {"session": sid, "rewound_before": before, "undo": undo if point else None}
    if not_undone:
        record["not_undone"] = not_undone  # what the rewind did not take back (model/effects.py)
    out.header(f"session: {sanitize_line(sid)}", record)
    out.items(chat.conversation.items)
    if not out.as_json:
        for line in not_undone:
            say(line, kind="note")
    if point is not None and not out.as_json:
        say(f"to undo this rewind: {undo}", kind="note")
    failure = turn_failure(chat) if args.text else None
    if failure:
        raise CommandFailed(failure)
    return 0


async def cmd_fork(conn: Any, args: argparse.Namespace, out: Output) -> int:
    from rewindtui.chat import Chat

    chat = Chat(conn.client)
    await chat.client.connect()
    require(chat, "fork")
    await open_session(chat, args.session)
    original = chat.session_id or args.session
    before = resolve_before(chat, args)
    require_invocation(chat, before)
    session = await chat.fork(before)
    out.header(
        f"session: {sanitize_line(session.id)} (fork of {sanitize_line(original)})",
        {"session": session.id, "forked_from": original, "name": session.name},
    )
    out.items(chat.conversation.items)
    return 0
