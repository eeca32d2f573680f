"""A team server with users (``rewindtui serve --users``): tokens say who asks; sessions are their
user's; a share (read or write) lets another user in. Two real replicas on one PostgreSQL, tokens
made by the admin command (``rewindtui team token``), the headless ``rewindtui send`` using a token
through the named-auth settings (``--bearer-env``)."""

from __future__ import annotations

import asyncio
import io
import os
import subprocess
import sys
import uuid
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path
from typing import Any

import httpx
import pytest
from srvkit import Served, send_body

from rewindtui.a2a import contract

pytestmark = [pytest.mark.slow, pytest.mark.timeout(300)]
#: a replica may still be loading its agent when a test starts (requests wait for it)
_http = httpx.Client(timeout=120)


def _team(url: str, *args: str) -> str:
    """``rewindtui team --database-url URL ARGS`` (the admin command: tokens, shares, revokes), run
    in this process through the CLI's own entry point. It sets the scene here, it is not what these
    tests test (test_team_move.py runs the command as a process), and the URL it is given is the
    only setting it reads; a process of its own was 1.7 s of CPU each, most of it imports this
    process has done already. Not thread-safe (it swaps sys.stdout): one call at a time."""
    from rewindtui.cli.main import main as cli

    out, err = io.StringIO(), io.StringIO()
    with redirect_stdout(out), redirect_stderr(err):
        rc = cli(["team", "--database-url", url, *args])
    assert rc == 0, err.getvalue()
    return out.getvalue()


