"""The theme the user picks in the app (the command palette's "Change theme") is remembered: it is
written to the config file's ``theme`` (:func:`rewindtui.config.remember.remember`), which the
next start reads. A file that cannot take it keeps its own theme, and the user is told why."""

from __future__ import annotations

import weakref
from pathlib import Path
from typing import Any

from rewindtui.config.remember import remember
from rewindtui.config.values import SettingsError

_FILES: weakref.WeakKeyDictionary[Any, Path] = weakref.WeakKeyDictionary()


def configure(app: Any, settings: Any) -> None:
    """Where ``app`` keeps its theme: the config file the settings were read from (or would be)."""
    path = getattr(settings, "config_file", None)
    if path is None:
        from rewindtui.config.saved_agents import config_path

        path = config_path()
    _FILES[app] = Path(path)


def start(app: Any) -> None:
    """From now on (the app is running), a theme change is written to the config file."""
    path = _FILES.get(app)
    if path is None:
        return

    def changed(theme: Any) -> None:
        name = getattr(theme, "name", None) or str(theme)
        try:
            remember(path, "theme", name)
        except (SettingsError, OSError) as exc:
            app.notify(
                f"The theme {name} is used now but was not saved: {exc}",
                title="Theme",
                severity="warning",
                markup=False,
            )

    app.theme_changed_signal.subscribe(app, changed)
