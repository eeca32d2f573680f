"""File and data parts, in both dialects.

A2A 0.3: ``{"kind": "file", "file": {"bytes": <base64> | "uri": URL, "name", "mimeType"}}`` and
``{"kind": "data", "data": {...}}`` (an object). A2A 1.0: ``{"raw": <base64>}`` or ``{"url": URL}``
with ``filename`` and ``mediaType`` beside it, and ``{"data": <any JSON value>}``. :func:`part_info`
reads either into one :class:`PartInfo` (sizes computed from the base64 length, nothing decoded);
:func:`file_part` / :func:`data_part` write one. Pure functions; nothing raises on odd input but
the writers (ValueError for what a dialect cannot say).
"""

from __future__ import annotations

import base64
import binascii
import json
from dataclasses import dataclass
from typing import Any

from rewindtui.a2a.dialect import Dialect
from rewindtui.a2a.raw import part_kind


@dataclass(frozen=True)
class PartInfo:
    """What a person is told about a non-text part."""

    kind: str  # file | data | unknown
    name: str = ""  # the file's name as the sender gave it ("" when none)
    media_type: str = ""
    size: int | None = None  # bytes of an inline file (None: by URL, or unknown)
    url: str = ""  # a file by reference
    inline: bool = False  # the bytes are in the part
    data: Any = None  # a data part's value

    def label(self) -> str:
        """``report.pdf · application/pdf · 12.3 KB`` (what is known of it)."""
        bits = [self.name or "(no name)"]
        if self.media_type:
            bits.append(self.media_type)
        if self.size is not None:
            bits.append(human_size(self.size))
        if self.url:
            bits.append(self.url)
        return " · ".join(bits)


def human_size(size: int) -> str:
    value = float(size)
    for unit in ("B", "KB", "MB", "GB"):
        if value < 1024 or unit == "GB":
            return f"{int(value)} B" if unit == "B" else f"{value:.1f} {unit}"
        value /= 1024
    return f"{size} B"  # pragma: no cover


def b64_size(text: str) -> int:
    """Decoded length of base64 ``text``, without decoding it."""
    if text[:1].isspace() or text[-1:].isspace():
        text = text.strip()  # (a copy only then: an inline file's text can be hundreds of MB)
    n = len(text)
    if n == 0:
        return 0
    padding = 2 if text.endswith("==") else 1 if text.endswith("=") else 0
    return n * 3 // 4 - padding


def _str(value: Any) -> str:
    return value if isinstance(value, str) else ""


def part_info(p: Any) -> PartInfo:
    kind = part_kind(p)
    if not isinstance(p, dict) or kind == "unknown":
        return PartInfo("unknown")
    if kind == "data":
        return PartInfo(
            "data", media_type=_str(p.get("mediaType") or p.get("media_type")) or "application/json", data=p.get("data")
        )
    if kind != "file":
        return PartInfo("unknown")
    inner = p.get("file") if isinstance(p.get("file"), dict) else None
    if inner is not None:  # 0.3
        data = _str(inner.get("bytes"))
        url = _str(inner.get("uri") or inner.get("url"))
        name = _str(inner.get("name"))
        media = _str(inner.get("mimeType") or inner.get("mime_type") or inner.get("mediaType"))
    else:  # 1.0
        data = _str(p.get("raw"))
        url = _str(p.get("url"))
        name = _str(p.get("filename") or p.get("name"))
        media = _str(p.get("mediaType") or p.get("media_type") or p.get("mimeType"))
    inline = bool(data) or ("raw" in p) or (inner is not None and "bytes" in inner)
    return PartInfo(
        "file", name=name, media_type=media, size=b64_size(data) if inline else None, url=url, inline=inline
    )


def part_b64(p: Any) -> str | None:
    """The base64 text of an inline file part, undecoded (None: not inline)."""
    if not isinstance(p, dict):
        return None
    inner = p.get("file") if isinstance(p.get("file"), dict) else None
    if (inner is None and "raw" not in p) or (inner is not None and "bytes" not in inner):
        return None
    return _str(inner.get("bytes")) if inner is not None else _str(p.get("raw"))


def part_bytes(p: Any) -> bytes | None:
    """The decoded bytes of an inline file part (None: not inline, or not valid base64)."""
    text = part_b64(p)
    if text is None:
        return None
    try:
        return base64.b64decode(text, validate=False)
    except (binascii.Error, ValueError):
        return None


def tidy_json(value: Any) -> Any:
    """``value`` for people: whole numbers that came as floats (protobuf ``Struct`` has only
    doubles, so a2a-sdk servers turn ``1`` into ``1.0``) shown as integers."""
    if isinstance(value, float) and value.is_integer() and abs(value) < 2**53:
        return int(value)
    if isinstance(value, dict):
        return {k: tidy_json(v) for k, v in value.items()}
    if isinstance(value, list):
        return [tidy_json(v) for v in value]
    return value


def file_part(
    *, dialect: Dialect, name: str, media_type: str, data: bytes | None = None, url: str | None = None
) -> dict[str, Any]:
    """A file part: inline ``data`` (base64 on the wire) or by ``url``."""
    if (data is None) == (url is None):
        raise ValueError("a file part has either bytes or a URL")
    if dialect is Dialect.V03:
        file: dict[str, Any] = {"bytes": base64.b64encode(data).decode("ascii")} if data is not None else {"uri": url}
        if name:
            file["name"] = name
        if media_type:
            file["mimeType"] = media_type
        return {"kind": "file", "file": file}
    part: dict[str, Any] = {"raw": base64.b64encode(data).decode("ascii")} if data is not None else {"url": url}
    if name:
        part["filename"] = name
    if media_type:
        part["mediaType"] = media_type
    return part


def data_part(value: Any, dialect: Dialect) -> dict[str, Any]:
    """A data part. A2A 0.3 data parts hold an object: anything else is a ValueError."""
    if dialect is Dialect.V03:
        if not isinstance(value, dict):
            raise ValueError(
                f"A2A 0.3 data parts hold a JSON object, not {type(value).__name__} "
                f'({json.dumps(value)[:40]}); wrap it, e.g. {{"value": ...}}'
            )
        return {"kind": "data", "data": value}
    return {"data": value}
