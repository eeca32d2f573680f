"""What the user attaches to a message, and saving what the agent sends back.

* :func:`attach` turns a path (sent inline, its bytes in the message) or an http(s) URL (sent by
  reference) into a :class:`FileAttachment`; :func:`parse_data` turns JSON text into a
  :class:`DataAttachment`. Inline files are limited to :data:`MAX_INLINE_BYTES` per message, all
  attachments together; past it the error says how big and what to do instead.
* :func:`save_parts` writes file and data parts to a directory: a name of the sender's choosing is
  reduced to a plain file name (no directories, no dot files, no control characters), an existing
  file is never overwritten, data parts are written as pretty-printed ``.json``, files by URL are
  fetched (with the client's connection: credentials only to their home origin), within a size cap.

No Textual; the app and the headless commands share it.
"""

from __future__ import annotations

import base64
import binascii
import json
import mimetypes
import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, BinaryIO
from urllib.parse import unquote, urlsplit

import httpx

from rewindtui.a2a import parts as wire
from rewindtui.a2a.dialect import Dialect
from rewindtui.base.textsafe import sanitize_line

#: Inline file bytes one message may carry (all attachments together).
MAX_INLINE_BYTES = 10 * 1024 * 1024
#: The most bytes saved from one part fetched by URL.
MAX_FETCH_BYTES = 100 * 1024 * 1024
DEFAULT_MEDIA_TYPE = "application/octet-stream"


class AttachmentError(ValueError):
    """An attachment that cannot be made or saved; ``str()`` says which and why."""


@dataclass(frozen=True)
class FileAttachment:
    name: str
    media_type: str
    data: bytes | None = None  # inline
    url: str | None = None  # by reference
    source: str = ""  # the path or URL the user gave

    @property
    def size(self) -> int | None:
        return len(self.data) if self.data is not None else None

    def to_part(self, dialect: Dialect) -> dict[str, Any]:
        return wire.file_part(dialect=dialect, name=self.name, media_type=self.media_type, data=self.data, url=self.url)

    def label(self) -> str:
        bits = [self.name, self.media_type]
        if self.size is not None:
            bits.append(wire.human_size(self.size))
        elif self.url:
            bits.append("by URL")
        return " · ".join(bits)


@dataclass(frozen=True)
class DataAttachment:
    value: Any

    def to_part(self, dialect: Dialect) -> dict[str, Any]:
        return wire.data_part(self.value, dialect)

    @property
    def size(self) -> None:
        return None

    def label(self) -> str:
        text = json.dumps(self.value, ensure_ascii=False)
        return "data " + (text if len(text) <= 40 else text[:39] + "…")


Attachment = FileAttachment | DataAttachment


def inline_bytes(attachments: Iterable[Attachment]) -> int:
    return sum(a.size or 0 for a in attachments)


def attach(source: str, *, already: Sequence[Attachment] = (), limit: int = MAX_INLINE_BYTES) -> FileAttachment:
    """An attachment from a local path (inline) or an http(s) URL (by reference)."""
    text = source.strip()
    if not text:
        raise AttachmentError("no file given")
    parts = urlsplit(text)
    if parts.scheme in ("http", "https") and parts.netloc:
        name = Path(unquote(parts.path)).name or parts.netloc
        media = mimetypes.guess_type(name)[0] or DEFAULT_MEDIA_TYPE
        return FileAttachment(name=name, media_type=media, url=text, source=text)
    path = Path(text).expanduser()
    try:
        if path.is_dir():
            raise AttachmentError(f"{text} is a directory: attach files one by one")
        size = path.stat().st_size
    except FileNotFoundError:
        raise AttachmentError(f"{text}: no such file") from None
    except OSError as exc:
        raise AttachmentError(f"{text}: {exc.strerror or exc}") from None
    used = inline_bytes(already)
    if used + size > limit:
        others = f" ({wire.human_size(used)} already attached)" if used else ""
        raise AttachmentError(
            f"{path.name} is {wire.human_size(size)}: a message carries at most {wire.human_size(limit)} of files "
            f"inline{others}; send a link to it instead (an http(s) URL is sent by reference)"
        )
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise AttachmentError(f"{text}: cannot read it: {exc.strerror or exc}") from None
    media = mimetypes.guess_type(path.name)[0] or DEFAULT_MEDIA_TYPE
    return FileAttachment(name=path.name, media_type=media, data=data, source=text)


def parse_data(text: str) -> DataAttachment:
    from rewindtui.client.bounded_json import deeper_than
    from rewindtui.client.limits import MAX_JSON_DEPTH

    if deeper_than(text.encode("utf-8", "surrogatepass"), MAX_JSON_DEPTH):  # json.loads would die of RecursionError
        raise AttachmentError(f"--data is nested deeper than {MAX_JSON_DEPTH} levels: {sanitize_line(text)[:60]!r}")
    try:
        value = json.loads(text)
    except ValueError as exc:
        raise AttachmentError(f"--data is not valid JSON ({exc}): {sanitize_line(text)[:60]!r}") from None
    return DataAttachment(value)


# -- saving --------------------------------------------------------------------------------------
_UNSAFE = re.compile(r"[\x00-\x1f\x7f-\x9f/\\:*?\"<>|]+")


