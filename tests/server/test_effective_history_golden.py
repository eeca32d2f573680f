"""The embedded server's effective history (``wire.effective_events``: what the model still sees
after rewinds) against the golden vectors the kagent-rewind add-on is tested with too, and ADK's
own walk on the same vectors: one contract, three implementations.

The vectors live in the add-on (``kagent-rewind/tests/golden/``) because the add-on installs and
tests without this package; this suite reads them, and their loader ``vectors.py``, from the
repository."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from typing import Any

import pytest

from rewindtui.server.shared.internals import resolve
from rewindtui.server.shared.wire import effective_events

VECTORS = Path(__file__).resolve().parents[2] / "kagent-rewind" / "tests" / "golden" / "vectors.py"
_spec = importlib.util.spec_from_file_location("effective_history_vectors", VECTORS)
assert _spec is not None and _spec.loader is not None
golden = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(golden)
CASES = golden.CASES


@pytest.mark.parametrize("case", CASES, ids=[c["name"] for c in CASES])
def test_effective_events_match_the_golden_vectors(case: dict[str, Any]) -> None:
    assert [e.id for e in effective_events(golden.events(case))] == case["effective"], case["why"]


@pytest.mark.parametrize("case", CASES, ids=[c["name"] for c in CASES])
def test_adk_agrees_with_the_golden_vectors(case: dict[str, Any]) -> None:
    """The vectors are ADK's behaviour: a new google-adk that walks rewinds differently fails here."""
    apply_rewinds = resolve("google.adk.events._rewind_events", "_apply_rewinds")
    assert [e.id for e in apply_rewinds(golden.events(case))] == case["effective"], case["why"]
