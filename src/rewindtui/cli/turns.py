"""The turn side of the headless commands: ``send`` printing as the turn goes, Ctrl+C that stops
the turn on the server, ``send --retry`` and ``stop``.

``send`` prints the ``session:`` line (``{"session": ...}`` with ``--json``) as soon as the
session is known to be on the server (at once for ``--session``; for a new one, once the server
took its first message: a refused send prints only its error), then each message of the turn as
soon as it is complete; the agent's reply is written while it streams in (readable output;
with ``--json --partial`` one ``{"kind": "delta", "text": ...}`` line per streamed piece). What
it prints in the end is what it printed before it streamed: the same lines, in the same order.

Ctrl+C during ``send`` asks the server to cancel the turn (as the app's Esc does), waits a short
grace for the server to say so, prints what the turn holds and exits 130. A second Ctrl+C exits
at once.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import signal
from collections.abc import Callable, Iterator, Sequence
from typing import Any

from rewindtui.base.textsafe import sanitize_line
from rewindtui.client.a2a_client import ClientError
from rewindtui.client.auth import redact

#: seconds Ctrl+C waits for the server to acknowledge the cancel
INTERRUPT_GRACE = 3.0


def turn_items(chat: Any, message_id: str | None) -> list[Any]:
    """The items of the turn that opened with message ``message_id`` (none if it is not shown)."""
    items = chat.conversation.items
    for i, item in enumerate(items):
        if message_id and message_id in item.message_ids:
            return list(items[i:])
    return []


class TurnPrinter:
    """A :class:`~rewindtui.chat.Chat` listener printing one turn as it arrives (see the module
    docstring). ``begin()`` when the turn is sent, ``finish(items)`` once it settled."""

    def __init__(self, out: Any, *, deltas: bool = False) -> None:
        self.out = out
        self.deltas = deltas
        self.chat: Any = None
        self.header_done = False
        self.active = False
        self._printed: list[str] = []  # readable lines, or JSON records, already out
        self._live_written = ""  # the streaming item's line as written so far (readable)
        self._live_index: int | None = None
        self._delta_seen = ""  # the streaming item's text already sent as deltas (JSON)

    # -- the listener --------------------------------------------------------------------------
    def __call__(self, change: Any) -> None:
        chat = self.chat
        if chat is None:
            return
        self.header()
        if not self.active:
            return
        items = turn_items(chat, chat.last_message_id)
        # an item is final once another follows it: the opening Task gives the user's message its
        # invocation id before any agent message arrives
        settled = [i for i in items[:-1] if not i.streaming]
        last = items[-1] if items else None
        self._emit_settled(settled)
        if last is not None and last.streaming and len(settled) == len(items) - 1:
            self._stream(last, len(items) - 1)

    def header(self) -> None:
        chat = self.chat
        if self.header_done or chat is None or not chat.session_on_server:
            return  # a new session is named once the server took its first message (else it is none)
        self.header_done = True
        self.out.header(f"session: {sanitize_line(chat.session_id)}", {"session": chat.session_id})

    def begin(self) -> None:
        self.active = True

    def finish(self, items: Sequence[Any], saved: dict[int, str] | None = None) -> None:
        """Print what the settled turn holds that is not out yet."""
        self.header()
        self.active = False
        lines = self._lines(items, saved)
        if lines[: len(self._printed)] == self._printed:
            rest = self._close_live(lines[len(self._printed) :])
        else:  # the view changed under what was printed: print the turn as it is now
            self._close_live(None)
            rest = lines
        for line in rest:
            self.out.line(line)
        self._printed = list(lines)

    # -- printing ------------------------------------------------------------------------------
    def _numbers(self) -> tuple[dict[str, int], dict[int, int | None]]:
        """The conversation's turn numbers (model/turn_numbers.py), by rewind target and by item."""
        from rewindtui.model import turn_numbers

        every = self.chat.conversation.items if self.chat is not None else []
        by_item = {id(item): n for item, n in zip(every, turn_numbers.item_numbers(every), strict=True)}
        return turn_numbers.numbers_by_target(every), by_item

    def _lines(self, items: Sequence[Any], saved: dict[int, str] | None = None) -> list[str]:
        from rewindtui.output.render_text import format_items, item_record, json_line

        numbers, by_item = self._numbers()
        if self.out.as_json:
            return [json_line(item_record(item, saved, by_item.get(id(item)))) for item in items]
        return format_items(items, saved=saved, numbers=numbers)

    def _emit_settled(self, settled: list[Any]) -> None:
        lines = self._lines(settled)
        if lines[: len(self._printed)] != self._printed:
            return  # the view changed under us: finish() prints the turn as it is
        new = lines[len(self._printed) :]
        if not new:
            return
        if self._live_index is not None:
            new = self._close_live(new)
        for line in new:
            self.out.line(line)
        self._printed = lines

    def _close_live(self, new: list[str] | None) -> list[str]:
        """End the line being streamed. If it became the next settled line as written, that line
        is out already: drop it from ``new``."""
        new = list(new or [])
        if self._live_index is None:
            return new
        if not self.out.as_json:
            self._write("\n")
            if new and new[0] == self._live_written:
                self._printed.append(new.pop(0))
        self._live_index = None
        self._live_written = ""
        self._delta_seen = ""
        return new

    def _stream(self, item: Any, index: int) -> None:
        from rewindtui.output.render_text import format_items, json_line

        if self._live_index is not None and self._live_index != index:
            self._close_live(None)
        self._live_index = index
        if self.out.as_json:
            if not self.deltas:
                return
            text = item.text
            piece = text[len(self._delta_seen) :] if text.startswith(self._delta_seen) else text
            if piece:
                self.out.line(json_line({"kind": "delta", "text": piece}))
            self._delta_seen = text
            return
        current = self._current_invocation()
        heads = item.invocation_id and item.invocation_id != current  # a header line: its turn number
        lines = format_items([item], current=current, numbers=self._numbers()[0] if heads else None)
        desired = "\n".join(lines)
        if desired.startswith(self._live_written):
            self._write(desired[len(self._live_written) :])
        else:
            self._write("\n" + desired)
        self._live_written = desired

    def _current_invocation(self) -> str | None:
        chat = self.chat
        items = turn_items(chat, chat.last_message_id)
        return items[0].invocation_id if items else None

    def _write(self, text: str) -> None:
        if text:
            self.out.stream.write(redact(text))
            self.out.stream.flush()


