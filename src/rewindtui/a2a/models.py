"""Pydantic models for A2A objects, normalised from either dialect.

One model reads A2A 0.3 (``kind`` tags, ``user``/``agent``, ``completed``) and A2A 1.0 (no
``kind``, ``ROLE_*``, ``TASK_STATE_*``, ``url``/``raw`` file parts), in camelCase or snake_case.
Roles and states are normalised to the 0.3 spellings; a part's ``kind`` is always set (``text``,
``data``, ``file`` or ``unknown``). Unknown fields are kept (``model_extra``), and a part we do
not understand is kept as ``kind="unknown"`` with its fields, so it can still be shown.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field, model_validator
from pydantic.alias_generators import to_camel

from rewindtui.a2a import metadata as meta_keys
from rewindtui.a2a import raw
from rewindtui.a2a.dialect import norm_role, norm_state


class A2AModel(BaseModel):
    model_config = ConfigDict(extra="allow", alias_generator=to_camel, populate_by_name=True)

    def to_dict(self) -> dict[str, Any]:
        """camelCase JSON-ready dict, without unset optional fields."""
        return self.model_dump(mode="json", by_alias=True, exclude_none=True)


def _joined_text(parts: list[Part]) -> str:
    return "".join(p.text for p in parts if p.kind == "text" and p.text is not None)


class FileContent(A2AModel):
    uri: str | None = None
    bytes: str | None = None
    mime_type: str | None = None
    name: str | None = None


class Part(A2AModel):
    kind: str = "unknown"
    text: str | None = None
    data: Any = None
    file: FileContent | None = None
    metadata: dict[str, Any] | None = None

    @model_validator(mode="before")
    @classmethod
    def _normalise(cls, value: Any) -> Any:
        if not isinstance(value, dict):
            return {"kind": "unknown", "value": value}
        kind = raw.part_kind(value)
        out = dict(value)
        out["kind"] = kind
        if kind == "file" and "file" not in value:
            # A2A 1.0 file part: {"url" | "raw", "mediaType", "filename"}
            out["file"] = {
                "uri": out.pop("url", None),
                "bytes": out.pop("raw", None),
                "mimeType": out.pop("mediaType", None) or out.pop("media_type", None),
                "name": out.pop("filename", None),
            }
        if kind == "unknown" and value.get("kind") is not None:
            out["original_kind"] = value.get("kind")
        return out

    @property
    def tool_type(self) -> str | None:
        if self.kind != "data":
            return None
        found = meta_keys.value(self.metadata, meta_keys.TYPE)
        return found if found in (meta_keys.FUNCTION_CALL, meta_keys.FUNCTION_RESPONSE) else None


class Message(A2AModel):
    message_id: str = ""
    role: str = "unknown"
    parts: list[Part] = Field(default_factory=list)
    context_id: str | None = None
    task_id: str | None = None
    metadata: dict[str, Any] | None = None

    @model_validator(mode="before")
    @classmethod
    def _normalise(cls, value: Any) -> Any:
        if isinstance(value, dict):
            value = dict(value)
            value.pop("kind", None)
            value["role"] = norm_role(value.get("role"))
        return value

    @property
    def text(self) -> str:
        return _joined_text(self.parts)

    @property
    def invocation_id(self) -> str | None:
        return meta_keys.invocation_id({"metadata": self.metadata})

    @property
    def author(self) -> str | None:
        return meta_keys.author({"metadata": self.metadata})

    @property
    def partial(self) -> bool:
        return meta_keys.is_partial({"metadata": self.metadata})


class TaskStatus(A2AModel):
    state: str = "unknown"
    message: Message | None = None
    timestamp: str | None = None

    @model_validator(mode="before")
    @classmethod
    def _normalise(cls, value: Any) -> Any:
        if isinstance(value, dict):
            value = dict(value)
            value["state"] = norm_state(value.get("state"))
        return value


class Artifact(A2AModel):
    artifact_id: str = ""
    name: str | None = None
    description: str | None = None
    parts: list[Part] = Field(default_factory=list)
    metadata: dict[str, Any] | None = None

    @property
    def text(self) -> str:
        return _joined_text(self.parts)


class _Tagged(A2AModel):
    @model_validator(mode="before")
    @classmethod
    def _drop_kind(cls, value: Any) -> Any:
        if isinstance(value, dict) and "kind" in value:
            value = dict(value)
            value.pop("kind")
        return value


class Task(_Tagged):
    id: str = ""
    context_id: str | None = None
    status: TaskStatus | None = None
    history: list[Message] = Field(default_factory=list)
    artifacts: list[Artifact] = Field(default_factory=list)
    metadata: dict[str, Any] | None = None


class TaskStatusUpdateEvent(_Tagged):
    task_id: str | None = None
    context_id: str | None = None
    status: TaskStatus = Field(default_factory=TaskStatus)
    final: bool | None = None
    metadata: dict[str, Any] | None = None


class TaskArtifactUpdateEvent(_Tagged):
    task_id: str | None = None
    context_id: str | None = None
    artifact: Artifact = Field(default_factory=Artifact)
    append: bool | None = None
    last_chunk: bool | None = None
    metadata: dict[str, Any] | None = None


class JsonRpcError(A2AModel):
    code: int | None = None
    message: str = ""
    data: Any = None

    def describe(self) -> str:
        code = f" {self.code}" if self.code is not None else ""
        return f"JSON-RPC error{code}: {self.message or 'no message'}"
