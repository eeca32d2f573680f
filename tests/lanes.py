"""The two lanes of the suite (docs/testing.md): ``slow`` marks what the inner loop leaves out.

``python -m pytest -m "not slow" -n 2`` is the fast lane; ``python -m pytest`` runs everything.
A test is slow when it installs something, starts real server processes, or runs for seconds by
design -- marked where it is written (``@pytest.mark.slow``, ``pytestmark``) or for a whole folder
here (:data:`SLOW_PATHS`) -- or when it was *measured* at :data:`THRESHOLD` seconds or more:
``tests/durations.json`` holds each test's time from a whole run (``--durations=0``), written by

    python -m pytest --durations=0 --durations-min=0.05 > durations.log
    python tests/lanes.py durations.log        # rewrites tests/durations.json

The same file orders the modules for the workers (``tests/schedule.py``). A test missing from it
(new, or under 0.05 s when measured) counts as fast until the next measurement.
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

import pytest

DURATIONS = Path(__file__).resolve().parent / "durations.json"
#: seconds (setup + call + teardown, summed over a test's parameters) from which a measured test is slow
THRESHOLD = 0.5

#: folders whose every test is slow (relative to tests/)
SLOW_PATHS = (
    # builds a virtualenv with kagent-adk and the add-on on first use, and runs the add-on's suite
    "kagent_adk/",
)


def measured() -> dict[str, float]:
    """``tests/durations.json``: node id (without parameters) -> seconds; empty when missing."""
    try:
        return {k: float(v) for k, v in json.loads(DURATIONS.read_text())["seconds"].items()}
    except (OSError, ValueError, KeyError):
        return {}


def base_id(nodeid: str) -> str:
    return nodeid.split("[", 1)[0]


def mark_slow(items: list[pytest.Item]) -> None:
    folders = tuple(f"tests/{p}" for p in SLOW_PATHS)
    seconds = measured()
    for item in items:
        nodeid = base_id(item.nodeid)
        if nodeid.startswith(folders) or seconds.get(nodeid, 0.0) >= THRESHOLD:
            item.add_marker(pytest.mark.slow)


_LINE = re.compile(r"^([0-9.]+)s (?:setup|call|teardown)\s+(\S+)")


def parse(log: str) -> dict[str, float]:
    """pytest's ``--durations`` lines, summed per test (setup, call and teardown; every parameter)."""
    seconds: dict[str, float] = {}
    for line in log.splitlines():
        match = _LINE.match(line)
        if match:
            nodeid = base_id(match.group(2))
            seconds[nodeid] = seconds.get(nodeid, 0.0) + float(match.group(1))
    return seconds


def main(argv: list[str]) -> int:
    if len(argv) != 1:
        print("usage: python tests/lanes.py DURATIONS_LOG  (the output of pytest --durations=0)", file=sys.stderr)
        return 2
    seconds = parse(Path(argv[0]).read_text(encoding="utf-8", errors="replace"))
    if not seconds:
        print(f"{argv[0]}: no --durations lines", file=sys.stderr)
        return 1
    document = {
        "about": "seconds per test from one whole run of the suite (tests/lanes.py); regenerate, do not edit",
        "seconds": {k: round(v, 2) for k, v in sorted(seconds.items())},
    }
    DURATIONS.write_text(json.dumps(document, indent=0) + "\n", encoding="utf-8")
    slow = sum(1 for v in seconds.values() if v >= THRESHOLD)
    print(f"wrote {DURATIONS.name}: {len(seconds)} tests, {slow} at {THRESHOLD} s or more")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