@contextlib.contextmanager
def stop_on_interrupt(chat: Any, grace: float = INTERRUPT_GRACE) -> Iterator[Callable[[], bool]]:
    """While inside, Ctrl+C stops the running turn on the server (``chat.stop``) instead of
    killing the command; a second Ctrl+C raises KeyboardInterrupt at once. Yields a function
    saying whether Ctrl+C was pressed."""
    loop = asyncio.get_running_loop()
    pressed: list[asyncio.Task[Any]] = []

    def on_interrupt() -> None:
        if pressed:  # the second one: no more waiting
            with contextlib.suppress(Exception):
                loop.remove_signal_handler(signal.SIGINT)
            for task in asyncio.all_tasks(loop):
                task.cancel()
            return
        pressed.append(loop.create_task(chat.stop(grace)))

    try:
        loop.add_signal_handler(signal.SIGINT, on_interrupt)
        installed = True
    except (NotImplementedError, RuntimeError, ValueError):  # not the main thread, or no signals
        installed = False
    try:
        yield lambda: bool(pressed)
    finally:
        if installed:
            with contextlib.suppress(Exception):
                loop.remove_signal_handler(signal.SIGINT)


# -- send --retry ----------------------------------------------------------------------------------
# -- stop --------------------------------------------------------------------------------------------
def add_stop_parser(
    sub: Any,
    connection_options: Callable[[argparse.ArgumentParser], None],
    json_option: Callable[[argparse.ArgumentParser], None],
    formatter: Any,
) -> None:
    p = sub.add_parser(
        "stop",
        help="stop the turn running in a session",
        description="Ask the server to cancel the turn running in a session (as the app's Esc does) "
        "and wait until it says the turn is canceled.",
        formatter_class=formatter,
    )
    connection_options(p)
    json_option(p)
    p.add_argument("--session", metavar="ID", required=True, help="the session (any unique prefix of its id)")


async def cmd_stop(conn: Any, args: argparse.Namespace, out: Any) -> int:
    from rewindtui.chat import Chat

    chat = Chat(conn.client)
    await chat.open(args.session)
    task_id = chat.conversation.running_task_id
    if task_id is None:
        raise ClientError(f"no turn is running in session {chat.session_id}")
    task = await chat.client.cancel_task(task_id)
    state = ((task or {}).get("status") or {}).get("state") or "canceled"
    state = str(state).removeprefix("TASK_STATE_").lower()
    out.header(
        f"session: {sanitize_line(chat.session_id or '')}  turn {sanitize_line(task_id)} {sanitize_line(state)}",
        {"session": chat.session_id, "task_id": task_id, "state": state},
    )
    return 0
