"""rewindtui's kagent 1.0 profile against the controller double (controller_double.py, built on
kagent's compiled descriptors): sessions over gRPC-Web (SessionService), history over A2A 1.0
ListTasks, turns over A2A at /agents/{ns}/{name}, and rewind as a fork from the checkpoint after
turn N-1 -- all running the embedded agent's real code."""

from __future__ import annotations

import uuid
from typing import Any

import pytest

from rewindtui.a2a.dialect import norm_state
from rewindtui.chat.history import History
from rewindtui.client.a2a_client import A2AClient, ServerConfig
from rewindtui.kagent1.controller import READY, SUSPENDED, UNVERIFIED, CheckpointAdvanced, Kagent1Controller
from rewindtui.kagent1.grpcweb import GrpcError
from rewindtui.kagent1.rewind import Kagent1Rewind, RewindRefused, preview
from rewindtui.model import extract_messages_from_tasks

AGENT = "kagent/helper"


def a2a(base: str, user: str = "alice", token: str | None = None) -> A2AClient:
    headers = {"X-Share-Token": token} if token else {}
    return A2AClient(ServerConfig(url=f"{base}/agents/{AGENT}", user_id=user, headers=headers))


async def turn(client: A2AClient, context_id: str, text: str) -> str:
    """One turn; the final task state."""
    return (await turn_task(client, context_id, text))[0]


async def turn_task(client: A2AClient, context_id: str, text: str) -> tuple[str, str]:
    """One turn; (the final task state, the task's id)."""
    await client.connect()
    state = task_id = ""
    async for event in client.stream(client.build_message(text, session_id=context_id)):
        body = event.body if isinstance(event.body, dict) else {}
        status = body.get("status")
        if isinstance(status, dict) and status.get("state"):
            state = norm_state(status["state"])
            task_id = body.get("taskId") or body.get("id") or task_id
    return state, task_id


async def tasks_of(client: A2AClient, context_id: str) -> list[dict[str, Any]]:
    await client.connect()
    return await History(client, None).list_all_tasks(context_id)


async def agent_texts(client: A2AClient, context_id: str) -> list[str]:
    items = extract_messages_from_tasks(await tasks_of(client, context_id))
    return [i.text for i in items if i.role == "agent" and i.text]


async def conversation(
    controller: Kagent1Controller, client: A2AClient, rewind: Kagent1Rewind, texts: list[str]
) -> str:
    made = await controller.create_session(AGENT, request_id=str(uuid.uuid4()))
    made = await controller.open(made.id)
    for n, text in enumerate(texts, 1):
        state, task_id = await turn_task(client, made.context_id, text)
        await rewind.after_turn(made.id, n, state, task_id)
    return made.id


async def test_conversations_list_create_rename_delete_resume(kagent1):
    double, base = kagent1
    async with Kagent1Controller(base, user_id="alice") as c:
        request_id = str(uuid.uuid4())
        made = await c.create_session(AGENT, name="first", request_id=request_id)
        again = await c.create_session(AGENT, name="first", request_id=request_id)
        assert again.id == made.id  # a retry with the same request_id never makes two
        seen: list[str] = []
        ready = await c.wait_ready(made.id, progress=seen.append)
        assert ready.state == READY and seen  # it was waited for, with progress
        others = [await c.create_session(AGENT, name=f"n{i}") for i in range(3)]
        listed = await c.list_sessions(AGENT, limit=2)
        assert len(listed.sessions) == 2 and listed.next_page_token  # paged
        everything = await c.all_sessions(AGENT, limit=2)
        assert {i.id for i in everything} >= {made.id, *(o.id for o in others)}
        assert (await c.rename(made.id, "renamed")).name == "renamed"
        await c.suspend(made.id)
        assert (await c.get_session(made.id)).state == SUSPENDED
        opened = await c.open(made.id)  # a suspended conversation is resumed on open
        assert opened.state == READY
        await c.delete(made.id)
        assert made.id not in {i.id for i in await c.all_sessions(AGENT)}
        with pytest.raises(GrpcError) as info:
            await c.get_session(made.id)
        assert info.value.code == "NOT_FOUND"
    async with Kagent1Controller(base, user_id="bob") as other:
        assert not {i.id for i in await other.all_sessions(AGENT)} & {o.id for o in others}


