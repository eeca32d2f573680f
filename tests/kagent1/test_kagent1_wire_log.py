"""kagent 1.0's controller calls in the wire log (rewindtui.kagent1.wire), against the controller
double (controller_double.py, built on kagent's compiled descriptors): each call's method path, its
request as JSON, the answer or the gRPC status with its ErrorInfo, timings; the bearer and the
X-Share-Token value never in it."""

from __future__ import annotations

import json
import secrets
from typing import Any

import pytest

from rewindtui.client import wire_log
from rewindtui.kagent1.controller import CheckpointAdvanced, Kagent1Controller
from rewindtui.kagent1.grpcweb import GrpcError

AGENT = "kagent/helper"
SESSIONS = "kagent.api.v1alpha1.SessionService"


def calls(log: wire_log.WireLog) -> list[tuple[dict[str, Any], dict[str, Any]]]:
    """(request entry, its answer or end entry), in order."""
    entries = list(log.entries)
    out = []
    for entry in entries:
        if entry["kind"] == "request":
            ends = [e for e in entries if e.get("id") == entry["id"] and e["kind"] in ("response", "end")]
            assert len(ends) == 1, entry
            out.append((entry, ends[0]))
    return out


async def test_controller_calls_are_in_the_wire_log_with_credentials_redacted(kagent1, tmp_path):
    from controller_double import NativeGrpc

    double, base = kagent1
    bearer = "bearer-" + secrets.token_hex(16)  # not registered as a secret: redacted by its header's name
    path = tmp_path / "wire.jsonl"
    log = wire_log.WireLog(path)
    previous = wire_log.activate(log)
    try:
        async with Kagent1Controller(base, user_id="alice", headers={"Authorization": f"Bearer {bearer}"}) as c:
            made = await c.create_session(AGENT, name="wired")
            share, token = await c.share(made.id, read_only=True)
            with pytest.raises(GrpcError):
                await c.get_session("no-such-session")
            with pytest.raises(CheckpointAdvanced):  # FAILED_PRECONDITION with its google.rpc.ErrorInfo
                await c.checkpoint(made.id, "too-late", "an-old-task")
        async with Kagent1Controller(base, user_id="carol", share_token=token) as shared:
            assert (await shared.get_session(made.id)).id == made.id
            with pytest.raises(GrpcError):  # a read-only share may only read
                await shared.rename(made.id, "mine now")
        with NativeGrpc(double) as native:
            async with Kagent1Controller(f"grpc://127.0.0.1:{native.port}", user_id="alice") as grpc_c:
                await grpc_c.get_session(made.id)
    finally:
        wire_log.activate(previous)
        log.close()

    logged = calls(log)
    by_method = [(req["url"].rsplit("/", 1)[-1], end["status"]) for req, end in logged]
    assert by_method[:3] == [("CreateSession", "OK"), ("CreateSessionShare", "OK"), ("GetSession", "NOT_FOUND")]
    assert by_method[-3:] == [("GetSession", "OK"), ("UpdateSessionName", "PERMISSION_DENIED"), ("GetSession", "OK")]

    create, created = logged[0]
    assert create["method"] == "gRPC-Web" and create["url"] == f"{base}/api/{SESSIONS}/CreateSession"
    sent = json.loads(create["body"])  # json_format, proto field names
    assert sent["agent"] == {"namespace": "kagent", "name": "helper"} and sent["name"] == "wired"
    assert sent["request_id"] and create["headers"]["x-user-id"] == "alice"
    assert create["headers"]["authorization"] == "***"
    assert created["kind"] == "response" and json.loads(created["body"])["session"]["id"] == made.id
    assert created["ms"] >= 0 and created["t"] >= create["t"]

    share_request, share_answer = logged[1]
    assert json.loads(share_request["body"]) == {
        "session_id": made.id,
        "permission": "SESSION_SHARE_PERMISSION_READ_ONLY",
    }
    assert json.loads(share_answer["body"])["token"] == "***"  # the new share's token, as a secret field
    assert json.loads(share_answer["body"])["share"]["id"] == share.id

    missing = logged[2][1]
    assert missing["kind"] == "end" and "not found" in missing["error"]

    refused = next(end for req, end in logged if req["url"].endswith("/CreateCheckpoint"))
    assert refused["status"] == "FAILED_PRECONDITION"
    assert refused["details"] == {"reason": "KAGENT_CHECKPOINT_CONVERSATION_ADVANCED", "domain": "kagent.dev"}

    read, _ = logged[-3]
    assert read["headers"]["x-share-token"] == "***" and read["headers"]["x-user-id"] == "carol"
    assert "read-only" in logged[-2][1]["error"]

    native_call, _ = logged[-1]
    assert native_call["method"] == "gRPC"
    assert native_call["url"] == f"grpc://127.0.0.1:{native.port}/{SESSIONS}/GetSession"
    assert json.loads(native_call["body"]) == {"session_id": made.id}

    written = path.read_text(encoding="utf-8")
    assert len(written.splitlines()) == len(log.entries)  # the file has what the view has
    shown = "\n".join(wire_log.entry_line(entry) for entry in log.entries)  # the console's lines
    assert "PERMISSION_DENIED" in shown and "CreateSessionShare" in shown
    for text in (written, shown, json.dumps(list(log.entries))):
        assert bearer not in text and token not in text


async def test_calls_are_recorded_only_while_a_log_is_active(kagent1):
    _, base = kagent1
    log = wire_log.WireLog()
    previous = wire_log.activate(log)
    try:
        async with Kagent1Controller(base, user_id="alice") as c:
            made = await c.create_session(AGENT)
            assert [e["kind"] for e in log.entries] == ["request", "response"]
            wire_log.activate(None)
            await c.get_session(made.id)
    finally:
        wire_log.activate(previous)
    assert len(log.entries) == 2


def test_a_large_message_is_logged_cut_like_any_body():
    from rewindtui.kagent1.gen import kagent1_pb2 as pb
    from rewindtui.kagent1.wire import as_json

    text = as_json(pb.Session(id="s-1", name="n" * (2 * wire_log.MAX_BODY)))
    assert text.startswith('{"id": "s-1"') and text.endswith("bytes in all)")
    assert len(text.encode()) < wire_log.MAX_BODY + 100
