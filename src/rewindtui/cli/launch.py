"""``rewindtui`` with no command: the app, with its embedded server started first.

The embedded server is a child process that takes about as long to start as the app takes to
import Textual and its screens. So it is started (or attached to) here, as soon as the settings
are known and before the app's modules are imported: both load side by side, and the app's
connect takes the server that is already starting (:func:`~rewindtui.server.process.spawn.prespawn`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from rewindtui.config.settings import Settings


def run_app(settings: Settings) -> int:
    from rewindtui.server.process.spawn import discard_prespawned, prespawn

    if settings.embedded:
        from rewindtui.config.connection import spawn_kwargs

        prespawn(settings.resolved_data_dir(), **spawn_kwargs(settings))
    try:
        from rewindtui.tui.app import run_app as run

        return int(run(settings) or 0)
    finally:
        discard_prespawned()
