"""Where rewindtui keeps things on this machine: one answer for the app, the CLI and the server."""

from __future__ import annotations

from pathlib import Path

import platformdirs

APP_NAME = "rewindtui"


def default_data_dir() -> Path:
    """The user data directory (the embedded server's data, the client's local stores)."""
    return Path(platformdirs.user_data_dir(APP_NAME, appauthor=False))


def default_config_path() -> Path:
    return Path(platformdirs.user_config_dir(APP_NAME, appauthor=False)) / "config.toml"
