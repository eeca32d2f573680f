"""How the transcript draws file and data parts: readable, never as base64.

A file part is one line: its name, media type and size (or its link) and a ``[save]`` button.
A data part is its JSON, pretty-printed: the first :data:`COLLAPSED_LINES` lines, then a toggle
line that shows the rest (the same toggle as a turn's tool details); a data part holding a JSON
schema form (:mod:`rewindtui.a2a.forms`) says under its heading how to fill it in (``/form``).
Everything from the sender is
sanitised and drawn as plain text, never as markup. Pure rendering (Rich renderables); the
transcript supplies the styles, including the click actions.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from rich.console import RenderableType
from rich.style import Style
from rich.text import Text

from rewindtui.a2a.forms import form_of
from rewindtui.a2a.parts import part_info, tidy_json
from rewindtui.base.textsafe import sanitize, sanitize_line

#: Lines of a data part shown before "show more".
COLLAPSED_LINES = 6
#: The most lines of one data part drawn even when expanded (the rest: save it to read it).
EXPANDED_LIMIT = 400
#: What a data part holding a form says under its heading (the one slash command that answers it).
FORM_HINT = "a form to fill in: /form opens the newest form the agent sent (the answer is attached, Enter sends it)"


@dataclass(frozen=True)
class PartStyles:
    muted: Style
    label: Style
    button: Style  # the [save] button (its click action included)
    toggle: Style  # the show more / less line (its click action included)


def _json_lines(value: Any) -> list[str]:
    try:
        text = json.dumps(tidy_json(value), ensure_ascii=False, indent=2, default=str)
    except (TypeError, ValueError):
        text = repr(value)
    return sanitize(text).split("\n")


def has_more(parts: Iterable[Any]) -> bool:
    """True when some data part is longer than its collapsed view (the toggle does something)."""
    return any(part_info(p).kind == "data" and len(_json_lines(part_info(p).data)) > COLLAPSED_LINES for p in parts)


def render_parts(parts: Iterable[Any], styles: PartStyles, *, expanded: bool, savable: bool) -> list[RenderableType]:
    out: list[RenderableType] = []
    for part in parts:
        info = part_info(part)
        if info.kind == "file":
            line = Text("file ", style=styles.label)
            line.append(sanitize_line(info.label()), style=styles.muted)
            if savable:
                line.append("  ")
                line.append("[save]", style=styles.button)
            line.no_wrap = True
            line.overflow = "ellipsis"
            out.append(line)
        elif info.kind == "data":
            lines = _json_lines(info.data)
            head = Text("data ", style=styles.label)
            head.append(f"{info.media_type} · {len(lines)} line{'s' if len(lines) != 1 else ''}", style=styles.muted)
            if savable:
                head.append("  ")
                head.append("[save]", style=styles.button)
            out.append(head)
            if form_of(info.data) is not None:
                out.append(Text(FORM_HINT, style=styles.label))
            shown = lines if expanded else lines[:COLLAPSED_LINES]
            body = Text("\n".join(shown[:EXPANDED_LIMIT]), style=styles.muted)
            out.append(body)
            hidden = len(lines) - len(shown)
            if hidden > 0:
                out.append(
                    Text(
                        f"▸ {hidden} more line{'s' if hidden != 1 else ''} (click, or t in rewind mode)",
                        style=styles.toggle,
                    )
                )
            elif expanded and len(lines) > EXPANDED_LIMIT:
                out.append(
                    Text(f"… {len(lines) - EXPANDED_LIMIT} more lines: save it to read them all", style=styles.muted)
                )
            elif expanded and len(lines) > COLLAPSED_LINES:
                out.append(Text("▾ show less", style=styles.toggle))
        else:
            text = json.dumps(part, ensure_ascii=False, default=str) if not isinstance(part, str) else part
            text = text if len(text) <= 200 else text[:199] + "…"
            out.append(Text("part " + sanitize_line(text), style=styles.muted))
    return out
