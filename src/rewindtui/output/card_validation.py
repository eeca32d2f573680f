"""``rewindtui card --validate``: an agent card checked against the A2A 1.0 and 0.3 schemas.

The schemas (``output/schemas/``):

* ``a2a-1.0-agent-card.json``: the A2A 1.0 ``AgentCard`` as JSON Schema, generated from a2a-sdk
  1.3's compiled ``a2a.proto`` (a2aproject/A2A ``specification/a2a.proto`` at v1.0.0, commit
  173695755607e884aa9acf8ce4feed90e32727a1) by ``tests/generate_card_schema.py``.
* ``a2a-0.3.0-agent-card.json``: the ``AgentCard`` definition of a2aproject/A2A
  ``specification/json/a2a.json`` at v0.3.0 (commit 210f03d426e2f2fa92000e14ef0de3b7ba15aee5),
  with the definitions it refers to, unchanged.

Every problem carries its JSON path (``$.skills[0].tags``) and the schema that found it. A field
the schema does not know is a warning (A2A clients ignore unknown fields, and a 1.0 card often
carries 0.3's fields for old clients), as is a schema the card does not claim; any other problem
against a version the card claims is an error. The verdict also says, per claimed version,
whether the card is usable in it, and which of its interfaces (binding, version) rewindtui speaks.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from functools import cache
from pathlib import Path
from typing import Any

from rewindtui.a2a.card import SPOKEN, interfaces
from rewindtui.a2a.dialect import Dialect

SCHEMAS = {"1.0": "a2a-1.0-agent-card.json", "0.3": "a2a-0.3.0-agent-card.json"}
#: problems listed at most per schema (a card of garbage stays one screen of output)
MAX_PROBLEMS = 200


@dataclass
class Problem:
    schema: str  # "1.0" | "0.3"
    path: str  # JSON path, "$" the card itself
    message: str
    severity: str  # "error" | "warning"


@dataclass
class Verdict:
    claimed: list[str]  # the protocol versions the card claims ("1.0", "0.3")
    usable: dict[str, bool]  # per claimed version: no error against its schema
    problems: list[Problem] = field(default_factory=list)
    interfaces: list[dict[str, Any]] = field(default_factory=list)
    #: per version the card does not claim: how many schema problems it has there (not listed)
    unclaimed: dict[str, int] = field(default_factory=dict)

    @property
    def errors(self) -> list[Problem]:
        return [p for p in self.problems if p.severity == "error"]

    @property
    def ok(self) -> bool:
        return bool(self.claimed) and not self.errors

    def record(self) -> dict[str, Any]:
        return {
            "valid": self.ok,
            "claimed_versions": self.claimed,
            "usable_versions": [v for v in self.claimed if self.usable.get(v)],
            "problems": [asdict(p) for p in self.problems],
            "interfaces": self.interfaces,
            "unclaimed_versions": self.unclaimed,
        }

    def lines(self) -> list[str]:
        out = []
        claimed = ", ".join(self.claimed) or "none"
        out.append(f"validation: {'valid' if self.ok else 'NOT valid'} (claims A2A {claimed})")
        for version in self.claimed:
            said = "usable" if self.usable.get(version) else "not usable (errors below)"
            out.append(f"  A2A {version}: {said}")
        for version, count in self.unclaimed.items():
            out.append(f"  A2A {version}: not claimed ({count} problem(s) against its schema, not listed)")
        for i in self.interfaces:
            speaks = "rewindtui speaks it" if i["rewindtui"] else "rewindtui does not speak it"
            out.append(f"  interface {i['binding']} {i['version'] or '?'} at {i['url']}: {speaks}")
        for p in self.problems:
            out.append(f"  {p.severity} ({p.schema}) {p.path}: {p.message}")
        return out


@cache
def _schema(version: str) -> dict[str, Any]:
    path = Path(__file__).with_name("schemas") / SCHEMAS[version]
    data: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    return data


def _validator(version: str) -> Any:
    import jsonschema

    schema = _schema(version)
    cls = jsonschema.validators.validator_for(schema)
    return cls(schema)


def claimed_versions(card: dict[str, Any]) -> list[str]:
    """The versions the card claims: 1.0 for 1.x interfaces (``supportedInterfaces``), 0.3 for a
    top-level 0.3 ``protocolVersion`` or a 0.3 interface."""
    found: set[str] = set()
    for i in interfaces(card):
        d = i.dialect
        if d is not None:
            found.add(d.value)
    top = Dialect.parse(card.get("protocolVersion") if isinstance(card.get("protocolVersion"), str) else None)
    if top is not None:
        found.add(top.value)
    if not found and isinstance(card.get("supportedInterfaces"), list):
        found.add("1.0")
    return [v for v in ("1.0", "0.3") if v in found]


def _path(error: Any) -> str:
    path = "$"
    for piece in error.absolute_path:
        path += f"[{piece}]" if isinstance(piece, int) else f".{piece}"
    return path


def _problems(card: Any, version: str, claimed: bool) -> list[Problem]:
    out: list[Problem] = []
    for error in _validator(version).iter_errors(card):
        if len(out) >= MAX_PROBLEMS:
            out.append(Problem(version, "$", f"more problems not listed (over {MAX_PROBLEMS})", "warning"))
            break
        if error.validator == "additionalProperties":
            # one problem per unknown field, at its own path
            known = set((error.schema.get("properties") or {}).keys())
            for name in sorted(k for k in error.instance if k not in known):
                out.append(Problem(version, f"{_path(error)}.{name}", f"not an A2A {version} field", "warning"))
            continue
        out.append(Problem(version, _path(error), error.message[:300], "error" if claimed else "unclaimed"))
    return out


def validate(card: Any) -> Verdict:
    """The card against both schemas (problems against an unclaimed one are warnings)."""
    if not isinstance(card, dict):
        return Verdict([], {}, [Problem("1.0", "$", "the agent card is not a JSON object", "error")])
    claimed = claimed_versions(card)
    problems: list[Problem] = []
    usable: dict[str, bool] = {}
    unclaimed: dict[str, int] = {}
    for version in ("1.0", "0.3"):
        found = _problems(card, version, version in claimed)
        if version in claimed:
            usable[version] = not any(p.severity == "error" for p in found)
            problems += found
        else:  # not listed: a count of what a client of that version would trip on
            unclaimed[version] = sum(1 for p in found if p.severity == "unclaimed")
    if not claimed:
        problems.insert(
            0,
            Problem("1.0", "$", "the card claims no A2A version (no supportedInterfaces, no protocolVersion)", "error"),
        )
    listed = [
        {
            "url": i.url,
            "binding": i.binding,
            "version": i.version,
            "rewindtui": (i.dialect or (Dialect.V03 if i.binding == "JSONRPC" else None)) in SPOKEN.get(i.binding, ()),
        }
        for i in interfaces(card)
    ]
    return Verdict(claimed, usable, problems, listed, unclaimed)
