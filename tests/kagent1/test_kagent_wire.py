"""rewindtui's kagent 1.0 wire against kagent's own definitions (``kagent_types``: kagent's
compiled descriptors at pinned commits, never rewindtui's ``kagent1.proto``).

1. Every message of every SessionService method, compared field by field (number, name, type,
   label, the message and enum types they name), both ways.
2. Every request the controller client really sends is decoded with kagent's request type and
   compared with what was meant; every answer is encoded with kagent's answer type (every field
   set) and read back through the client.

CheckpointService has no readable kagent definition of this generation: its calls are
unverified (docs/kagent.md), and the test says which ones rather than passing over them.
"""

from __future__ import annotations

from typing import Any

import pytest
from google.protobuf.descriptor import Descriptor, FieldDescriptor
from kagent_types import KAGENT

from rewindtui.kagent1.gen import kagent1_pb2 as ours

SERVICE = "kagent.api.v1alpha1.SessionService"


def differences(theirs: Descriptor, mine: Descriptor | None, where: str, seen: set[str] | None = None) -> list[str]:
    """Every way ``mine`` (rewindtui's message) differs on the wire from ``theirs`` (kagent's)."""
    seen = set() if seen is None else seen
    if mine is None:
        return [f"{where}: rewindtui's proto has no message {theirs.full_name}"]
    if theirs.full_name in seen:
        return []
    seen.add(theirs.full_name)
    out: list[str] = []
    if mine.full_name != theirs.full_name:
        out.append(f"{where}: rewindtui calls it {mine.full_name}, kagent {theirs.full_name}")
    for field in theirs.fields:
        other = mine.fields_by_number.get(field.number)
        at = f"{theirs.name}.{field.name} = {field.number}"
        if other is None:
            named = mine.fields_by_name.get(field.name)
            out.append(
                f"{at}: rewindtui has no field {field.number}"
                + (f" (its {field.name} is {named.number})" if named else "")
            )
            continue
        if other.name != field.name:
            out.append(f"{at}: rewindtui's field {field.number} is {other.name}")
        if other.type != field.type:
            out.append(f"{at}: kagent's type {_type(field)}, rewindtui's {_type(other)}")
        if _repeated(other) != _repeated(field):
            out.append(f"{at}: kagent's is {'repeated' if _repeated(field) else 'singular'}, rewindtui's is not")
        if field.type == FieldDescriptor.TYPE_MESSAGE and other.type == field.type:
            out.extend(differences(field.message_type, other.message_type, at, seen))
        if field.type == FieldDescriptor.TYPE_ENUM and other.type == field.type:
            theirs_values = {v.number: v.name for v in field.enum_type.values}
            mine_values = {v.number: v.name for v in other.enum_type.values}
            if theirs_values != mine_values:
                out.append(f"{at}: enum {field.enum_type.full_name} {theirs_values} vs rewindtui's {mine_values}")
    for other in mine.fields:
        if other.number not in theirs.fields_by_number:
            out.append(f"{theirs.name}: rewindtui has a field {other.name} = {other.number} that kagent does not")
    return out


def _type(field: FieldDescriptor) -> str:
    if field.type == FieldDescriptor.TYPE_MESSAGE:
        return field.message_type.full_name
    if field.type == FieldDescriptor.TYPE_ENUM:
        return field.enum_type.full_name
    return {v: k for k, v in vars(FieldDescriptor).items() if k.startswith("TYPE_")}.get(field.type, str(field.type))


def _repeated(field: FieldDescriptor) -> bool:
    return bool(field.is_repeated) if hasattr(field, "is_repeated") else field.label == FieldDescriptor.LABEL_REPEATED


def _mine(full_name: str) -> Descriptor | None:
    return ours.DESCRIPTOR.message_types_by_name.get(full_name.rpartition(".")[2])


def session_methods() -> list[str]:
    return KAGENT.services(verified=True)[SERVICE]


@pytest.mark.parametrize("method", session_methods())
def test_session_service_messages_are_kagents(method: str) -> None:
    """Each SessionService method's request and answer: rewindtui's messages are kagent's, field
    by field (sessions.proto@1e2422ff as compiled into sessions_pb.ts@105cc5d7)."""
    service = KAGENT.pool.FindServiceByName(SERVICE)
    kagent_method = service.FindMethodByName(method)
    mine_service = ours.DESCRIPTOR.services_by_name.get("SessionService")
    assert mine_service is not None, "rewindtui's proto has no kagent.api.v1alpha1.SessionService"
    mine_method = mine_service.methods_by_name.get(method)
    assert mine_method is not None, f"rewindtui's SessionService has no {method}"
    problems = differences(kagent_method.input_type, mine_method.input_type, f"{method} request")
    problems += differences(kagent_method.output_type, mine_method.output_type, f"{method} answer")
    assert not problems, "\n".join(problems)


