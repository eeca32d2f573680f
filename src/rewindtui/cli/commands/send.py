"""``send`` (a turn, an answer to the agent's question, a retry) and ``stop``."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from rewindtui.cli.commands.common import open_session, save_item_parts, turn_failure, turn_items
from rewindtui.cli.output import EXIT_INTERRUPTED, PROG, CommandFailed, Output, say
from rewindtui.client.a2a_client import ClientError


def _read_text(words: list[str]) -> str:
    if words == ["-"]:
        return sys.stdin.read().rstrip("\n")
    return " ".join(words)


def read_attachments(args: argparse.Namespace) -> list[Any]:
    """``--file`` and ``--data``, checked before anything is sent (the size limit counts them all)."""
    from rewindtui.client.attachments import attach, parse_data

    found: list[Any] = []
    for source in getattr(args, "file", None) or ():
        found.append(attach(source, already=found))
    for text in getattr(args, "data", None) or ():
        found.append(parse_data(text))
    return found


def _send_push(client: Any, args: argparse.Namespace) -> Any:
    import os

    from rewindtui.client.push import SendPush

    push = SendPush(
        client,
        enabled=getattr(args, "push", False),
        url=getattr(args, "push_url", None),
        token=os.environ.get("REWINDTUI_PUSH_TOKEN"),
        wait=getattr(args, "push_wait", None),
    )
    push.check()  # before anything is sent
    return push


async def cmd_send(conn: Any, args: argparse.Namespace, out: Output) -> int:
    from rewindtui.chat import Chat, StoppedBeforeSending, TurnInterrupted, TurnRefused
    from rewindtui.cli.turns import TurnPrinter, stop_on_interrupt

    approve, reject = getattr(args, "approve", False), getattr(args, "reject", False)
    retry = getattr(args, "retry", False)
    session_id = getattr(args, "session", None)
    attachments = read_attachments(args)
    if retry:
        if args.text or attachments or not session_id:
            raise CommandFailed(
                "--retry sends the failed last turn of --session again: give no TEXT, --file or --data", code="usage"
            )
        text = ""
    elif approve or reject:
        if args.text or attachments:
            raise CommandFailed(
                "--approve / --reject answer the agent's question: give no TEXT, --file or --data with them",
                code="usage",
            )
        if not session_id:
            raise CommandFailed("--approve / --reject need the --session whose agent asks", code="usage")
        text = ""
    else:
        text = _read_text(args.text)
        if not text.strip() and not attachments:
            raise CommandFailed("nothing to send: give TEXT, --file or --data", code="usage")

    printer = TurnPrinter(out, deltas=getattr(args, "partial", False))
    push = _send_push(conn.client, args)
    extra = getattr(args, "listener", None)  # the MCP server's progress

    def listener(change: Any) -> None:
        printer(change)
        if extra is not None:
            extra(change)

    chat = Chat(conn.client, listener=listener)
    if session_id:
        await open_session(chat, session_id)
    else:
        await chat.open(None)
    printer.chat = chat
    printer.header()  # the session line at once (a new session's id: at the send)
    try:
        async with push:
            with stop_on_interrupt(chat) as interrupted:
                printer.begin()
                try:
                    if retry:
                        await chat.retry()
                    elif approve or reject:
                        perms = chat.permissions()
                        if not perms.can_confirm:
                            raise CommandFailed(
                                f"nothing to answer in session {chat.session_id}: {perms.confirm_reason}"
                            )
                        await chat.confirm(approve)
                    else:
                        await chat.send(text, attachments)
                except TurnInterrupted:
                    if push.receiver is None:
                        raise
                    say("the turn's stream was cut: waiting for its push notification", kind="note")
                    from rewindtui.chat.push import finish_send  # loaded only for --push

                    state = await finish_send(chat, push)
                    if state is None:
                        raise
                    say(f"the turn ended {state}: delivered by its push notification", kind="note")
    except StoppedBeforeSending as exc:  # ctrl+c before the message left: nothing to cancel
        say(f"stopped: {exc}", kind="note")
        return EXIT_INTERRUPTED
    except TurnRefused:
        raise  # nothing to show: the server did not take the message
    except ClientError:
        printer.finish(turn_items(chat, chat.last_message_id))
        raise
    saved = await save_item_parts(chat, turn_items(chat, chat.last_message_id), getattr(args, "save_dir", None))
    printer.finish(turn_items(chat, chat.last_message_id), saved)
    if interrupted():
        if chat.conversation.turn_state == "canceled":
            say(f"stopped: the turn was canceled on the server (session {chat.session_id})", kind="note")
        else:  # the server had not confirmed the cancel within the grace: say so, and how to wait for it
            say(
                f"stopped: the server was asked to cancel the turn and had not confirmed it yet "
                f"(`{PROG} stop --session {chat.session_id}` waits for it)",
                kind="note",
            )
        return EXIT_INTERRUPTED
    failure = turn_failure(chat)
    if failure:
        raise CommandFailed(failure)
    question = chat.pending_confirmation()
    if question is not None:
        asks = question.hint or f"may it run {question.tool}?"
        say(
            f"the agent asks: {asks} ({question.tool} {_args_text(question.args)}); answer with "
            f"`{PROG} send --session {chat.session_id} --approve` (or --reject)",
            kind="note",
        )
    elif chat.conversation.turn_state in ("input-required", "auth-required"):
        say(f"the agent is waiting for input ({chat.conversation.turn_state})", kind="note")
    return 0


def _args_text(args: Any) -> str:
    import json

    try:
        return json.dumps(args, ensure_ascii=False, default=str)
    except (TypeError, ValueError):
        return repr(args)


async def cmd_stop(conn: Any, args: argparse.Namespace, out: Output) -> int:
    from rewindtui.cli.turns import cmd_stop as stop

    return await stop(conn, args, out)
