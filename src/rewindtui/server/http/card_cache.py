"""The agent card kept in the data directory between runs (``card.json``), so that the server's
front answers it before a2a-sdk's server half is imported. Standard library only.

The card depends on the server's address (each run its own port), the model, whether a token
is needed and the version: the file holds the card with the address replaced by a placeholder,
and the rest as its key. A missing, stale or unreadable file is rebuilt (and rewritten).
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

CARD_FILE = "card.json"
_PLACEHOLDER = "{{rewindtui-base-url}}"


def cached_card(data_dir: Path, base_url: str, key: dict[str, Any], build: Callable[[], dict[str, Any]]) -> dict[str, Any]:
    """The card for ``base_url``: from the file when its key matches, else ``build()`` (saved)."""
    path = Path(data_dir) / CARD_FILE
    try:
        saved = json.loads(path.read_text(encoding="utf-8"))
        if isinstance(saved, dict) and saved.get("key") == key and isinstance(saved.get("card"), str):
            card = json.loads(saved["card"].replace(_PLACEHOLDER, base_url))
            if isinstance(card, dict):
                return card
    except (OSError, ValueError):
        pass
    card = build()
    try:
        text = json.dumps({"key": key, "card": json.dumps(card).replace(base_url, _PLACEHOLDER)})
        tmp = path.with_suffix(".tmp")
        tmp.write_text(text, encoding="utf-8")
        os.replace(tmp, path)
    except OSError:
        pass
    return card
