"""The supported versions, checked before anything of kagent-adk or a2a-sdk is imported."""

from __future__ import annotations

import subprocess
import sys

import pytest

from kagent_rewind.versions import UnsupportedVersion, check_supported


@pytest.mark.parametrize("adk", ["0.10.3", "0.10.4", "0.10.9"])
def test_supported(adk: str) -> None:
    check_supported({"kagent-adk": adk, "a2a-sdk": "0.3.26"})


@pytest.mark.parametrize(
    ("adk", "a2a", "named"),
    [
        ("0.10.2", "0.3.26", "kagent-adk 0.10.2"),
        ("1.0.0a17", "1.3.0", "kagent-adk 1.0.0a17 and a2a-sdk 1.3.0"),
        ("0.10.4", "1.3.0", "a2a-sdk 1.3.0"),
        ("0.11.0rc1", "0.3.26", "kagent-adk 0.11.0rc1"),
        (None, "0.3.26", "no kagent-adk"),
    ],
)
def test_unsupported_is_one_sentence(adk: str | None, a2a: str, named: str) -> None:
    with pytest.raises(UnsupportedVersion) as info:
        check_supported({"kagent-adk": adk, "a2a-sdk": a2a})
    said = str(info.value)
    assert said == (
        f"kagent-rewind supports kagent-adk >=0.10.3,<0.11 with a2a-sdk >=0.3,<0.4, but this agent has {named}: "
        "rewind is not enabled (the agent's packages were left as they are)."
    )
    assert said.count(". ") == 0 and said.endswith(".")


def test_importing_the_package_loads_neither_kagent_nor_a2a() -> None:
    code = "import sys, kagent_rewind; print(sorted(m for m in sys.modules if m.split('.')[0] in ('a2a', 'kagent') or m.startswith('google.adk')))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True).stdout
    assert out.strip() == "[]"
