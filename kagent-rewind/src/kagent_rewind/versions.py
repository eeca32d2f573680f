"""Which kagent-adk this add-on works with, checked before any of kagent's or a2a-sdk's modules load.

The add-on reaches into kagent-adk's executor and a2a-sdk 0.3's server classes, whose names change
between releases (a2a-sdk 1.x has no ``a2a.server.apps``; kagent-adk 1.0 is written against it). So
it declares no dependency on them -- installing it never upgrades or downgrades the agent's
kagent-adk -- and ``enable_rewind`` checks the installed versions first, failing with one sentence.

Supported, and tested (rewindtui's test run serves an agent on each): kagent-adk 0.10.3 and 0.10.4,
with the a2a-sdk 0.3.x they use.
"""

from __future__ import annotations

from importlib.metadata import PackageNotFoundError, version

#: (package, lowest supported, first unsupported), compared on the numeric release parts
SUPPORTED = (("kagent-adk", (0, 10, 3), (0, 11)), ("a2a-sdk", (0, 3, 0), (0, 4)))
SUPPORTED_TEXT = "kagent-adk >=0.10.3,<0.11 with a2a-sdk >=0.3,<0.4"


class UnsupportedVersion(RuntimeError):
    """The agent's kagent-adk (or a2a-sdk) is not one this add-on supports."""


def _release(text: str) -> tuple[int, ...]:
    """The leading numeric parts of a version ("1.0.0a17" -> (1, 0, 0); "0.10.4" -> (0, 10, 4))."""
    parts: list[int] = []
    for piece in text.split("."):
        digits = ""
        for ch in piece:
            if not ch.isdigit():
                break
            digits += ch
        if not digits:
            break
        parts.append(int(digits))
        if len(digits) != len(piece):
            break  # a pre-release marker ends the release part
    return tuple(parts)


def _is_prerelease(text: str) -> bool:
    return any(tag in text for tag in ("a", "b", "rc", "dev"))


def installed(package: str) -> str | None:
    try:
        return version(package)
    except PackageNotFoundError:
        return None


def check_supported(found: dict[str, str | None] | None = None) -> None:
    """Raise :class:`UnsupportedVersion` unless the installed versions are supported."""
    found = found if found is not None else {name: installed(name) for name, _, _ in SUPPORTED}
    bad = []
    for name, low, high in SUPPORTED:
        have = found.get(name)
        if have is None:
            bad.append(f"no {name}")
            continue
        release = _release(have)
        if not (low <= release < high) or (release[: len(high)] == high[: len(release)] and _is_prerelease(have)):
            bad.append(f"{name} {have}")
    if bad:
        raise UnsupportedVersion(
            f"kagent-rewind supports {SUPPORTED_TEXT}, but this agent has {' and '.join(bad)}: "
            "rewind is not enabled (the agent's packages were left as they are)."
        )
