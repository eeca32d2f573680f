"""rewindtui: a terminal chat client for A2A agents, built around rewind."""

from __future__ import annotations


def __getattr__(name: str) -> str:
    """``__version__``: the installed distribution's, so pyproject.toml is the one place it is
    written (read on first use: package metadata costs every command's start otherwise)."""
    if name != "__version__":
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("rewindtui")
    except PackageNotFoundError:  # a source tree that was never installed
        return "0+unknown"
