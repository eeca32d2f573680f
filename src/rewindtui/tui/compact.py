"""``/compact`` in the app: the turns so far become one summary turn (``chat.compact``), run by the
screen's operations runner in its rewind group; the toast says how many turns went and that
ctrl+z brings them back."""

from __future__ import annotations

from functools import partial
from typing import Any

from rewindtui.chat import Action
from rewindtui.chat.compact import compact, why_not_compact
from rewindtui.chat.outcome import plural


def start_compact(host: Any) -> None:
    """Run ``/compact`` on the chat screen ``host``, or say why it cannot run."""
    chat = host.chat
    if chat is None:
        host.notify("Not connected yet.", title="Compact", severity="warning")
        return
    reason = why_not_compact(chat)  # the runner asks the gate too (a rewind or a switch in flight)
    if reason:
        host.notify(reason, title="Compact", severity="warning", timeout=6)
        return
    host.ops.run(
        Action.REWIND,
        partial(compact, chat),
        title="Compact",
        doing="compacting…",
        done=lambda done: host.notify(
            f"Compacted {plural(done.turns, 'turn')} into one: the agent's summary. ctrl+z brings them back.",
            title="Compact",
            timeout=8,
        ),
    )
