"""The session's turns as a list to jump to (the rewind picker): newest first, each with a
one-line preview, its time, and whether its tools changed the agent's state.

A turn is a run of the conversation's items under one rewind target (it opens with the user's
message when one is shown); rewound turns, when shown, are listed too, marked. Pure: built from
the conversation model, never a copy of it (an entry points at the turn's first item).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from rewindtui.a2a import contract, raw
from rewindtui.base.textsafe import sanitize_line
from rewindtui.model import Conversation, Item, ItemKind, turn_numbers
from rewindtui.model.rewound import Mark
from rewindtui.output.export import local_time

PREVIEW_LIMIT = 200


@dataclass(frozen=True)
class TurnEntry:
    item: Item  # the turn's first item (what rewind / edit / fork act on)
    number: int  # its turn number (model/turn_numbers.py; 0 for a rewound one, or not known yet)
    preview: str  # the user's message, one line
    time: str  # local time, "" when unknown
    tools: list[str]  # the tools the turn called, in order
    state_changed: list[str]  # state keys its tools changed (servers that say so)
    opens_with_user: bool  # it can be edited and resent

    @property
    def rewound(self) -> Mark | None:
        return self.item.rewound


def _state_keys(item: Item) -> list[str]:
    keys: list[str] = []
    for message in (item.raw, *item.absorbed):
        changed = raw.metadata(message).get(contract.STATE_CHANGED_KEY) if isinstance(message, dict) else None
        if isinstance(changed, list):
            keys += [k for k in changed if isinstance(k, str) and k not in keys]
    return keys


def _turn_key(item: Item) -> Any:
    if item.rewound is not None:
        return ("rewound", item.task_id)
    return item.rewind_target


def turn_entries(conversation: Conversation) -> list[TurnEntry]:
    """Every turn shown, newest first (rewound turns only when the view shows them)."""
    runs: list[list[Item]] = []
    key: Any = None
    for item in conversation.items:
        this = _turn_key(item)
        if this is None:  # an error or a status line: part of the turn it follows
            if runs:
                runs[-1].append(item)
            continue
        if this != key:
            runs.append([])
            key = this
        runs[-1].append(item)
    entries: list[TurnEntry] = []
    # while older turns are still to be loaded, the numbers from the session's start are not known
    whole = conversation.older_token is None
    numbers = turn_numbers.numbers_by_target(conversation.items) if whole else {}
    for run in runs:
        first = run[0]
        number = numbers.get(first.rewind_target or "", 0) if first.rewound is None else 0
        user = next((i for i in run if i.role == "user" and i.kind is ItemKind.MESSAGE), None)
        text = (user or first).text
        preview = sanitize_line(text.strip().split("\n", 1)[0] if text.strip() else "(no text)")
        tools: list[str] = []
        state: list[str] = []
        for item in run:
            if item.kind is ItemKind.MESSAGE and item.raw is not None:
                tools += [call.name for call in item.tools]
                state += [k for k in _state_keys(item) if k not in state]
        stamp = conversation.task_times.get(first.task_id or "")
        entries.append(
            TurnEntry(
                item=first,
                number=number,
                preview=preview[:PREVIEW_LIMIT],
                time=local_time(stamp),
                tools=tools,
                state_changed=state,
                opens_with_user=user is first,
            )
        )
    entries.reverse()
    return entries


def describe_tools(entry: TurnEntry) -> str:
    """``⚙ get_weather · state: weather_calls`` / ``⚙ 2 tools`` / ``no tools``."""
    if not entry.tools:
        return "no tools"
    names = list(dict.fromkeys(entry.tools))
    what = f"⚙ {names[0]}" if len(names) == 1 and len(entry.tools) == 1 else f"⚙ {len(entry.tools)} tool calls"
    if entry.state_changed:
        what += " · changed " + ", ".join(sanitize_line(k) for k in entry.state_changed)
    return what
