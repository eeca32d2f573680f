"""Transcript items, sessions and agent cards as JSON records and as readable plain text
(headless commands).

File parts are described (name, media type, size, link, where saved), never printed as their
bytes; data parts are pretty-printed JSON.

JSON keeps the text exact (control characters escaped by JSON itself, C1 controls too);
plain text goes through :mod:`rewindtui.base.textsafe` so nothing a model says can drive the terminal.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping
from typing import Any

from rewindtui.a2a.card import card_sections, card_warnings, security_schemes
from rewindtui.a2a.parts import part_info, tidy_json
from rewindtui.base.textsafe import sanitize, sanitize_line
from rewindtui.client.a2a_client import Capabilities, Session
from rewindtui.model import Item, ItemKind

_TOOL_EXCERPT = 400
_C1 = re.compile(r"[\x7f-\x9f\u2028\u2029]")


def part_record(part: Any, saved: dict[int, str] | None = None) -> dict[str, Any]:
    """A file or data part described: no bytes."""
    info = part_info(part)
    record: dict[str, Any] = {"kind": info.kind, "name": info.name or None, "media_type": info.media_type or None}
    if info.kind == "file":
        record.update(size=info.size, url=info.url or None)
    else:
        record["data"] = info.data
    record["saved"] = (saved or {}).get(id(part))
    return record


def _split_parts(item: Item) -> tuple[list[Any], list[Any]]:
    """(file and data parts, other parts) of a message or artifact."""
    if item.kind not in (ItemKind.MESSAGE, ItemKind.ARTIFACT):
        return [], []
    known: list[Any] = []
    other: list[Any] = []
    for part in item.other_parts:
        (known if part_info(part).kind in ("file", "data") else other).append(part)
    return known, other


def item_record(item: Item, saved: dict[int, str] | None = None, turn: int | None = None) -> dict[str, Any]:
    """One transcript item as a JSON-able dict with a stable set of keys (``turn``: the number of
    the turn it belongs to, model/turn_numbers.py; None when the caller does not know it)."""
    known, other = _split_parts(item)
    return {
        "kind": item.kind.value,
        "message_id": item.message_ids[0] if item.message_ids else None,
        "role": item.role,
        "author": item.author,
        "text": item.text,
        "invocation_id": item.invocation_id,
        "task_id": item.task_id,
        "tools": [
            {"name": t.name, "id": t.call_id, "args": t.args, "result": t.result if t.has_result else None}
            for t in (item.tools if item.raw is not None else ())
        ],
        "parts": [part_record(p, saved) for p in known],
        "other_parts": other,
        "turn": turn,
    }


def session_record(session: Session) -> dict[str, Any]:
    return {
        "id": session.id,
        "name": session.name,
        "user_id": session.user_id,
        "created_at": session.created_at,
        "updated_at": session.updated_at,
        "gone": session.gone,
        "state": session.state or None,
    }


def json_line(obj: Any, *, indent: int | None = None) -> str:
    """One line of JSON (``indent``: a readable document), non-ASCII text kept readable but C1
    controls (and DEL, U+2028/9) escaped."""
    separators = (", " if indent is None else ",", ": ")
    text = json.dumps(obj, ensure_ascii=False, default=str, separators=separators, indent=indent)
    return _C1.sub(lambda m: f"\\u{ord(m.group()):04x}", text)


def _compact(value: Any, limit: int = _TOOL_EXCERPT) -> str:
    try:
        text = json.dumps(value, ensure_ascii=False, default=str)
    except (TypeError, ValueError):
        text = repr(value)
    text = sanitize_line(text)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def who(item: Item) -> str:
    if item.kind is ItemKind.ERROR:
        return "error"
    if item.kind is ItemKind.UNKNOWN:
        return "unrecognised event"
    if item.role == "user":
        return "user"
    name = sanitize_line(item.author or "") or "agent"
    return f"artifact {name}" if item.kind is ItemKind.ARTIFACT else name


def _indent(text: str, prefix: str) -> str:
    return "\n".join(prefix + line if line else line for line in text.split("\n"))


def format_part(part: Any, saved: dict[int, str] | None = None) -> str:
    """``file NAME · TYPE · SIZE`` (and where it was saved), or ``data`` and its JSON, indented."""
    info = part_info(part)
    where = (saved or {}).get(id(part))
    if info.kind == "file":
        line = f"    file {sanitize_line(info.label())}"
        return line + (f" -> saved to {sanitize_line(where)}" if where else "")
    if info.kind == "data":
        try:
            text = json.dumps(tidy_json(info.data), ensure_ascii=False, indent=2, default=str)
        except (TypeError, ValueError):
            text = repr(info.data)
        head = "    data" + (f" -> saved to {sanitize_line(where)}" if where else "") + ":"
        return head + "\n" + _indent(sanitize(text), "      ")
    return f"    part {_compact(part)}"


def format_item(item: Item, saved: dict[int, str] | None = None) -> str:
    """``who: text`` (later lines indented), then each tool call indented with its result, then
    its files and data."""
    text = sanitize(item.text).rstrip("\n")
    first, _, rest = text.partition("\n")
    lines = [f"{who(item)}: {first}".rstrip()]
    if rest:
        lines.append(_indent(rest, "    "))
    for tool in item.tools if item.raw is not None else ():
        lines.append(f"    tool {sanitize_line(tool.name)}({_compact(tool.args) if tool.args is not None else ''})")
        lines.append(f"      -> {_compact(tool.result)}" if tool.has_result else "      -> (no result)")
    for part in item.other_parts if item.kind in (ItemKind.MESSAGE, ItemKind.ARTIFACT) else ():
        lines.append(format_part(part, saved))
    return "\n".join(lines)


def format_items(
    items: Iterable[Item],
    *,
    current: str | None = None,
    saved: dict[int, str] | None = None,
    numbers: Mapping[str, int] | None = None,
) -> list[str]:
    """Lines for a run of items: a ``--- invocation ID · turn N ---`` header whenever the turn
    changes (the id to give ``rewind --before`` / ``fork --before``; N, from ``numbers``, the turn
    number ``--turn`` takes: model/turn_numbers.py), then each item."""
    out: list[str] = []
    for item in items:
        inv = item.invocation_id
        if inv and inv != current:
            number = (numbers or {}).get(item.rewind_target or "")
            out.append(f"--- invocation {sanitize_line(inv)}{f' · turn {number}' if number else ''} ---")
            current = inv
        out.append(format_item(item, saved))
    return out


def format_session(session: Session) -> str:
    when = session.updated_at or session.created_at or ""
    parts = [sanitize_line(session.id), sanitize_line(when), sanitize_line(session.name)]
    if session.gone:
        parts.append("(gone: the server no longer has it)")
    if session.state and session.state != "ready":
        parts.append(f"({sanitize_line(session.state)})")
    return "  ".join(p for p in parts if p)


# -- agent cards -----------------------------------------------------------------------------------
def format_card(card: dict[str, Any], url: str, caps: Capabilities | None, problem: str = "") -> list[str]:
    """The card as titled sections of ``label: value`` lines, then the warnings."""
    out: list[str] = []
    for section in card_sections(card, card_url=url, choice=caps.choice if caps else None):
        out.append(section.title)
        width = max((len(label) for label, _ in section.rows), default=0)
        for label, value in section.rows:
            out.append(f"  {sanitize_line(label).ljust(width)}  {sanitize_line(value)}")
    if problem:
        out.append(f"rewindtui cannot use this agent: {sanitize_line(problem)}")
    return out


def card_record(card: dict[str, Any], url: str, caps: Capabilities | None, problem: str = "") -> dict[str, Any]:
    choice = caps.choice if caps else None
    return {
        "card": card,
        "url": url,
        "usable": not problem,
        "problem": problem or None,
        "binding": choice.binding if choice else None,
        "dialect": choice.dialect.value if choice else None,
        "endpoint": choice.url if choice else None,
        "rewind": caps.rewind_mode if caps else None,
        "warnings": card_warnings(card, url),
        "security": [
            {"name": s.name, "kind": s.kind, "detail": s.detail, "option": s.option or None}
            for s in security_schemes(card)
        ],
    }
