"""The headless face: ``rewindtui`` and its commands, ``auth``, ``backup``, ``mcp``, ``web``."""

import sys

# httpx imports its own command line when it is imported (``httpx._main``: click, rich.progress,
# pygments -- about a tenth of the app's start) and falls back to a stub when that import fails.
# This process never runs httpx's command line: keep it from loading.
sys.modules.setdefault("httpx._main", None)  # type: ignore[arg-type]