def test_the_comparison_fails_on_a_shifted_field() -> None:
    """The comparison itself can fail: kagent's Session against a message whose fields are
    numbered one off (what the old proto did to Checkpoint) is caught on every shifted field."""
    from google.protobuf import descriptor_pb2, descriptor_pool

    theirs = KAGENT.pool.FindMessageTypeByName("kagent.api.v1alpha1.Failure")
    shifted = descriptor_pb2.FileDescriptorProto(name="shifted.proto", package="kagent.api.v1alpha1", syntax="proto3")
    shifted.message_type.add(name="Failure").field.extend(
        [
            descriptor_pb2.FieldDescriptorProto(
                name="reason", number=2, type=FieldDescriptor.TYPE_STRING, label=FieldDescriptor.LABEL_OPTIONAL
            ),
            descriptor_pb2.FieldDescriptorProto(
                name="message", number=3, type=FieldDescriptor.TYPE_STRING, label=FieldDescriptor.LABEL_OPTIONAL
            ),
        ]
    )
    pool = descriptor_pool.DescriptorPool()
    pool.Add(shifted)
    problems = differences(theirs, pool.FindMessageTypeByName("kagent.api.v1alpha1.Failure"), "shifted")
    assert "Failure.reason = 1: rewindtui has no field 1 (its reason is 2)" in problems
    assert any("rewindtui's field 2 is reason" in p for p in problems)
    assert "Failure: rewindtui has a field message = 3 that kagent does not" in problems


def test_checkpoint_service_is_listed_as_unverified() -> None:
    """No readable kagent file of the current generation holds CheckpointService's descriptor: the
    client names every such call as unverified instead of claiming it matches."""
    from rewindtui.kagent1.controller import UNVERIFIED_METHODS

    assert "kagent.api.v1alpha1.CheckpointService" not in KAGENT.services(verified=True)
    assert set(UNVERIFIED_METHODS) == {m.name for m in ours.DESCRIPTOR.services_by_name["CheckpointService"].methods}


def _all_fields(message: Any, depth: int = 0) -> Any:
    """``message`` with every field set to a distinct value (nested messages too)."""
    for field in message.DESCRIPTOR.fields:
        name = field.name
        if field.type == FieldDescriptor.TYPE_MESSAGE:
            if field.message_type.full_name == "google.protobuf.Timestamp":
                target = getattr(message, name).add() if _repeated(field) else getattr(message, name)
                target.seconds, target.nanos = 1_700_000_000 + field.number, field.number
            elif depth < 3:
                target = getattr(message, name).add() if _repeated(field) else getattr(message, name)
                _all_fields(target, depth + 1)
        elif field.type == FieldDescriptor.TYPE_ENUM:
            value = field.enum_type.values[-1].number
            getattr(message, name).append(value) if _repeated(field) else setattr(message, name, value)
        elif field.type == FieldDescriptor.TYPE_BOOL:
            setattr(message, name, True)
        elif field.type == FieldDescriptor.TYPE_STRING:
            value = f"{message.DESCRIPTOR.name}.{name}"
            getattr(message, name).append(value) if _repeated(field) else setattr(message, name, value)
        else:
            setattr(message, name, 40 + field.number)
    return message


class Wire:
    """A gRPC-Web endpoint that reads every request with kagent's request type and answers with
    kagent's answer type, every field set (httpx.MockTransport: no sockets needed)."""

    def __init__(self) -> None:
        self.sent: list[tuple[str, Any]] = []
        self.answers: dict[str, Any] = {}

    def __call__(self, request: Any) -> Any:
        import httpx

        from rewindtui.kagent1 import grpcweb

        service, method = request.url.path.removeprefix("/api/").split("/")
        request_type, answer_type = KAGENT.method(service.rpartition(".")[2], method)
        body = grpcweb.parse(request.content).messages[0]
        decoded = request_type.FromString(body)
        assert decoded.SerializeToString(deterministic=True) == body or body == b"", (
            "kagent's type does not read every byte"
        )
        from google.protobuf import unknown_fields

        unknown = [f.field_number for f in unknown_fields.UnknownFieldSet(decoded)]
        assert not unknown, f"{method}: kagent's {request_type.DESCRIPTOR.name} has no field numbered {unknown}"
        self.sent.append((method, decoded))
        answer = _all_fields(answer_type())
        self.answers[method] = answer
        payload = grpcweb.frame(answer.SerializeToString()) + grpcweb.trailers(0)
        return httpx.Response(200, content=payload, headers={"content-type": grpcweb.CONTENT_TYPE})


def _dict(message: Any) -> dict[str, Any]:
    from google.protobuf.json_format import MessageToDict

    return MessageToDict(message, preserving_proto_field_name=True)


SID = "11111111-1111-4111-8111-111111111111"


