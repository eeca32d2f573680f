"""The effective-history golden vectors (``effective_history.json`` beside this file) as ADK
events. Needs only google-adk: the add-on's tests import it, and so do rewindtui's server tests
(by path), so that both sides read the vectors the same way."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from google.adk.events import Event
from google.adk.events.event_actions import EventActions

PATH = Path(__file__).resolve().parent / "effective_history.json"
#: each case: ``name``, ``why``, ``events`` (specs for :func:`event`), ``effective`` (event ids)
CASES: list[dict[str, Any]] = json.loads(PATH.read_text())["cases"]


def event(spec: dict[str, Any]) -> Event:
    """The ADK event a spec describes; ``rewind_before`` is ``actions.rewind_before_invocation_id``."""
    return Event(
        id=spec["id"],
        invocation_id=spec.get("invocation_id", ""),
        author=spec["author"],
        actions=EventActions(rewind_before_invocation_id=spec.get("rewind_before")),
    )


def events(case: dict[str, Any]) -> list[Event]:
    return [event(spec) for spec in case["events"]]