async def test_history_over_list_tasks(kagent1):
    double, base = kagent1
    async with Kagent1Controller(base, user_id="alice") as c, a2a(base) as client:
        rewind = Kagent1Rewind(c, AGENT)
        iid = await conversation(c, client, rewind, ["one", "weather in Oslo", "three"])
        tasks = await tasks_of(client, iid)
        assert len(tasks) == 3
        texts = await agent_texts(client, iid)
        assert texts[-1].startswith("You said: three (turn 3; history: ['one', 'weather in Oslo', 'three']")


async def test_rewind_is_a_fork_from_the_checkpoint_and_undo_goes_back(kagent1):
    double, base = kagent1
    async with Kagent1Controller(base, user_id="alice") as c, a2a(base) as client:
        rewind = Kagent1Rewind(c, AGENT)
        iid = await conversation(c, client, rewind, ["one", "two", "three"])
        assert await rewind.rewindable_turns(iid) == [2, 3, 4]
        assert preview(3) == "kagent forks: a new session from turn 2; the original is kept"
        branch = await rewind.rewind(iid, 3)
        fork = branch.fork
        assert fork.id != iid and fork.context_id != iid and branch.original == iid
        # the agent's next answer on the fork shows the history from before turn 3
        await turn(client, fork.context_id, "again")
        assert (await agent_texts(client, fork.context_id))[-1].startswith(
            "You said: again (turn 3; history: ['one', 'two', 'again']"
        )
        fork_task_ids = {t["id"] for t in await tasks_of(client, fork.context_id)}
        assert not fork_task_ids & {t["id"] for t in await tasks_of(client, iid)}  # new task ids
        # undo: back to the original, which kept all three turns
        assert rewind.fork_of(fork.id) is not None and rewind.undo(fork.id) == iid
        assert rewind.fork_of(fork.id) is None  # undone: the record went (the fork stays)
        assert (await agent_texts(client, iid))[-1].startswith(
            "You said: three (turn 3; history: ['one', 'two', 'three']"
        )
        assert "checkpoint" in rewind.costs() and "fork" in rewind.costs()


async def test_checkpoints_are_idempotent_per_turn(kagent1):
    double, base = kagent1
    async with Kagent1Controller(base, user_id="alice") as c, a2a(base) as client:
        rewind = Kagent1Rewind(c, AGENT)
        iid = await conversation(c, client, rewind, ["one"])
        head = (await tasks_of(client, iid))[-1]["id"]
        again = await rewind.after_turn(iid, 1, "completed", head)
        assert again.checkpoint is not None and again.checkpoint.head_task_id == head
        assert [cp.id for cp in await c.checkpoints(iid)] == [again.checkpoint.id]
        # the same request id for another boundary: kagent's ALREADY_EXISTS
        with pytest.raises(GrpcError) as info:
            await c.checkpoint(iid, f"rewindtui-{iid}-turn-1", "some-other-task")
        assert info.value.code == "ALREADY_EXISTS" and UNVERIFIED in info.value.message


async def test_a_checkpoint_is_refused_while_a_question_waits(kagent1):
    double, base = kagent1
    async with Kagent1Controller(base, user_id="alice") as c, a2a(base) as client:
        rewind = Kagent1Rewind(c, AGENT)
        iid = await conversation(c, client, rewind, ["one"])
        state, task_id = await turn_task(client, iid, "please delete notes.txt")
        assert state == "input-required"
        skipped = await rewind.after_turn(iid, 2, state, task_id)
        assert skipped.checkpoint is None and "input-required" in skipped.note and "waiting for input" in skipped.note
        # the controller itself refuses it too (the head task is not terminal)
        with pytest.raises(GrpcError) as info:
            await c.checkpoint(iid, "by-hand", task_id)
        assert (
            info.value.code == "FAILED_PRECONDITION" and "not terminal" in info.value.message and not info.value.reason
        )
        off = Kagent1Rewind(c, AGENT, auto_checkpoints=False)
        assert (await off.after_turn(iid, 2, "completed")).note == "auto-checkpoints are off"


