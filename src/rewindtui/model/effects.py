"""What a rewind cannot undo: the tool calls in the turns that would go which acted outside the
agent, in words for a rewind preview (the app's banner, the CLI, MCP).

A server may mark each function-call part with ``contract.TOOL_EFFECTS_KEY`` (the embedded server
does, from ``server/shared/effects.py``): ``"outside"`` -- a rewind does not undo what it did;
``"session"`` -- only the session changed, which the rewind takes back (not listed). A call
without a mark (kagent, any other A2A server) is listed as one that may have had effects.
ADK's own question to the user (``adk_request_confirmation``) acts on nothing and is never listed.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from rewindtui.a2a import contract, raw
from rewindtui.a2a import metadata as meta
from rewindtui.base.textsafe import sanitize_line
from rewindtui.model.items import Item, ItemKind

#: ``Effect.kind`` for a call its server marked as acting outside the agent ...
OUTSIDE = "outside"
#: ... and for a call its server said nothing about.
UNKNOWN = "unknown"
#: the longest call shown (name and arguments), in characters
CALL_WIDTH = 60


@dataclass(frozen=True)
class Effect:
    """One tool call in the turns that would go that a rewind does not (or may not) undo."""

    call: str  # e.g. ``delete_file(name='temp.txt')``
    kind: str  # OUTSIDE | UNKNOWN
    ran: bool  # a result came back (else the call was made and no result is shown)

    @property
    def words(self) -> str:
        did = "ran" if self.ran else "was called"
        if self.kind == OUTSIDE:
            return f"{self.call} {did}; it acts outside the agent: rewinding does not undo it"
        return f"{self.call} {did}; it may have had effects outside the agent that rewinding does not undo"


def call_text(name: str, args: Any) -> str:
    """``name(key=value, ...)`` on one line, at most ``CALL_WIDTH`` characters."""
    if isinstance(args, dict):
        inner = ", ".join(
            f"{k}={v!r}" if isinstance(v, str) else f"{k}={json.dumps(v, default=str)}" for k, v in args.items()
        )
    elif args is None:
        inner = ""
    else:
        inner = json.dumps(args, default=str)
    text = sanitize_line(f"{name}({inner})")
    return text if len(text) <= CALL_WIDTH else text[: CALL_WIDTH - 2] + "…)"


def _data_parts(message: Any) -> Iterable[tuple[str, dict[str, Any], dict[str, Any]]]:
    for part in raw.parts(message):
        kind = meta.tool_type(part)
        data = part.get("data") if isinstance(part, dict) else None
        if kind is not None and isinstance(data, dict):
            yield kind, data, raw.metadata(part)


def effects(items: Sequence[Item]) -> list[Effect]:
    """The calls in ``items`` (the turns a rewind would take away, rewound items left out) that a
    rewind does not or may not undo, in the order they were made."""
    calls: list[tuple[str | None, str, Any, str]] = []
    answered: set[str] = set()
    for item in items:
        if item.kind is not ItemKind.MESSAGE or item.rewound is not None:
            continue
        for message in (item.raw, *item.absorbed):
            for kind, data, part_meta in _data_parts(message):
                call_id = data.get("id") if isinstance(data.get("id"), str) else None
                if kind == meta.FUNCTION_RESPONSE:
                    if call_id:
                        answered.add(call_id)
                    continue
                name = str(data.get("name") or "?")
                mark = part_meta.get(contract.TOOL_EFFECTS_KEY)
                if name == meta.REQUEST_CONFIRMATION or mark == contract.EFFECTS_SESSION:
                    continue
                calls.append(
                    (call_id, name, data.get("args"), OUTSIDE if mark == contract.EFFECTS_OUTSIDE else UNKNOWN)
                )
    return [
        Effect(call_text(name, args), kind, call_id is not None and call_id in answered)
        for call_id, name, args, kind in calls
    ]


def effect_lines(found: Sequence[Effect], limit: int = 4) -> list[str]:
    """One sentence per call, at most ``limit`` of them, then how many more."""
    lines = [effect.words for effect in found[:limit]]
    if len(found) > limit:
        more = len(found) - limit
        lines.append(f"and {more} more tool call{'s' if more != 1 else ''} that rewinding may not undo")
    return lines


def effects_from(items: Sequence[Item], invocation_id: str) -> list[Effect]:
    """:func:`effects` of the turns a rewind to before ``invocation_id`` takes away: the items
    from the first one of that invocation on (none when the invocation is not shown)."""
    for index, item in enumerate(items):
        if item.rewound is None and item.invocation_id == invocation_id:
            return effects(items[index:])
    return []
