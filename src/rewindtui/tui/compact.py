"""``/compact`` in the app: the turns so far become one summary turn (``chat.compact``), in the
screen's rewind worker; the toast says how many turns went and that ctrl+z brings them back."""

from __future__ import annotations

from typing import Any

from rewindtui.chat.compact import compact, why_not_compact
from rewindtui.chat.errors import RewindOutcomeUnknown
from rewindtui.client.a2a_client import ClientError
from rewindtui.client.errors import user_message
from rewindtui.tui.rewind_choice import plural


def start_compact(host: Any) -> None:
    """Run ``/compact`` on the chat screen ``host``, or say why it cannot run."""
    chat = host.chat
    if chat is None:
        host.notify("Not connected yet.", title="Compact", severity="warning")
        return
    if host.replying or host.rewinding:
        host.notify("Wait for the reply or the rewind to finish.", title="Compact", severity="warning")
        return
    reason = why_not_compact(chat)
    if reason:
        host.notify(reason, title="Compact", severity="warning", timeout=6)
        return
    host.outcome = None
    host.activity = "compacting…"
    host.refresh_status()
    host.rewind_worker = host.run_worker(_compact(host), group="rewind")


async def _compact(host: Any) -> None:
    try:
        done = await compact(host.chat)
    except RewindOutcomeUnknown as exc:
        host.notify(
            f"{user_message(exc)} The view was re-read from the server.",
            title="Compact",
            severity="warning",
            timeout=10,
        )
        return
    except ClientError as exc:
        host.notify(user_message(exc), title="Compact failed", severity="error", timeout=8)
        return
    finally:
        host.activity = None
        host.refresh_status()
    host.notify(
        f"Compacted {plural(done.turns, 'turn')} into one: the agent's summary. ctrl+z brings them back.",
        title="Compact",
        timeout=8,
    )
