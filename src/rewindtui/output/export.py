"""A conversation written out: Markdown and JSON exports, the text a copy puts on the clipboard,
and the headless history with rewound turns marked.

Everything works on the conversation model's items (``Conversation.items``; rewound ones carry
``Item.rewound`` when the caller showed them). Text from the model is written literally but
made terminal-safe (:mod:`rewindtui.base.textsafe`): an export printed to a terminal cannot drive it.
Pure: items in, text out (and :func:`write_export`, which never overwrites unasked).
"""

from __future__ import annotations

import json
import re
import time
from collections.abc import Iterable, Mapping, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from rewindtui.a2a.parts import part_info
from rewindtui.base.textsafe import sanitize, sanitize_line
from rewindtui.model import Item, ItemKind, turn_numbers
from rewindtui.output.render_text import format_items, item_record, json_line, who

FORMATS = ("md", "json")
#: the most characters of a part rewindtui does not know written into an export
_PART_EXCERPT = 300


def local_time(stamp: str | None, *, seconds: bool = False) -> str:
    """``2026-11-20 14:03`` in local time from an ISO 8601 timestamp ('' if there is none)."""
    if not stamp:
        return ""
    try:
        when = datetime.fromisoformat(stamp.replace("Z", "+00:00"))
    except ValueError:
        return sanitize_line(stamp)[:16]
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    return when.astimezone().strftime("%Y-%m-%d %H:%M:%S" if seconds else "%Y-%m-%d %H:%M")


def _fence(text: str) -> str:
    """A code fence longer than any backtick run in ``text``."""
    longest = max((len(run) for run in re.findall("`+", text)), default=0)
    return "`" * max(3, longest + 1)


def _tool_lines(item: Item) -> list[str]:
    lines = []
    for call in item.tools if item.kind is ItemKind.MESSAGE and item.raw is not None else ():
        args = json.dumps(call.args, ensure_ascii=False, default=str) if call.args is not None else ""
        result = json.dumps(call.result, ensure_ascii=False, default=str) if call.has_result else "(no result)"
        lines.append(f"- tool `{sanitize_line(call.name)}({sanitize_line(args)})` → `{sanitize_line(result)}`")
    return lines


def _heading(item: Item) -> str:
    name = "You" if item.role == "user" and item.kind is ItemKind.MESSAGE else who(item)
    if item.rewound is not None:
        when = local_time(item.rewound.at)
        name += f" — rewound{' ' + when if when else ''} (not part of the conversation)"
    return name


def _part_line(part: Any, item: Item, saved: Mapping[int, str] | None) -> str:
    """A file is described (name, media type, size; where it was saved), never inlined; a data
    part is its JSON (an answer's decision is said by its text already)."""
    info = part_info(part)
    where = (saved or {}).get(id(part))
    if info.kind == "file":
        return f"- file `{sanitize_line(info.label())}`" + (f" → saved as `{sanitize_line(where)}`" if where else "")
    if info.kind == "data":
        if item.is_answer:
            return ""
        return f"- data `{sanitize_line(json.dumps(info.data, ensure_ascii=False, default=str))}`"
    text = sanitize_line(json.dumps(part, ensure_ascii=False, default=str))
    return f"- part `{text if len(text) <= _PART_EXCERPT else text[: _PART_EXCERPT - 1] + '…'}`"


def markdown_items(items: Iterable[Item], saved: Mapping[int, str] | None = None) -> str:
    """The items as Markdown sections: ``### You`` / ``### <agent>``, the text, tool calls, and
    their files described (``saved``: {id(part): where it was saved})."""
    out: list[str] = []
    for item in items:
        out.append(f"### {_heading(item)}")
        out.append("")
        text = sanitize(item.text).strip("\n")
        if item.kind in (ItemKind.ERROR, ItemKind.UNKNOWN):
            fence = _fence(text)
            out += [fence, text, fence]
        elif text:
            out.append(text)
        tools = _tool_lines(item)
        if tools:
            out += ["", *tools] if text else tools
        for part in item.other_parts if item.kind in (ItemKind.MESSAGE, ItemKind.ARTIFACT) else ():
            line = _part_line(part, item, saved)
            if line:
                out.append(line)
        out.append("")
    return "\n".join(out).rstrip("\n") + "\n" if out else ""


def markdown(
    items: Sequence[Item],
    *,
    session_id: str | None,
    title: str = "",
    times: Mapping[str, str] | None = None,
    saved: Mapping[int, str] | None = None,
) -> str:
    """The whole transcript as a Markdown document, a rule before each turn (with its time)."""
    head = [f"# {sanitize_line(title) or 'rewindtui conversation'}", ""]
    turns = sum(1 for item in items if _opens_turn(item) and item.rewound is None)
    head.append(
        f"Session `{sanitize_line(session_id or '(new)')}` · {turns} turn{'s' if turns != 1 else ''} · "
        f"exported {local_time(_now_iso())}"
    )
    body: list[str] = []
    run: list[Item] = []
    run_numbers: list[int | None] = []
    for item, number in zip(items, turn_numbers.item_numbers(items), strict=True):
        if _opens_turn(item) and run:
            body.append(_turn_block(run, times, saved, run_numbers))
            run, run_numbers = [], []
        run.append(item)
        run_numbers.append(number)
    if run:
        body.append(_turn_block(run, times, saved, run_numbers))
    return "\n".join(head) + "\n\n" + "\n".join(body)


