"""One item that cannot be drawn never takes the app down.

A transcript item is drawn by :meth:`Transcript._render_item`; whatever it raises (a server's
odd shape, a RecursionError in a library, a bug of ours) is caught here and the item is drawn as
one line, "could not be shown: <reason> (<its raw size>)", logged with its key. The rest of the
session draws and works as before.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable
from typing import Any

from rich.segment import Segment
from rich.style import Style
from textual.strip import Strip

from rewindtui.a2a.parts import human_size
from rewindtui.base.textsafe import sanitize_line

log = logging.getLogger(__name__)
_STYLE = Style(color="red", italic=True)


def guarded(render: Callable[[], list[Strip]], item: Any) -> list[Strip]:
    """``render()``, or the one-line stand-in when it raises."""
    try:
        return render()
    except Exception as exc:  # RecursionError and anything else: this item only
        log.warning("item %s could not be shown", getattr(item, "key", "?"), exc_info=exc)
        return [Strip.blank(0), Strip([Segment(unshown_text(item, exc), _STYLE)])]


def unshown_text(item: Any, exc: BaseException) -> str:
    reason = sanitize_line(f"{type(exc).__name__}: {exc}")[:120] if str(exc) else type(exc).__name__
    return f"could not be shown: {reason} ({human_size(raw_size(item))})"


def raw_size(item: Any) -> int:
    """The item's size as it came (its wire JSON; its text when that cannot be written)."""
    try:
        return len(json.dumps(getattr(item, "raw", None), default=str, ensure_ascii=False).encode())
    except (ValueError, TypeError, RecursionError):
        try:
            return len(str(getattr(item, "text", "") or "").encode())
        except Exception:
            return 0
