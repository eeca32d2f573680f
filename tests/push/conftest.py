"""The push tests reuse the fault suite's proxy (``tests/faults/proxy.py``) to cut a stream."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "faults"))
