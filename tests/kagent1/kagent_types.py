"""kagent's own message types, built from its compiled descriptors (``tests/fixtures/kagent1/
*.binpb``, made by ``make_descriptors.py`` from kagent's ``_pb.ts`` files at pinned commits) with
a private descriptor pool: nothing here comes from rewindtui's ``kagent1.proto``.

    from kagent_types import KAGENT
    KAGENT.message("CreateSessionRequest")        # a message class of kagent's sessions.proto
    KAGENT.method("SessionService", "GetSession")   # (request class, answer class)

CheckpointService is the exception, and it is marked: no readable kagent file of the current API
holds its descriptor (docs/kagent.md). :data:`UNVERIFIED_CHECKPOINTS` writes it down from kagent's
Go sources -- the method and field NAMES of ``go/core/internal/grpcserver/checkpoint.go`` and
``service/checkpoint/service.go`` at 105cc5d7 -- with field NUMBERS nobody has confirmed. Its
messages refer to kagent's own ``Session``, ``Failure``, ``PageRequest`` and ``PageResponse``
(those parts are verified); its own numbers can only agree with rewindtui's, so the wire test
lists these calls as unverified instead of counting them as checked.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from google.protobuf import descriptor_pb2, descriptor_pool, message_factory, struct_pb2, timestamp_pb2

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "kagent1"
PACKAGE = "kagent.api.v1alpha1"


@dataclass
class KagentTypes:
    pool: descriptor_pool.DescriptorPool = field(default_factory=descriptor_pool.DescriptorPool)
    #: file name -> "path@commit" of the kagent file it was read from
    sources: dict[str, str] = field(default_factory=dict)

    def load(self) -> KagentTypes:
        self._load_kagent()
        self.pool.Add(_unverified_checkpoints())
        self.sources["unverified/checkpoints.proto"] = (
            "names: go/core/internal/grpcserver/checkpoint.go@105cc5d7; numbers: unverified"
        )
        return self

    def _load_kagent(self) -> None:
        for module in (timestamp_pb2, struct_pb2):
            self.pool.AddSerializedFile(module.DESCRIPTOR.serialized_pb)
        entries = json.loads((FIXTURES / "kagent_pb_ts.json").read_text())["files"]
        for name in ("common", "sessions"):
            fd = descriptor_pb2.FileDescriptorProto.FromString((FIXTURES / f"{name}.binpb").read_bytes())
            self.pool.Add(fd)
            self.sources[fd.name] = f"{entries[name]['path']}@{entries[name]['commit'][:8]}"

    def message(self, name: str) -> Any:
        return message_factory.GetMessageClass(self.pool.FindMessageTypeByName(f"{PACKAGE}.{name}"))

    def method(self, service: str, method: str) -> tuple[Any, Any]:
        found = self.pool.FindServiceByName(f"{PACKAGE}.{service}").FindMethodByName(method)
        return message_factory.GetMessageClass(found.input_type), message_factory.GetMessageClass(found.output_type)

    def services(self, *, verified: bool = False) -> dict[str, list[str]]:
        """Each service's methods (``verified``: only those of kagent's own descriptors)."""
        out: dict[str, list[str]] = {}
        for file_name in self.sources:
            if verified and file_name.startswith("unverified/"):
                continue
            for service in self.pool.FindFileByName(file_name).services_by_name.values():
                out[service.full_name] = [m.name for m in service.methods]
        return out

    def enum(self, name: str) -> Any:
        return self.pool.FindEnumTypeByName(f"{PACKAGE}.{name}")


#: (message, [(field, number, type, label, type name)]): names from kagent's Go (105cc5d7), numbers unverified
_S, _M, _E, _U64, _REP, _ONE = (
    descriptor_pb2.FieldDescriptorProto.TYPE_STRING,
    descriptor_pb2.FieldDescriptorProto.TYPE_MESSAGE,
    descriptor_pb2.FieldDescriptorProto.TYPE_ENUM,
    descriptor_pb2.FieldDescriptorProto.TYPE_UINT64,
    descriptor_pb2.FieldDescriptorProto.LABEL_REPEATED,
    descriptor_pb2.FieldDescriptorProto.LABEL_OPTIONAL,
)
UNVERIFIED_CHECKPOINTS: list[tuple[str, list[tuple[str, int, int, int, str]]]] = [
    (
        "Checkpoint",
        [
            ("id", 1, _S, _ONE, ""),
            ("session_id", 2, _S, _ONE, ""),
            ("head_task_id", 3, _S, _ONE, ""),
            ("history_sequence", 4, _U64, _ONE, ""),
            ("state", 5, _E, _ONE, ".kagent.api.v1alpha1.CheckpointState"),
            ("created_at", 6, _M, _ONE, ".google.protobuf.Timestamp"),
            ("failure", 7, _M, _ONE, ".kagent.api.v1alpha1.Failure"),
            ("name", 8, _S, _ONE, ""),
        ],
    ),
    (
        "CreateCheckpointRequest",
        [("session_id", 1, _S, _ONE, ""), ("request_id", 2, _S, _ONE, ""), ("expected_head_task_id", 3, _S, _ONE, "")],
    ),
    ("CreateCheckpointResponse", [("checkpoint", 1, _M, _ONE, ".kagent.api.v1alpha1.Checkpoint")]),
    ("GetCheckpointRequest", [("checkpoint_id", 1, _S, _ONE, "")]),
    ("GetCheckpointResponse", [("checkpoint", 1, _M, _ONE, ".kagent.api.v1alpha1.Checkpoint")]),
    (
        "ListCheckpointsRequest",
        [("session_id", 1, _S, _ONE, ""), ("page", 2, _M, _ONE, ".kagent.api.v1alpha1.PageRequest")],
    ),
    (
        "ListCheckpointsResponse",
        [
            ("checkpoints", 1, _M, _REP, ".kagent.api.v1alpha1.Checkpoint"),
            ("page", 2, _M, _ONE, ".kagent.api.v1alpha1.PageResponse"),
        ],
    ),
    ("DeleteCheckpointRequest", [("checkpoint_id", 1, _S, _ONE, "")]),
    ("DeleteCheckpointResponse", []),
    ("UpdateCheckpointNameRequest", [("checkpoint_id", 1, _S, _ONE, ""), ("name", 2, _S, _ONE, "")]),
    ("UpdateCheckpointNameResponse", [("checkpoint", 1, _M, _ONE, ".kagent.api.v1alpha1.Checkpoint")]),
    ("ForkSessionRequest", [("checkpoint_id", 1, _S, _ONE, ""), ("request_id", 2, _S, _ONE, "")]),
    ("ForkSessionResponse", [("session", 1, _M, _ONE, ".kagent.api.v1alpha1.Session")]),
]
UNVERIFIED_METHODS = [
    ("CreateCheckpoint", "CreateCheckpointRequest", "CreateCheckpointResponse"),
    ("GetCheckpoint", "GetCheckpointRequest", "GetCheckpointResponse"),
    ("ListCheckpoints", "ListCheckpointsRequest", "ListCheckpointsResponse"),
    ("DeleteCheckpoint", "DeleteCheckpointRequest", "DeleteCheckpointResponse"),
    ("UpdateCheckpointName", "UpdateCheckpointNameRequest", "UpdateCheckpointNameResponse"),
    ("ForkSession", "ForkSessionRequest", "ForkSessionResponse"),
]


def _unverified_checkpoints() -> descriptor_pb2.FileDescriptorProto:
    fd = descriptor_pb2.FileDescriptorProto(
        name="unverified/checkpoints.proto",
        package=PACKAGE,
        syntax="proto3",
        dependency=[
            "google/protobuf/timestamp.proto",
            "kagent/api/v1alpha1/common.proto",
            "kagent/api/v1alpha1/sessions.proto",
        ],
    )
    state = fd.enum_type.add(name="CheckpointState")  # values as checkpoints.proto@2235f496
    for number, value in enumerate(("UNSPECIFIED", "CREATING", "READY", "FAILED", "DELETING")):
        state.value.add(name=f"CHECKPOINT_STATE_{value}", number=number)
    for name, fields in UNVERIFIED_CHECKPOINTS:
        message = fd.message_type.add(name=name)
        for field_name, number, kind, label, type_name in fields:
            message.field.add(name=field_name, number=number, type=kind, label=label, type_name=type_name or None)
    service = fd.service.add(name="CheckpointService")
    for method, request, answer in UNVERIFIED_METHODS:
        service.method.add(name=method, input_type=f".{PACKAGE}.{request}", output_type=f".{PACKAGE}.{answer}")
    return fd


KAGENT = KagentTypes().load()