def _opens_turn(item: Item) -> bool:
    """A user's message opens a turn; an answer to a question is part of the turn that asked."""
    return item.role == "user" and item.kind is ItemKind.MESSAGE and not item.is_answer


def _turn_block(
    items: list[Item],
    times: Mapping[str, str] | None,
    saved: Mapping[int, str] | None = None,
    numbers: Sequence[int | None] = (),
) -> str:
    """A rule, then ``*Turn 3 · 2026-11-22 14:03*`` (the turn's number: model/turn_numbers.py;
    a rewound turn has none), then the items."""
    when = local_time((times or {}).get(items[0].task_id or "")) if items[0].task_id else ""
    number = next((n for n in numbers if n is not None), None)
    label = " · ".join(part for part in (f"Turn {number}" if number else "", when) if part)
    rule = f"---\n\n*{label}*\n\n" if label else "---\n\n"
    return rule + markdown_items(items, saved)


def record(
    item: Item, times: Mapping[str, str] | None = None, saved: Mapping[int, str] | None = None
) -> dict[str, Any]:
    """``render_text.item_record`` plus the turn's time and, for a rewound item, its mark."""
    out = marked_record(item, saved)
    out["time"] = (times or {}).get(item.task_id or "")
    return out


def marked_record(item: Item, saved: Mapping[int, str] | None = None) -> dict[str, Any]:
    """``render_text.item_record``; a rewound item's also says when and by which rewind."""
    out = item_record(item, dict(saved) if saved else None)
    if item.rewound is not None:
        out["rewound"] = {"at": item.rewound.at, "by": item.rewound.by, "fork_before": item.rewound.fork_before}
    return out


def json_document(
    items: Sequence[Item],
    *,
    session_id: str | None,
    title: str = "",
    times: Mapping[str, str] | None = None,
    saved: Mapping[int, str] | None = None,
) -> str:
    """The transcript as one JSON document: the session and every message's record."""
    doc = {
        "session": {"id": session_id, "name": title},
        "exported_at": _now_iso(),
        "messages": [
            {**record(item, times, saved), "turn": number}
            for item, number in zip(items, turn_numbers.item_numbers(items), strict=True)
        ],
    }
    return json_line(doc, indent=2) + "\n"


def export(
    items: Sequence[Item],
    fmt: str,
    *,
    session_id: str | None,
    title: str = "",
    times: Mapping[str, str] | None = None,
    saved: Mapping[int, str] | None = None,
) -> str:
    """The transcript as ``md`` or ``json``: files are described, never inlined (``saved``:
    {id(part): where each was saved}, see :func:`files_dir_for`)."""
    if fmt == "md":
        return markdown(items, session_id=session_id, title=title, times=times, saved=saved)
    if fmt == "json":
        return json_document(items, session_id=session_id, title=title, times=times, saved=saved)
    raise ValueError(f"unknown export format {fmt!r} (use {' or '.join(FORMATS)})")


class ExportExists(FileExistsError):
    """The export's file exists: it is not overwritten unless asked (``force``)."""


def files_dir_for(output: Path) -> Path:
    """Where an export's files are saved, beside it: ``talk.md`` -> ``talk.md.files/``."""
    return output.with_name(output.name + ".files")


def write_export(output: Path, text: str, *, force: bool = False) -> None:
    """Write an export; an existing file is overwritten only with ``force`` (else ExportExists,
    nothing written). OSError when it cannot be written."""
    mode = "w" if force else "x"
    try:
        with output.open(mode, encoding="utf-8") as handle:
            handle.write(text)
    except FileExistsError:
        raise ExportExists(f"{output} exists; nothing was written (overwrite it on purpose: --force)") from None


def history_lines(items: Sequence[Item]) -> list[str]:
    """``render_text.format_items``, with each run of rewound items opened by a line saying it was
    rewound, when, and how to bring it back."""
    out: list[str] = []
    current: str | None = None
    numbers = turn_numbers.numbers_by_target(items)
    i = 0
    while i < len(items):
        mark = items[i].rewound
        j = i
        while j < len(items) and (items[j].rewound is None) == (mark is None):
            j += 1
        if mark is None:
            out += format_items(items[i:j], current=current, numbers=numbers)
            current = next((it.invocation_id for it in reversed(items[i:j]) if it.invocation_id), current)
        else:
            for start, end, group_mark in _by_mark(items[i:j]):
                when = local_time(group_mark.at)
                how = f"; `redo --rewind-task {group_mark.by}` brings it back" if group_mark.by else ""
                out.append(f"=== rewound{' ' + when if when else ''} (not part of the conversation{how}) ===")
                out += format_items(items[i:j][start:end], current=None)
                out.append("=== end of rewound ===")
            current = None
        i = j
    return out


def _by_mark(items: Sequence[Item]) -> list[tuple[int, int, Any]]:
    """Runs of rewound items taken away by the same rewind: (start, end, the first one's mark)."""

    def rewind_of(item: Item) -> tuple[str | None, str | None]:
        mark = item.rewound
        return (mark.by, mark.at) if mark is not None else (None, None)

    runs: list[tuple[int, int, Any]] = []
    start = 0
    for k in range(1, len(items) + 1):
        if k == len(items) or rewind_of(items[k]) != rewind_of(items[start]):
            runs.append((start, k, items[start].rewound))
            start = k
    return runs


def _now_iso() -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