async def test_a_failed_fork_leaves_everything_as_it_was(kagent1):
    double, base = kagent1
    async with Kagent1Controller(base, user_id="alice") as c, a2a(base) as client:
        rewind = Kagent1Rewind(c, AGENT)
        iid = await conversation(c, client, rewind, ["one", "two"])
        before = set(double.sessions)
        double.fail_next_fork = "out of sandbox capacity"
        with pytest.raises(RewindRefused) as info:
            await rewind.rewind(iid, 2)
        assert str(info.value).startswith("the fork failed: out of sandbox capacity") and str(info.value).endswith(
            "; nothing changed"
        )
        assert set(double.sessions) == before
        with pytest.raises(RewindRefused, match="before the first turn"):
            await rewind.rewind(iid, 1)


async def test_a_read_only_share_reads_but_cannot_send(kagent1):
    double, base = kagent1
    async with Kagent1Controller(base, user_id="alice") as c, a2a(base) as client:
        iid = await conversation(c, client, Kagent1Rewind(c, AGENT), ["one", "two"])
        share, token = await c.share(iid, read_only=True)
        assert token and share.session_id == iid
    async with (
        Kagent1Controller(base, user_id="carol", share_token=token) as shared,
        a2a(base, "carol", token) as reader,
    ):
        assert (await shared.get_session(iid)).id == iid
        assert len(await tasks_of(reader, iid)) == 2
        from rewindtui.client.errors import ClientError

        with pytest.raises(ClientError) as info:
            await turn(reader, iid, "three")
        assert "403" in str(info.value) or "read-only" in str(info.value)
    async with a2a(base) as owner:
        assert len(await tasks_of(owner, iid)) == 2  # nothing was sent


async def test_native_grpc_and_grpc_web_reach_the_same_controller(kagent1):
    """A deployment exposing the gRPC port: the same calls over native gRPC (grpcio)."""
    from controller_double import NativeGrpc

    double, base = kagent1
    with NativeGrpc(double) as native:
        async with (
            Kagent1Controller(f"grpc://127.0.0.1:{native.port}", user_id="erin") as grpc_c,
            Kagent1Controller(base, user_id="erin") as web,
        ):
            made = await grpc_c.create_session(AGENT, name="over grpc")
            assert (await web.get_session(made.id)).name == "over grpc"
            assert made.id in {i.id for i in await grpc_c.all_sessions(AGENT)}
            with pytest.raises(GrpcError) as info:
                await grpc_c.get_session("no-such-session")
            assert info.value.code == "NOT_FOUND" and "not found" in info.value.message
            async with a2a(base, "erin") as client:
                await grpc_c.open(made.id)
                state = await turn(client, made.context_id, "one")
                _, head = await turn_task(client, made.context_id, "two")
                double.pending_snapshots = 1  # its ErrorInfo travels in the native trailers too
                checkpoint = await grpc_c.checkpoint(made.id, "native-1", head)
                assert state == "completed" and checkpoint.history_sequence == 2
                assert grpc_c.costs[-1][2] == 2  # retried once
                with pytest.raises(CheckpointAdvanced):
                    await grpc_c.checkpoint(made.id, "native-2", "an-old-task")


async def test_a_pending_snapshot_is_retried_with_the_same_request(kagent1):
    """KAGENT_CHECKPOINT_SNAPSHOT_PENDING (service/checkpoint/service.go@105cc5d7): the same
    request and task ids again; CONVERSATION_ADVANCED: CheckpointAdvanced (re-read, choose again)."""
    double, base = kagent1
    async with Kagent1Controller(base, user_id="alice") as c, a2a(base) as client:
        iid = await conversation(c, client, Kagent1Rewind(c, AGENT, auto_checkpoints=False), ["one"])
        head = (await tasks_of(client, iid))[-1]["id"]
        double.pending_snapshots = 2
        before = len(double.received)
        checkpoint = await c.checkpoint(iid, "retry-me", head)
        sent = [m for name, _, m in double.received[before:] if name == "CreateCheckpoint"]
        assert len(sent) == 3 and {(m.session_id, m.request_id, m.expected_head_task_id) for m in sent} == {
            (iid, "retry-me", head)
        }
        assert checkpoint.head_task_id == head and c.costs[-1][0] == "checkpoint" and c.costs[-1][2] == 3
        double.pending_snapshots = 5
        with pytest.raises(GrpcError) as info:  # bounded: at most `tries`, then the refusal itself
            await c.checkpoint(iid, "still-pending", head, tries=2, delay=0.01)
        assert info.value.reason == "KAGENT_CHECKPOINT_SNAPSHOT_PENDING" and info.value.domain == "kagent.dev"
        double.pending_snapshots = 0
        await turn(client, iid, "two")
        with pytest.raises(CheckpointAdvanced):
            await c.checkpoint(iid, "too-late", head)


