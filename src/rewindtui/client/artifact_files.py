"""A task's artifacts as files and as text (the task browser's save and copy, F8).

* :func:`save_artifacts` writes each artifact of a task into a directory: its text parts as one
  text file named after the artifact (``.txt`` unless its name has a suffix), its file and data
  parts as :func:`~rewindtui.client.attachments.save_parts` writes them (files by URL fetched with
  the client's connection, within its size cap). A name of the server's choosing is reduced to a
  plain file name; an existing file is never overwritten (a free name ``name (1).txt`` is taken).
* :func:`artifacts_text` is the artifacts as one text (what a copy puts on the clipboard).

Bounded: at most :data:`MAX_ARTIFACTS` artifacts of a task, :data:`MAX_TEXT_BYTES` of text per
file and :data:`MAX_COPY_CHARS` copied; what is left out is said, never dropped silently.
No Textual; pure but for the files written.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx

from rewindtui.a2a import parts as wire
from rewindtui.a2a import raw
from rewindtui.client.attachments import AttachmentError, _write_new, safe_name, save_parts

#: artifacts of one task saved or copied at most
MAX_ARTIFACTS = 100
#: bytes of one artifact's text written at most (the rest is not written, and that is said)
MAX_TEXT_BYTES = 20 * 1024 * 1024
#: characters copied at most
MAX_COPY_CHARS = 1_000_000


@dataclass
class SavedArtifacts:
    """What :func:`save_artifacts` did: the files written and what it did not save, and why."""

    written: list[Path] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)


def artifacts_of(task: Any) -> list[dict[str, Any]]:
    """The task's artifacts (objects only), in order."""
    found = task.get("artifacts") if isinstance(task, dict) else None
    return [a for a in found if isinstance(a, dict)] if isinstance(found, list) else []


def artifact_name(artifact: dict[str, Any], index: int) -> str:
    name = artifact.get("name") or artifact.get("artifactId") or artifact.get("artifact_id")
    return name if isinstance(name, str) and name.strip() else f"artifact-{index}"


def _text_file_name(artifact: dict[str, Any], index: int) -> str:
    name = safe_name(artifact_name(artifact, index), f"artifact-{index}")
    stem, dot, suffix = name.rpartition(".")
    return name if dot and stem and 0 < len(suffix) <= 8 and suffix.isalnum() else name + ".txt"


async def save_artifacts(task: Any, directory: Path, *, http: httpx.AsyncClient | None = None) -> SavedArtifacts:
    """Save the task's artifacts into ``directory`` (created if need be); AttachmentError only when
    the directory cannot be made. A part that cannot be saved is skipped with its reason."""
    directory = directory.expanduser()
    try:
        directory.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise AttachmentError(f"cannot create {directory}: {exc.strerror or exc}") from None
    out = SavedArtifacts()
    artifacts = artifacts_of(task)
    if len(artifacts) > MAX_ARTIFACTS:
        out.skipped.append(f"{len(artifacts) - MAX_ARTIFACTS} artifacts past the first {MAX_ARTIFACTS}: not saved")
    for index, artifact in enumerate(artifacts[:MAX_ARTIFACTS], start=1):
        text = raw.text_of(artifact)
        if text:
            name = _text_file_name(artifact, index)
            data = text.encode("utf-8", "replace")
            if len(data) > MAX_TEXT_BYTES:
                out.skipped.append(
                    f"{name}: {wire.human_size(len(data))} of text, more than {wire.human_size(MAX_TEXT_BYTES)}: "
                    "not saved (j copies the task's JSON)"
                )
            else:
                try:
                    out.written.append(_write_new(directory, name, data))
                except AttachmentError as exc:
                    out.skipped.append(str(exc))
                except OSError as exc:
                    out.skipped.append(f"cannot write {name} in {directory}: {exc.strerror or exc}")
        saved = await save_parts(raw.parts(artifact), directory, http=http)
        out.written += saved.written
        out.skipped += saved.skipped
    return out


def artifacts_text(task: Any) -> str:
    """The task's artifacts as one text: each one's name, its text, its data as JSON and its files
    by name (bounded by :data:`MAX_COPY_CHARS`, the cut said at the end)."""
    pieces: list[str] = []
    artifacts = artifacts_of(task)
    for index, artifact in enumerate(artifacts[:MAX_ARTIFACTS], start=1):
        lines = [f"# {artifact_name(artifact, index)}"] if len(artifacts) > 1 else []
        text = raw.text_of(artifact)
        if text:
            lines.append(text)
        for p in raw.parts(artifact):
            info = wire.part_info(p)
            if info.kind == "data":
                lines.append(json.dumps(wire.tidy_json(info.data), ensure_ascii=False, indent=2))
            elif info.kind == "file":
                lines.append(f"[file {info.label()}]")
        pieces.append("\n".join(lines))
    out = "\n\n".join(pieces)
    if len(out) > MAX_COPY_CHARS:
        out = out[:MAX_COPY_CHARS] + f"\n… (cut at {MAX_COPY_CHARS:,} characters; a saves the artifacts whole)"
    return out