def _as(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


def _send(replica: Served, token: str, session: str, text: str, **extra: Any) -> dict[str, Any]:
    body = send_body(session, text, **extra)
    return _http.post(replica.agent_url, json=body, headers=_as(token)).json()


@pytest.fixture(scope="module")
def users_pair(tmp_path_factory: pytest.TempPathFactory) -> Any:
    from kit.postgres import new_database

    url = new_database("m")
    alice = _team(url, "token", "alice").split()[0]
    bob = _team(url, "token", "bob").split()[0]
    root = tmp_path_factory.mktemp("users")
    env = {"REWINDTUI_DATABASE_URL": url}
    a = Served(root / "a", env=env, extra=["--users"])
    b = Served(root / "b", env=env, extra=["--users"])
    try:
        yield a, b, url, alice, bob
    finally:
        a.close()
        b.close()


def test_without_a_users_token_nothing_but_the_card_is_served(users_pair: Any) -> None:
    a, _b, _url, _alice, _bob = users_pair
    assert _http.get(a.api_url + "/sessions").status_code == 401
    assert _http.get(a.api_url + "/sessions", headers=_as("rwt_not-a-token")).status_code == 401
    refused = _http.get(a.api_url + "/sessions", headers={"X-User-Id": "alice"})  # naming a user is not enough
    assert refused.status_code == 401 and "Bearer" in refused.json()["error"]
    assert _http.get(a.agent_url + ".well-known/agent-card.json").status_code == 200


def test_another_user_cannot_read_or_rewind_a_session_until_it_is_shared(users_pair: Any) -> None:
    a, b, url, alice, bob = users_pair
    session = f"alice-{uuid.uuid4().hex[:8]}"
    assert _send(a, alice, session, "one")["result"]["status"]["state"] == "completed"
    assert _send(b, alice, session, "two")["result"]["status"]["state"] == "completed"
    tasks = _http.get(b.api_url + f"/sessions/{session}/tasks", headers=_as(alice)).json()["data"]
    invocations = [t["metadata"]["kagent_invocation_id"] for t in tasks]
    assert len(invocations) == 2
    # X-User-Id cannot make bob alice: the token says who he is
    as_alice = {**_as(bob), "X-User-Id": "alice"}
    for replica in (a, b):
        assert _http.get(replica.api_url + f"/sessions/{session}", headers=as_alice).status_code == 404
        assert _http.get(replica.api_url + f"/sessions/{session}/tasks", headers=_as(bob)).status_code == 404
        rewind = _http.post(
            replica.api_url + contract.REST_REWIND.format(id=session),
            headers=_as(bob),
            json={contract.REST_BEFORE_FIELD: invocations[1]},
        )
        assert rewind.status_code == 404
        fork = _http.post(
            replica.api_url + contract.REST_FORK.format(id=session),
            headers=_as(bob),
            json={contract.REST_BEFORE_FIELD: invocations[1]},
        )
        assert fork.status_code == 404
    assert session not in [s["id"] for s in _http.get(a.api_url + "/sessions", headers=_as(bob)).json()["data"]]
    refused = _send(a, bob, session, "let me in")["result"]
    assert refused["status"]["state"] == "failed"
    get_task = {"jsonrpc": "2.0", "id": 2, "method": "tasks/get", "params": {"id": tasks[0]["id"]}}
    assert "error" in _http.post(a.agent_url, json=get_task, headers=_as(bob)).json()

    # bob cannot share alice's session with himself; alice shares it read-only
    assert (
        _http.post(
            a.api_url + f"/sessions/{session}/shares", headers=_as(bob), json={"user": "bob", "mode": "write"}
        ).status_code
        == 404
    )
    shared = _http.post(
        a.api_url + f"/sessions/{session}/shares", headers=_as(alice), json={"user": "bob", "mode": "read"}
    )
    assert shared.status_code == 201
    read = _http.get(b.api_url + f"/sessions/{session}/tasks", headers=_as(bob))
    assert (
        read.status_code == 200
        and read.content == _http.get(b.api_url + f"/sessions/{session}/tasks", headers=_as(alice)).content
    )
    assert "result" in _http.post(b.agent_url, json=get_task, headers=_as(bob)).json()
    rewind = _http.post(
        b.api_url + contract.REST_REWIND.format(id=session),
        headers=_as(bob),
        json={contract.REST_BEFORE_FIELD: invocations[1]},
    )
    assert rewind.status_code == 403 and "read-only" in rewind.json()["error"]  # read-only: no rewind
    assert "read-only" in _send(b, bob, session, "still not")["error"]

    # a writable share (the admin command): bob rewinds and sends
    _team(url, "share", session, "bob", "--mode", "write")
    rewind = _http.post(
        a.api_url + contract.REST_REWIND.format(id=session),
        headers=_as(bob),
        json={contract.REST_BEFORE_FIELD: invocations[1]},
    )
    assert rewind.status_code == 200, rewind.text
    answer = _send(a, bob, session, "from bob")["result"]
    assert answer["status"]["state"] == "completed"
    after = _http.get(a.api_url + f"/sessions/{session}/tasks", headers=_as(alice)).json()["data"]
    texts = [p.get("text") for t in after for m in t.get("history", []) if m["role"] == "user" for p in m["parts"]]
    assert "two" not in texts and texts[-1] == "from bob"  # the session is still alice's, rewound by bob
    _team(url, "unshare", session, "bob")
    assert _http.get(a.api_url + f"/sessions/{session}", headers=_as(bob)).status_code == 404


def test_the_headless_send_uses_a_users_token_from_the_named_auth_settings(users_pair: Any, tmp_path: Path) -> None:
    a, _b, _url, alice, _bob = users_pair
    env = {k: v for k, v in os.environ.items() if not k.startswith("REWINDTUI_")}
    env.update({"ALICE_TOKEN": alice, "REWINDTUI_DATA_DIR": str(tmp_path / "client")})
    done = subprocess.run(
        [sys.executable, "-m", "rewindtui", "send", "--url", a.agent_url, "--bearer-env", "ALICE_TOKEN", "hi there"],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    session = done.stdout.splitlines()[0].split("session: ", 1)[1].strip()
    row = _http.get(a.api_url + f"/sessions/{session}", headers=_as(alice)).json()["data"]
    assert row["user_id"] == "alice"


def _grpc_address(replica: Served) -> str:
    card = _http.get(replica.agent_url + ".well-known/agent-card.json").json()
    [address] = [i["url"] for i in card.get("supportedInterfaces", []) if i.get("protocolBinding") == "GRPC"]
    return address


def test_grpc_takes_the_users_tokens_and_their_shares(users_pair: Any, tmp_path: Path) -> None:
    """The gRPC binding of a server with users: a user's token (metadata ``authorization``), the
    same sessions and shares as over HTTP (server/http/grpc_users.py)."""
    import grpc
    from a2a.types import a2a_pb2 as pb
    from a2a.types import a2a_pb2_grpc

    a, b, url, alice, bob = users_pair
    session = f"grpc-{uuid.uuid4().hex[:8]}"

    def meta(token: str | None, **extra: str) -> list[tuple[str, str]]:
        out = [("a2a-version", "1.0"), *extra.items()]
        return out + ([("authorization", f"Bearer {token}")] if token else [])

    def message(text: str) -> pb.SendMessageRequest:
        return pb.SendMessageRequest(
            message=pb.Message(
                message_id=str(uuid.uuid4()), context_id=session, role=pb.ROLE_USER, parts=[pb.Part(text=text)]
            )
        )

    async def run() -> None:
        async with grpc.aio.insecure_channel(_grpc_address(a)) as ca, grpc.aio.insecure_channel(_grpc_address(b)) as cb:
            on_a, on_b = a2a_pb2_grpc.A2AServiceStub(ca), a2a_pb2_grpc.A2AServiceStub(cb)
            # no token, or not a user's token: UNAUTHENTICATED, nothing stored
            for token in (None, "rwt_not-a-token"):
                with pytest.raises(grpc.aio.AioRpcError) as refused:
                    await on_a.SendMessage(message("no"), metadata=meta(token))
                assert refused.value.code() == grpc.StatusCode.UNAUTHENTICATED
                assert "rewindtui team token" in (refused.value.details() or "")
            # alice's turn over gRPC on A, read back over HTTP from B: hers
            sent = await on_a.SendMessage(message("one over grpc"), metadata=meta(alice))
            assert sent.task.status.state == pb.TASK_STATE_COMPLETED, sent
            task_id = sent.task.id
            row = _http.get(b.api_url + f"/sessions/{session}", headers=_as(alice)).json()["data"]
            assert row["user_id"] == "alice"
            # bob, even claiming to be alice, does not see it
            for stub in (on_a, on_b):
                with pytest.raises(grpc.aio.AioRpcError) as unknown:
                    await stub.GetTask(pb.GetTaskRequest(id=task_id), metadata=meta(bob, **{"x-user-id": "alice"}))
                assert unknown.value.code() == grpc.StatusCode.NOT_FOUND
            listed = await on_b.ListTasks(pb.ListTasksRequest(), metadata=meta(bob))
            assert task_id not in [t.id for t in listed.tasks]
            # a read share: bob reads, cannot send
            await asyncio.to_thread(_team, url, "share", session, "bob", "--mode", "read")
            got = await on_b.GetTask(pb.GetTaskRequest(id=task_id), metadata=meta(bob))
            assert got.id == task_id and got.status.state == pb.TASK_STATE_COMPLETED
            with pytest.raises(grpc.aio.AioRpcError) as read_only:
                await on_b.SendMessage(message("bob reads only"), metadata=meta(bob))
            assert "shared with you read-only" in (read_only.value.details() or "")
            # a writable share: bob's turn lands in alice's session
            await asyncio.to_thread(_team, url, "share", session, "bob", "--mode", "write")
            written = await on_b.SendMessage(message("from bob over grpc"), metadata=meta(bob))
            assert written.task.status.state == pb.TASK_STATE_COMPLETED, written
            # revoked: within the token cache's seconds bob's calls end UNAUTHENTICATED
            await asyncio.to_thread(_team, url, "revoke", "bob")

            async def refused_now() -> bool:
                try:
                    await on_b.ListTasks(pb.ListTasksRequest(), metadata=meta(bob))
                except grpc.aio.AioRpcError as exc:
                    return exc.code() == grpc.StatusCode.UNAUTHENTICATED
                return False

            for _ in range(100):
                if await refused_now():
                    break
                await asyncio.sleep(0.1)
            else:
                raise AssertionError("bob's revoked token still works over gRPC")

    asyncio.run(run())
    tasks = _http.get(a.api_url + f"/sessions/{session}/tasks", headers=_as(alice)).json()["data"]
    texts = [p.get("text") for t in tasks for m in t.get("history", []) if m["role"] == "user" for p in m["parts"]]
    assert texts == ["one over grpc", "from bob over grpc"]  # the read-only send stored nothing
    # the headless client, as a user would: --binding grpc with the token from the named-auth settings
    env = {k: v for k, v in os.environ.items() if not k.startswith("REWINDTUI_")}
    env.update({"ALICE_TOKEN": alice, "REWINDTUI_DATA_DIR": str(tmp_path / "client")})
    done = subprocess.run(
        [sys.executable, "-m", "rewindtui", "send", "--url", a.agent_url, "--binding", "grpc"]
        # --grpc-same-host: the card's gRPC port is another origin; the token goes there only if told
        + ["--bearer-env", "ALICE_TOKEN", "--grpc-same-host", "hello over grpc"],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    assert "You said: hello over grpc" in done.stdout
