"""The embedded server's effective history (``wire.effective_events``: what the model still sees
after rewinds) against the golden vectors the kagent-rewind add-on is tested with too, and ADK's
own walk on the same vectors: one contract, three implementations.

The vectors live in the add-on (``kagent-rewind/tests/golden/``) because the add-on installs and
tests without this package; this suite reads them from the repository."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from google.adk.events.event import Event
from google.adk.events.event_actions import EventActions

from rewindtui.server.agent.internals import resolve
from rewindtui.server.service.wire import effective_events

GOLDEN = Path(__file__).resolve().parents[2] / "kagent-rewind" / "tests" / "golden" / "effective_history.json"
CASES = json.loads(GOLDEN.read_text())["cases"]


def event(spec: dict[str, Any]) -> Event:
    return Event(
        id=spec["id"],
        invocation_id=spec.get("invocation_id", ""),
        author=spec["author"],
        actions=EventActions(rewind_before_invocation_id=spec.get("rewind_before")),
    )


@pytest.mark.parametrize("case", CASES, ids=[c["name"] for c in CASES])
def test_effective_events_match_the_golden_vectors(case: dict[str, Any]) -> None:
    events = [event(spec) for spec in case["events"]]
    assert [e.id for e in effective_events(events)] == case["effective"], case["why"]


@pytest.mark.parametrize("case", CASES, ids=[c["name"] for c in CASES])
def test_adk_agrees_with_the_golden_vectors(case: dict[str, Any]) -> None:
    """The vectors are ADK's behaviour: a new google-adk that walks rewinds differently fails here."""
    apply_rewinds = resolve("google.adk.events._rewind_events", "_apply_rewinds")
    events = [event(spec) for spec in case["events"]]
    assert [e.id for e in apply_rewinds(events)] == case["effective"], case["why"]
