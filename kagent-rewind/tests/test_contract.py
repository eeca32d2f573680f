"""The add-on speaks rewindtui's wire contract: every name the two define has the same value.

rewindtui writes its contract once, in ``src/rewindtui/a2a/contract.py`` (pure data); the add-on
must not import rewindtui, so this loads that file by path.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path
from types import ModuleType

from kagent_rewind import contract

REWINDTUI_CONTRACT = Path(__file__).resolve().parents[2] / "src" / "rewindtui" / "a2a" / "contract.py"

#: the names both sides must define
SHARED = (
    "EXTENSION_URI",
    "PARAM_REWIND",
    "PARAM_METADATA_KEY",
    "MODE_A2A",
    "REWIND_METADATA_KEY",
    "EFFECTIVE_HISTORY_KEY",
    "REWOUND_BEFORE_KEY",
    "REWIND_INVOCATION_KEY",
    "ERROR_CODE_KEY",
    "HEADER_UPDATE_INVOCATION",
)


def load_rewindtui_contract() -> ModuleType:
    assert REWINDTUI_CONTRACT.is_file(), f"rewindtui's contract is not at {REWINDTUI_CONTRACT}"
    spec = importlib.util.spec_from_file_location("rewindtui_contract", REWINDTUI_CONTRACT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def names(module: ModuleType) -> dict[str, object]:
    return {k: v for k, v in vars(module).items() if k.isupper()}


def test_shared_names_are_defined_on_both_sides() -> None:
    theirs, ours = names(load_rewindtui_contract()), names(contract)
    assert [n for n in SHARED if n not in theirs] == []
    assert [n for n in SHARED if n not in ours] == []


def test_every_name_defined_on_both_sides_has_the_same_value() -> None:
    theirs, ours = names(load_rewindtui_contract()), names(contract)
    common = sorted(set(theirs) & set(ours))
    assert set(SHARED) <= set(common)
    assert {n: ours[n] for n in common} == {n: theirs[n] for n in common}


def test_the_add_on_s_own_metadata_keys_are_not_rewindtui_s() -> None:
    theirs = set(names(load_rewindtui_contract()).values())
    own = [contract.REWOUND_HISTORY_KEY, contract.REWOUND_ARTIFACTS_KEY, contract.REWOUND_BY_KEY, contract.STORE_ERROR_KEY]
    assert not theirs & set(own)


def test_the_card_extension_uses_the_contract_names() -> None:
    from kagent_rewind.enable import rewind_extension

    theirs = load_rewindtui_contract()
    ext = rewind_extension()
    assert ext.uri == theirs.EXTENSION_URI
    assert ext.params == {
        theirs.PARAM_REWIND: [theirs.MODE_A2A],
        theirs.PARAM_METADATA_KEY: theirs.REWIND_METADATA_KEY,
        theirs.PARAM_REDO: True,
    }