def _session_calls() -> list[tuple[str, Any, dict[str, Any], Any]]:
    """(method, the client call, the request kagent must read, the part of kagent's answer the
    client returns)."""
    return [
        (
            "ListSessions",
            lambda c: c.list_sessions("ns1/agent-a", limit=7, page_token="tok"),
            {"agent": {"namespace": "ns1", "name": "agent-a"}, "page": {"limit": 7, "page_token": "tok"}},
            lambda got, answer: ([_dict(s) for s in got.sessions], [_dict(s) for s in answer.sessions]),
        ),
        (
            "CreateSession",
            lambda c: c.create_session("ns1/agent-a", name="a name", request_id="req-1"),
            {"agent": {"namespace": "ns1", "name": "agent-a"}, "request_id": "req-1", "name": "a name"},
            lambda got, answer: (_dict(got), _dict(answer.session)),
        ),
        (
            "GetSession",
            lambda c: c.get_session(SID),
            {"session_id": SID},
            lambda got, answer: (_dict(got), _dict(answer.session)),
        ),
        (
            "UpdateSessionName",
            lambda c: c.rename(SID, "new"),
            {"session_id": SID, "name": "new"},
            lambda got, answer: (_dict(got), _dict(answer.session)),
        ),
        (
            "SuspendSession",
            lambda c: c.suspend(SID),
            {"session_id": SID},
            lambda got, answer: (_dict(got), _dict(answer.session)),
        ),
        (
            "ResumeSession",
            lambda c: c.resume(SID),
            {"session_id": SID},
            lambda got, answer: (_dict(got), _dict(answer.session)),
        ),
        (
            "DeleteSession",
            lambda c: c.delete(SID),
            {"session_id": SID},
            lambda got, answer: (_dict(got), _dict(answer.session)),
        ),
        (
            "CreateSessionShare",
            lambda c: c.share(SID, read_only=True),
            {"session_id": SID, "permission": "SESSION_SHARE_PERMISSION_READ_ONLY"},
            lambda got, answer: ((_dict(got[0]), got[1]), (_dict(answer.share), answer.token)),
        ),
        (
            "ListSessionShares",
            lambda c: c.shares(SID, pages=2),
            {"session_id": SID, "page": {"limit": 100}},
            lambda got, answer: ([_dict(s) for s in got], [_dict(s) for s in answer.shares] * 2),
        ),
        ("RevokeSessionShare", lambda c: c.revoke_share(SID), {"share_id": SID}, lambda got, answer: (got, None)),
    ]


@pytest.mark.parametrize("case", _session_calls(), ids=lambda case: case[0])
async def test_what_the_client_sends_is_read_by_kagents_types(case) -> None:
    """The bytes the controller client really sends, decoded with kagent's request type, field by
    field; kagent's answer (every field set) read back through the client, field by field."""
    import httpx

    from rewindtui.kagent1.controller import Kagent1Controller

    method, call, request, answered = case
    wire = Wire()
    async with httpx.AsyncClient(transport=httpx.MockTransport(wire), base_url="http://kagent.test") as http:
        controller = Kagent1Controller("http://kagent.test", user_id="u", http=http)
        got = await call(controller)
    assert {name for name, _ in wire.sent} == {method}
    sent = wire.sent[0][1]  # the first (a list walks every page: kagent's token never runs out here)
    assert _dict(sent) == request
    mine, theirs = answered(got, wire.answers[method])
    assert mine == theirs
    if method == "ListSessions":  # the page token came back too
        assert got.next_page_token == wire.answers[method].page.next_page_token != ""


def test_every_session_method_the_client_uses_is_cross_encoded() -> None:
    """No SessionService method the client calls escapes the byte-level test above."""
    import inspect

    from rewindtui.kagent1 import controller

    called = set()
    source = inspect.getsource(controller)
    for method in session_methods():
        if f'"{method}"' in source:
            called.add(method)
    assert called == {case[0] for case in _session_calls()}


def test_the_descriptor_fixtures_are_what_the_script_makes() -> None:
    """tests/fixtures/kagent1/*.binpb are make_descriptors.py's output of kagent's own descriptors."""
    from make_descriptors import main

    assert main(["--check"]) == 0


def test_error_info_is_read_from_a_status_and_bounded() -> None:
    """grpc-status-details-bin: a google.rpc.Status whose ErrorInfo gives the reason; garbage or an
    oversized one gives none (an outside party's bytes are bounded)."""
    from google.rpc import error_details_pb2, status_pb2

    from rewindtui.kagent1 import grpcweb

    status = status_pb2.Status(code=9, message="snapshot pending")
    status.details.add().Pack(
        error_details_pb2.ErrorInfo(domain="kagent.dev", reason="KAGENT_CHECKPOINT_SNAPSHOT_PENDING")
    )
    body = grpcweb.trailers(9, "snapshot pending", status.SerializeToString())
    with pytest.raises(grpcweb.GrpcError) as info:
        grpcweb.check(grpcweb.parse(body))
    assert (info.value.code, info.value.reason, info.value.domain) == (
        "FAILED_PRECONDITION",
        "KAGENT_CHECKPOINT_SNAPSHOT_PENDING",
        "kagent.dev",
    )
    assert grpcweb.error_info(b"\xff\x00garbage") == ("", "")
    assert grpcweb.error_info(b"x" * (grpcweb.MAX_DETAILS + 1)) == ("", "")
