"""rewindtui's embedded A2A agent server: google-adk + a2a-sdk + SQLite, with real rewind and fork.

Entry points:

* :class:`EmbeddedServer` -- start/stop inside this process (tests, tools).
* :func:`rewindtui.server.process.spawn.spawn_server` -- run it in a child process
  (what the app uses; that module imports only the standard library).
* :func:`rewindtui.server.process.serve.main` -- ``rewindtui serve`` in the foreground.

This package stays light to import: ``EmbeddedServer`` is loaded on first use.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from rewindtui.server.process.embedded import EmbeddedServer

__all__ = ["EmbeddedServer"]


def __getattr__(name: str) -> Any:
    if name == "EmbeddedServer":
        from rewindtui.server.process.embedded import EmbeddedServer

        return EmbeddedServer
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
