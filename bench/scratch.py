"""A benchmark's scratch directory: the one the user gave (kept), or a temporary one that is removed
when the benchmark ends, however it ends (a 10,000-turn run leaves about 2 GB of databases)."""

from __future__ import annotations

import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path


@contextmanager
def scratch(prefix: str, given: Path | None = None) -> Iterator[Path]:
    if given is not None:
        yield given
        return
    with tempfile.TemporaryDirectory(prefix=prefix, ignore_cleanup_errors=True) as tmp:
        yield Path(tmp)
