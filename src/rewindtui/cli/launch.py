"""``rewindtui`` with no command: the app, with its embedded server started first.

The embedded server is a child process that takes about as long to start as the app takes to
import Textual and its screens. So it is started (or attached to) here, as soon as the settings
are known and before the app's modules are imported: both load side by side, and the app's
connect takes the server that is already starting (:func:`~rewindtui.server.process.spawn.prespawn`).
"""

from __future__ import annotations

import gc
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from rewindtui.config.settings import Settings


def run_app(settings: Settings) -> int:
    from rewindtui.server.process.spawn import discard_prespawned, prespawn

    # The app's modules (Textual, its screens, the chat stack) make a few hundred thousand
    # objects, none of them garbage, that live as long as the app: the cyclic collector is
    # paused while they are made (its passes over them were about 0.05 s of the launch's CPU)
    # and they are frozen out of its way after (a full pass in the app walks what the app made,
    # not its modules). Garbage among them is freed by reference counting, frozen or not.
    enabled = gc.isenabled()
    gc.disable()
    try:
        if settings.embedded:
            from rewindtui.config.connection import spawn_kwargs

            prespawn(settings.resolved_data_dir(), **spawn_kwargs(settings))
        from rewindtui.tui.app import run_app as run
    except BaseException:
        discard_prespawned()
        raise
    finally:
        gc.freeze()
        if enabled:
            gc.enable()
    try:
        return int(run(settings) or 0)
    finally:
        discard_prespawned()
