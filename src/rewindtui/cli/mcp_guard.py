"""What an MCP tool call may name, checked before a command runs (no MCP import: pure checks).

A tool call comes from an LLM, and an LLM follows text it read -- an agent's reply included.
Two kinds of argument are screened:

- **ids** (``session``, ``before``, ``rewind_task``): an empty or blank id is refused. The
  commands take any unique prefix of an id, and the empty string is a prefix of every id, so
  ``before: ""`` named "any turn" and rewound the only turn of a one-turn session.
- **local paths** (``files`` to attach, ``save_dir`` and ``output`` to write): only inside the
  directories the user allowed -- ``rewindtui mcp --mcp-files-dir DIR`` (repeatable) or the MCP
  client's roots. Without this, a reply asking the client to "attach ~/.ssh/id_rsa" sent that file
  to the agent. A path is judged after ``~`` and symlinks are resolved, and the resolved path is
  what the command gets (a link swapped in later does not move it). http(s) URLs are not local
  files and pass.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Sequence
from pathlib import Path
from urllib.parse import unquote, urlsplit


class Refused(ValueError):
    """A tool argument refused before anything runs; ``str()`` says why and what to do."""


def require_id(name: str, value: str | None, *, optional: bool = False) -> str | None:
    """``value`` when it is a usable id (surrounding blanks removed); Refused when it is empty or
    blank (None is fine when ``optional``)."""
    if value is None and optional:
        return None
    text = (value or "").strip()
    if not text:
        raise Refused(f"`{name}` is empty: give the id (or a unique start of it) -- an empty id would match every one")
    return text


def roots_to_dirs(uris: Iterable[str]) -> list[Path]:
    """The local directories of MCP roots (``file://`` URIs; others are not directories here)."""
    found = []
    for uri in uris:
        parts = urlsplit(str(uri))
        if parts.scheme == "file" and parts.path and parts.netloc in ("", "localhost"):
            found.append(Path(unquote(parts.path)))
    return found


def _real(path: Path) -> Path:
    return Path(os.path.realpath(path.expanduser()))


def _is_url(text: str) -> bool:
    parts = urlsplit(text.strip())
    return parts.scheme in ("http", "https") and bool(parts.netloc)


def _describe(dirs: Sequence[Path]) -> str:
    return ", ".join(str(d) for d in dirs)


NO_DIRS = (
    "no directory is allowed for local files: start the server with `rewindtui mcp --mcp-files-dir DIR`, "
    "or let the MCP client declare roots"
)


def allowed_path(name: str, text: str, dirs: Sequence[Path]) -> str:
    """``text`` (a local path) resolved, when it lies inside one of ``dirs``; Refused otherwise
    (with the reason). http(s) URLs come back unchanged."""
    if _is_url(text):
        return text
    if not text.strip():
        raise Refused(f"`{name}`: an empty path")
    if not dirs:
        raise Refused(f"`{name}` {text!r} refused: {NO_DIRS}")
    real = _real(Path(text.strip()))
    for allowed in dirs:
        base = _real(allowed)
        if real == base or real.is_relative_to(base):
            return str(real)
    raise Refused(
        f"`{name}` {text!r} refused: it is outside the directories allowed for MCP tools ({_describe(dirs)}); "
        "allow another with `rewindtui mcp --mcp-files-dir DIR` or the MCP client's roots"
    )
