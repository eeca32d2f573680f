"""Whether a process lives: the server watches the apps attached to it, an app the server it uses.

Standard library only (``process/spawn.py`` must stay light to import).
"""

from __future__ import annotations

import os


def alive(pid: int) -> bool:
    """The process ``pid`` exists (another user's process counts: signalling it is refused, not failed)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True
