"""A data part that asks the user to fill in a form (a JSON schema), as the A2A samples send it
(a2aproject/a2a-samples ``samples/python/agents/adk_expense_reimbursement/agent.py``,
``return_form``, commit c6062c44733e5edf6a283c458ab81717b2f9b02a)::

    {"type": "form",
     "form": {"type": "object", "properties": {NAME: {"type", "title", "description", ...}},
              "required": [NAME, ...]},
     "form_data": {NAME: VALUE, ...},      # the values so far ("<...>" placeholders for none)
     "instructions": "..."}

(the data may be that object, or the same as a JSON text). The answer goes back as a data part
holding the filled-in values (``{NAME: VALUE}``). Pure functions: no I/O.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any

from rewindtui.a2a.parts import part_info

#: fields a form may have at most (a larger one is shown as JSON, not as a form)
MAX_FIELDS = 50
_PLACEHOLDER = re.compile(r"^<[^<>]*>$")


@dataclass(frozen=True)
class Field:
    name: str
    title: str
    kind: str  # "string" | "number" | "integer" | "boolean"
    description: str = ""
    required: bool = False
    choices: tuple[str, ...] = ()
    value: Any = None  # the form's value so far (None: none)
    hint: str = ""  # a placeholder the agent gave instead of a value


@dataclass(frozen=True)
class Form:
    schema: dict[str, Any]
    fields: tuple[Field, ...]
    instructions: str = ""
    raw: dict[str, Any] = field(default_factory=dict)


def form_of(data: Any) -> Form | None:
    """The form a data part's value asks for; None when it is not one."""
    if isinstance(data, str):
        try:
            data = json.loads(data)
        except (ValueError, RecursionError):
            return None
    if not isinstance(data, dict) or data.get("type") != "form" or not isinstance(data.get("form"), dict):
        return None
    schema = data["form"]
    properties = schema.get("properties")
    if not isinstance(properties, dict) or not properties or len(properties) > MAX_FIELDS:
        return None
    required = {r for r in schema.get("required") or () if isinstance(r, str)}
    given = data.get("form_data")
    values: dict[str, Any] = given if isinstance(given, dict) else {}
    fields = []
    # the required ones in the order the schema lists them (a list keeps its order on every wire; a
    # properties object may not: a protobuf Struct has no order), then the rest as given
    order = [r for r in schema.get("required") or () if isinstance(r, str) and r in properties]
    order += [n for n in properties if n not in order]
    for name in order:
        spec = properties[name]
        if not isinstance(name, str) or not isinstance(spec, dict):
            return None
        declared = spec.get("type")
        kind = (
            declared
            if isinstance(declared, str) and declared in ("string", "number", "integer", "boolean")
            else "string"
        )
        choices = tuple(str(c) for c in spec.get("enum") or () if isinstance(c, (str, int, float)))
        value = values.get(name)
        hint = ""
        if isinstance(value, str) and _PLACEHOLDER.match(value.strip()):
            hint, value = value.strip(), None
        fields.append(
            Field(
                name=name,
                title=str(spec.get("title") or name),
                kind=kind,
                description=str(spec.get("description") or ""),
                required=name in required,
                choices=choices,
                value=value,
                hint=hint,
            )
        )
    instructions = data.get("instructions")
    return Form(schema, tuple(fields), instructions if isinstance(instructions, str) else "", data)


def latest_form(parts_of_items: list[list[Any]]) -> Form | None:
    """The newest form among the parts of the conversation's items (oldest item first)."""
    for parts in reversed(parts_of_items):
        for part in reversed(parts):
            info = part_info(part)
            if info.kind == "data":
                found = form_of(info.data)
                if found is not None:
                    return found
    return None


def answer(form: Form, texts: dict[str, Any]) -> tuple[dict[str, Any], list[str]]:
    """The answer from what the user typed (``{name: text or bool}``): the values, and the problems
    (a required field empty, a number that is not one, a value not among the choices). The answer
    holds every field given a value; an empty optional field is left out."""
    out: dict[str, Any] = {}
    problems: list[str] = []
    for f in form.fields:
        given = texts.get(f.name)
        if f.kind == "boolean":
            out[f.name] = bool(given)
            continue
        text = "" if given is None else str(given).strip()
        if not text:
            if f.required:
                problems.append(f"{f.title}: required")
            continue
        if f.kind in ("number", "integer"):
            try:
                number = int(text) if f.kind == "integer" else float(text)
            except ValueError:
                problems.append(f"{f.title}: not {'a whole number' if f.kind == 'integer' else 'a number'}: {text!r}")
                continue
            out[f.name] = number
            continue
        if f.choices and text not in f.choices:
            problems.append(f"{f.title}: one of {', '.join(f.choices)}")
            continue
        out[f.name] = text
    return out, problems
