"""Copying text to the user's clipboard, and saying where it went.

A terminal app cannot know whether its terminal honours OSC 52 (the escape sequence that sets the
clipboard; many terminals allow it, some ask, tmux needs ``set-clipboard on``, macOS Terminal
ignores it). So: in a local graphical session, the system's clipboard tool is used (``wl-copy``,
``xclip``, ``xsel``, ``pbcopy``) and the message says so; otherwise (over ssh, or no tool) the text
goes to the terminal by OSC 52 *and* is written to a file, and the message names that file.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path

CLIPBOARD_FILE = "clipboard.txt"
_TIMEOUT = 3.0


@dataclass(frozen=True)
class Copied:
    how: str  # "tool" | "osc52"
    message: str  # what the user is told
    path: Path | None = None  # the file the text was also written to


def _tools(env: Mapping[str, str]) -> list[list[str]]:
    if env.get("SSH_CONNECTION") or env.get("SSH_TTY"):
        return []  # a tool would set the remote machine's clipboard, not the user's
    tools = []
    if env.get("WAYLAND_DISPLAY"):
        tools.append(["wl-copy"])
    if env.get("DISPLAY"):
        tools += [["xclip", "-selection", "clipboard"], ["xsel", "--clipboard", "--input"]]
    if sys.platform == "darwin":
        tools.append(["pbcopy"])
    return [t for t in tools if shutil.which(t[0])]


def copy_text(
    text: str, osc52: Callable[[str], None], fallback_dir: Path, env: Mapping[str, str] | None = None
) -> Copied:
    """Put ``text`` on the clipboard (see the module docstring); ``osc52`` writes the sequence."""
    env = os.environ if env is None else env
    size = f"{len(text)} character{'s' if len(text) != 1 else ''}"
    for tool in _tools(env):
        try:
            subprocess.run(tool, input=text.encode(), check=True, timeout=_TIMEOUT, capture_output=True)
        except (OSError, subprocess.SubprocessError):
            continue
        return Copied("tool", f"Copied {size} to the clipboard ({tool[0]}).")
    osc52(text)
    path = fallback_dir / CLIPBOARD_FILE
    try:
        fallback_dir.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    except OSError as exc:
        return Copied(
            "osc52", f"Sent {size} to the terminal's clipboard (OSC 52); could not also save it: {exc.strerror}."
        )
    return Copied(
        "osc52",
        f"Sent {size} to the terminal's clipboard (OSC 52; tmux needs set-clipboard on). If it did not arrive, "
        f"it is also in {path}",
        path,
    )