async def test_after_an_advanced_conversation_the_client_chooses_again(kagent1):
    """The turn's own checkpoint comes too late (another turn ran): the client re-reads the
    session and checkpoints its head now."""
    from rewindtui.kagent1.client import Kagent1Client

    double, base = kagent1
    async with Kagent1Controller(base, user_id="alice") as c:
        client = Kagent1Client(ServerConfig(url=f"{base}/agents/{AGENT}", user_id="alice"), c, AGENT)
        await client.connect()
        made = await c.open((await c.create_session(AGENT)).id)
        client.rewinder.auto_checkpoints = False  # the two turns run with none taken ...
        _, first = await turn_task(client, made.id, "one")
        _, second = await turn_task(client, made.id, "two")
        client.rewinder.auto_checkpoints = True  # ... then turn one's arrives late
        outcome = await client.checkpoint_after(made.id, first, "completed")
        assert outcome.checkpoint is not None and outcome.checkpoint.head_task_id == second
        await client.aclose()


async def test_shares_go_in_x_share_token_and_are_listed_and_revoked(kagent1):
    """interceptors.go@21559195: the share token beside the login, never as one."""
    double, base = kagent1
    async with Kagent1Controller(base, user_id="alice") as c, a2a(base) as client:
        iid = await conversation(c, client, Kagent1Rewind(c, AGENT, auto_checkpoints=False), ["one"])
        share, token = await c.share(iid, read_only=True)
        other, _ = await c.share(iid, read_only=False)
        assert {s.id for s in await c.shares(iid)} == {share.id, other.id}
    async with Kagent1Controller(base, user_id="carol", share_token=token) as shared:
        assert (await shared.get_session(iid)).id == iid
        name, headers, _ = double.received[-1]
        assert name == "GetSession" and headers["x-share-token"] == token and "authorization" not in headers
        with pytest.raises(GrpcError) as info:  # a read-only share may only read
            await shared.rename(iid, "mine now")
        assert info.value.code == "PERMISSION_DENIED" and "read-only" in info.value.message
    async with Kagent1Controller(base, user_id="carol", headers={"Authorization": f"Bearer {token}"}) as wrong:
        with pytest.raises(GrpcError) as info:  # what the old client did: a share as a credential
            await wrong.get_session(iid)
        assert info.value.code == "UNAUTHENTICATED"
    async with Kagent1Controller(base, user_id="alice") as c:
        await c.revoke_share(share.id)
        assert [s.id for s in await c.shares(iid)] == [other.id]
    async with Kagent1Controller(base, user_id="carol", share_token=token) as revoked:
        with pytest.raises(GrpcError) as info:
            await revoked.get_session(iid)
        assert info.value.code == "PERMISSION_DENIED"


async def test_checkpoints_are_named_renamed_deleted_and_forked_from(kagent1):
    """kagent 1.0's UI: a session's checkpoints with names; rename, delete, fork from any."""
    double, base = kagent1
    async with Kagent1Controller(base, user_id="alice") as c, a2a(base) as client:
        rewind = Kagent1Rewind(c, AGENT)
        iid = await conversation(c, client, rewind, ["one", "two", "three"])
        listed = await c.checkpoints(iid)
        assert [cp.name for cp in listed] == ["After turn 1", "After turn 2", "After turn 3"]
        renamed = await c.rename_checkpoint(listed[0].id, "before the detour")
        assert renamed.name == "before the detour" and (await c.checkpoints(iid))[0].name == "before the detour"
        assert (await c.rename_checkpoint(listed[0].id, "")).name == "After turn 1"  # empty: the generated name
        branch = await rewind.fork_from(iid, listed[0], 2)
        assert branch.fork.id not in (iid, "") and rewind.fork_of(branch.fork.id) is not None
        assert (await agent_texts(client, branch.fork.context_id))[-1].startswith("You said: one")
        with pytest.raises(GrpcError) as info:  # a checkpoint a fork came from stays
            await c.delete_checkpoint(listed[0].id)
        assert info.value.code == "FAILED_PRECONDITION"
        await c.delete_checkpoint(listed[2].id)
        assert [cp.id for cp in await c.checkpoints(iid)] == [listed[0].id, listed[1].id]
