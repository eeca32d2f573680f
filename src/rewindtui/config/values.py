"""One setting's value, checked: URLs, strings, seconds, modes, dialects, bindings, switches, agents,
headers and paths. Each ``check_*(value, where)`` returns the value as rewindtui uses it, or raises
:class:`SettingsError` naming ``where`` it came from (a flag, a variable, or a file and key)."""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from rewindtui.a2a.card import GRPC, HTTP_JSON, JSONRPC, norm_binding
from rewindtui.a2a.dialect import Dialect
from rewindtui.client.capabilities import REWIND_MODES

ENV_PREFIX = "REWINDTUI_"

_HEADER_NAME = re.compile(r"^[!#$%&'*+.^_`|~0-9A-Za-z-]+$")
_AGENT = re.compile(r"^[^/\s]+/[^/\s]+$")


class SettingsError(Exception):
    """A bad flag, variable or config file; ``str()`` is one line saying where and why."""


def norm_url(url: str) -> str:
    return url.strip().rstrip("/")


def check_url(value: Any, where: str) -> str:
    if not isinstance(value, str) or not value.strip():
        raise SettingsError(f"{where}: expected a URL, got {value!r}")
    text = value.strip()
    if not re.match(r"^https?://[^/\s]+", text):
        raise SettingsError(f"{where}: not an http(s) URL: {text!r}")
    return text


def check_url_list(value: Any, where: str) -> tuple[str, ...]:
    """A list of http(s) URLs: a TOML array, or one string with commas between them."""
    items = value.split(",") if isinstance(value, str) else value
    if not isinstance(items, (list, tuple)):
        raise SettingsError(f"{where}: expected a list of URLs, got {value!r}")
    urls = tuple(check_url(item, where) for item in items if not (isinstance(item, str) and not item.strip()))
    if not urls:
        raise SettingsError(f"{where}: expected at least one URL")
    return urls


def check_str(value: Any, where: str) -> str:
    if not isinstance(value, str) or not value.strip():
        raise SettingsError(f"{where}: expected a non-empty string, got {value!r}")
    return value.strip()


def check_seconds(value: Any, where: str) -> float:
    try:
        seconds = float(value) if not isinstance(value, bool) else 0.0
    except (TypeError, ValueError):
        seconds = 0.0
    if not seconds > 0:
        raise SettingsError(f"{where}: expected a positive number of seconds, got {value!r}")
    return seconds


def check_mode(value: Any, where: str) -> str:
    mode = value.strip().lower() if isinstance(value, str) else value
    if mode not in REWIND_MODES:
        raise SettingsError(f"{where}: rewind mode must be one of {', '.join(REWIND_MODES)}, got {value!r}")
    return mode


def check_dialect(value: Any, where: str) -> Dialect:
    dialect = Dialect.parse(str(value)) if isinstance(value, (str, int, float)) else None
    if dialect is None:
        raise SettingsError(f"{where}: dialect must be 0.3 or 1.0, got {value!r}")
    return dialect


def check_binding(value: Any, where: str) -> str:
    binding = norm_binding(value) if isinstance(value, str) else ""
    if isinstance(value, str) and value.strip().lower() == "auto":
        return "auto"
    if binding not in (JSONRPC, HTTP_JSON, GRPC):
        raise SettingsError(f"{where}: binding must be auto, jsonrpc, http+json or grpc, got {value!r}")
    return binding


def check_push(value: Any, where: str) -> bool:
    text = str(value).strip().lower() if isinstance(value, (str, bool)) else ""
    if text in ("1", "true", "yes", "on"):
        return True
    if text in ("0", "false", "no", "off"):
        return False
    raise SettingsError(f"{where}: push must be true or false, got {value!r}")


def check_kagent_version(value: Any, where: str) -> str:
    text = str(value).strip().lower()
    text = {"1.0": "1", "0.10.x": "0.10", "0": "0.10"}.get(text, text)
    if text not in ("auto", "0.10", "1"):
        raise SettingsError(f"{where}: kagent_version must be auto, 0.10 or 1, got {value!r}")
    return text


def check_onoff(value: Any, where: str) -> bool:
    if isinstance(value, bool):
        return value
    text = str(value).strip().lower()
    if text not in ("true", "false", "on", "off", "1", "0", "yes", "no"):
        raise SettingsError(f"{where}: expected true or false, got {value!r}")
    return text in ("true", "on", "1", "yes")


def check_agent(value: Any, where: str) -> str:
    text = check_str(value, where)
    if not _AGENT.match(text):
        raise SettingsError(f"{where}: expected NAMESPACE/NAME, got {text!r}")
    return text


def check_header(name: Any, value: Any, where: str) -> tuple[str, str]:
    if not isinstance(name, str) or not _HEADER_NAME.match(name.strip()):
        raise SettingsError(f"{where}: not a valid header name: {name!r}")
    if not isinstance(value, (str, int, float)) or isinstance(value, bool):
        raise SettingsError(f"{where}: header {name.strip()} must be a string, got {value!r}")
    text = str(value).strip()
    if "\r" in text or "\n" in text:
        raise SettingsError(f"{where}: header {name.strip()} contains a line break")
    return name.strip(), text


def parse_header(text: str, where: str = "--header") -> tuple[str, str]:
    """``"Name: value"`` (or ``Name=value``) -> (name, value)."""
    sep = text.find(":")
    if sep <= 0:
        sep = text.find("=")
    if sep <= 0:
        raise SettingsError(f"{where}: expected NAME: VALUE, got {text!r}")
    return check_header(text[:sep], text[sep + 1 :], where)


def parse_headers(text: str, where: str = ENV_PREFIX + "HEADERS") -> dict[str, str]:
    """A JSON object, or ``K: V; K2: V2`` (``;`` or newline separated)."""
    text = text.strip()
    if not text:
        return {}
    if text.startswith("{"):
        try:
            data = json.loads(text)
        except ValueError as exc:
            raise SettingsError(f"{where}: not valid JSON: {exc}") from None
        if not isinstance(data, dict):
            raise SettingsError(f"{where}: expected a JSON object of headers")
        return dict(check_header(k, v, where) for k, v in data.items())
    out: dict[str, str] = {}
    for piece in re.split(r"[;\n]", text):
        if piece.strip():
            name, value = parse_header(piece.strip(), where)
            out[name] = value
    return out


def merge_headers(into: dict[str, str], new: Mapping[str, str]) -> None:
    """Add headers, a new one replacing any of the same name (case-insensitively)."""
    for name, value in new.items():
        for old in [k for k in into if k.lower() == name.lower()]:
            del into[old]
        into[name] = value


def check_path(value: Any, where: str, base: Path | None = None) -> Path:
    path = Path(check_str(value, where)).expanduser()
    if base is not None and not path.is_absolute():
        path = base / path
    return path
