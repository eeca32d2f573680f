"""Writing one top-level setting back into the config file (the theme the user picked in the app),
keeping the rest of the file as written: the ``key = ...`` line before the first table is
replaced, or one is added there. The result is read back and compared before it replaces the
file (everything else must parse the same), so a file written another way is left alone, with
the reason, rather than mangled."""

from __future__ import annotations

import json
import re
import tomllib
from pathlib import Path
from typing import Any

from rewindtui.config.values import SettingsError

_TABLE = re.compile(r"^\s*\[")


def remember(path: Path, key: str, value: str) -> None:
    """Set top-level ``key = value`` in the TOML file at ``path`` (made if absent)."""
    if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", key):
        raise ValueError(f"not a plain key: {key!r}")
    text = path.read_text(encoding="utf-8") if path.is_file() else ""
    try:
        before: dict[str, Any] = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise SettingsError(f"{path}: not valid TOML ({exc}); {key} was not saved") from None
    line = f"{key} = {json.dumps(value)}\n"
    own = re.compile(rf"^\s*{key}\s*=")
    lines = text.splitlines(keepends=True)
    out: list[str] = []
    placed = False
    for n, current in enumerate(lines):
        if _TABLE.match(current) and not placed:
            out.append(line)
            placed = True
        if not placed and own.match(current):
            out.append(line)
            placed = True
            continue
        out.append(current)
        if n == len(lines) - 1 and not current.endswith("\n"):
            out[-1] = current + "\n"
    if not placed:
        out.append(line)
    new = "".join(out)
    try:
        after = tomllib.loads(new)
    except tomllib.TOMLDecodeError:
        raise SettingsError(f"{path}: could not add {key} safely; it was not saved") from None
    if after != {**before, key: value}:
        raise SettingsError(
            f"{path}: its {key} is not a plain top-level line; it was not saved (edit the file by hand)"
        )
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(new, encoding="utf-8")
    tmp.replace(path)