def safe_name(name: str, fallback: str) -> str:
    """A plain file name from a name someone else chose: its last path component, without control
    or reserved characters, not hidden, not empty, at most 120 characters."""
    base = re.split(r"[/\\]", name or "")[-1]
    base = _UNSAFE.sub("_", base).strip().lstrip(".").strip()
    if not base or base in (".", ".."):
        base = fallback
    if len(base) > 120:
        stem, dot, ext = base.rpartition(".")
        base = (stem[:110] + dot + ext[:9]) if dot and len(ext) < 10 else base[:120]
    return base


def _unused(directory: Path, name: str) -> Path:
    path = directory / name
    if not path.exists():
        return path
    stem, suffix = path.stem, path.suffix
    for n in range(1, 10_000):
        candidate = directory / f"{stem} ({n}){suffix}"
        if not candidate.exists():
            return candidate
    raise AttachmentError(f"too many files named {name} in {directory}")


def _write_new(directory: Path, name: str, data: bytes | Callable[[BinaryIO], None]) -> Path:
    """Write ``data`` (bytes, or a function writing to the open file) to a new file (never over an
    existing one). A write that fails leaves no partial file."""
    for _ in range(100):
        path = _unused(directory, name)
        try:
            fh = open(path, "xb")
        except FileExistsError:  # someone took the name in between
            continue
        try:
            with fh:
                if callable(data):
                    data(fh)
                else:
                    fh.write(data)
        except BaseException:
            path.unlink(missing_ok=True)
            raise
        return path
    raise AttachmentError(f"could not find a free name for {name} in {directory}")


#: base64 characters decoded per step when an inline file is saved (a multiple of 4)
_B64_STEP = 4 * 256 * 1024
_B64_ONLY = re.compile(r"[A-Za-z0-9+/]*={0,2}")


def _b64_writer(text: str, name: str) -> Callable[[BinaryIO], None]:
    """Write the file whose base64 is ``text`` a step at a time: memory beyond the text is one
    step, not the whole file (a 200 MB file was held ~7 times). Text with line breaks or other
    characters is decoded whole, as before."""

    def write(fh: BinaryIO) -> None:
        try:
            if _B64_ONLY.fullmatch(text) is None:
                fh.write(base64.b64decode(text, validate=False))
                return
            for start in range(0, len(text), _B64_STEP):
                fh.write(binascii.a2b_base64(text[start : start + _B64_STEP]))
        except (binascii.Error, ValueError):
            raise AttachmentError(f"{name}: its bytes are not valid base64") from None

    return write


def _fallback_name(info: wire.PartInfo, index: int) -> str:
    if info.kind == "data":
        return f"data-{index}.json"
    ext = mimetypes.guess_extension(info.media_type or "") or ".bin"
    return f"file-{index}{ext}"


def savable(raw_parts: Iterable[Any]) -> list[Any]:
    """The parts that can be saved: files and data."""
    return [p for p in raw_parts if wire.part_info(p).kind in ("file", "data")]


async def _fetch(http: httpx.AsyncClient, url: str, limit: int) -> bytes:
    if urlsplit(url).scheme not in ("http", "https"):
        raise AttachmentError(f"cannot fetch {url}: only http(s) URLs are fetched")
    chunks: list[bytes] = []
    total = 0
    try:
        async with http.stream("GET", url) as response:
            if response.status_code >= 400:
                raise AttachmentError(f"fetching {url}: HTTP {response.status_code}")
            async for chunk in response.aiter_bytes():
                total += len(chunk)
                if total > limit:
                    raise AttachmentError(f"{url} is larger than {wire.human_size(limit)}: not saved")
                chunks.append(chunk)
    except httpx.HTTPError as exc:
        raise AttachmentError(f"fetching {url} failed: {exc}") from None
    return b"".join(chunks)


@dataclass
class Saved:
    """What :func:`save_parts` did: the files written, and each part it could not save and why."""

    written: list[Path]
    skipped: list[str]
    where: dict[int, Path] = field(default_factory=dict)  # id(part) -> the file written for it


async def save_parts(
    raw_parts: Iterable[Any],
    directory: Path,
    *,
    http: httpx.AsyncClient | None = None,
    fetch_limit: int = MAX_FETCH_BYTES,
) -> Saved:
    """Save each file and data part into ``directory`` (created if need be). A file by URL is
    fetched with ``http`` (not without one). A part that cannot be saved is skipped with its
    reason; the others are still saved. AttachmentError only when the directory cannot be made."""
    directory = directory.expanduser()
    try:
        directory.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise AttachmentError(f"cannot create {directory}: {exc.strerror or exc}") from None
    saved = Saved([], [])
    for index, p in enumerate(savable(raw_parts), start=1):
        info = wire.part_info(p)
        name = safe_name(info.name, _fallback_name(info, index))
        data: bytes | Callable[[BinaryIO], None]
        try:
            if info.kind == "data":
                if not name.endswith(".json"):
                    name += ".json"
                data = (json.dumps(wire.tidy_json(info.data), ensure_ascii=False, indent=2) + "\n").encode("utf-8")
            elif info.inline:
                data = _b64_writer(wire.part_b64(p) or "", name)  # streamed to disk
            elif info.url:
                if http is None:
                    raise AttachmentError(f"{name} is a link ({info.url}), not fetched")
                data = await _fetch(http, info.url, fetch_limit)
            else:
                raise AttachmentError(f"{name}: the part holds neither bytes nor a link")
            path = _write_new(directory, name, data)
            saved.written.append(path)
            saved.where[id(p)] = path
        except AttachmentError as exc:
            saved.skipped.append(str(exc))
        except OSError as exc:
            saved.skipped.append(f"cannot write {name} in {directory}: {exc.strerror or exc}")
    return saved
