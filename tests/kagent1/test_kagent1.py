"""rewindtui's kagent 1.0 profile against the controller double (controller_double.py): conversations
over gRPC-Web, history over A2A 1.0 ListTasks, turns over A2A at /agents/{ns}/{name}, and rewind
as a fork from the checkpoint after turn N-1 -- all running the embedded agent's real code."""

from __future__ import annotations

import uuid
from typing import Any

import pytest

from rewindtui.a2a.dialect import norm_state
from rewindtui.chat.history import History
from rewindtui.client.a2a_client import A2AClient, ServerConfig
from rewindtui.kagent1.controller import READY, SUSPENDED, Kagent1Controller
from rewindtui.kagent1.grpcweb import GrpcError
from rewindtui.kagent1.rewind import Kagent1Rewind, RewindRefused, preview
from rewindtui.model import extract_messages_from_tasks

AGENT = "kagent/helper"


def a2a(base: str, user: str = "alice", token: str | None = None) -> A2AClient:
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    return A2AClient(ServerConfig(url=f"{base}/agents/{AGENT}", user_id=user, headers=headers))


async def turn(client: A2AClient, context_id: str, text: str) -> str:
    """One turn; the final task state."""
    await client.connect()
    state = ""
    async for event in client.stream(client.build_message(text, session_id=context_id)):
        body = event.body if isinstance(event.body, dict) else {}
        status = body.get("status")
        if isinstance(status, dict) and status.get("state"):
            state = norm_state(status["state"])
    return state


async def tasks_of(client: A2AClient, context_id: str) -> list[dict[str, Any]]:
    await client.connect()
    return await History(client, None).list_all_tasks(context_id)


async def agent_texts(client: A2AClient, context_id: str) -> list[str]:
    items = extract_messages_from_tasks(await tasks_of(client, context_id))
    return [i.text for i in items if i.role == "agent" and i.text]


async def conversation(controller: Kagent1Controller, client: A2AClient, rewind: Kagent1Rewind, texts: list[str]) -> str:
    inst = await controller.create_instance(AGENT, request_id=str(uuid.uuid4()))
    inst = await controller.open(inst.id)
    for n, text in enumerate(texts, 1):
        state = await turn(client, inst.context_id, text)
        await rewind.after_turn(inst.id, n, state)
    return inst.id


async def test_conversations_list_create_rename_delete_resume(kagent1):
    double, base = kagent1
    async with Kagent1Controller(base, user_id="alice") as c:
        request_id = str(uuid.uuid4())
        made = await c.create_instance(AGENT, name="first", request_id=request_id)
        again = await c.create_instance(AGENT, name="first", request_id=request_id)
        assert again.id == made.id  # a retry with the same request_id never makes two
        seen: list[str] = []
        ready = await c.wait_ready(made.id, progress=seen.append)
        assert ready.state == READY and seen  # it was waited for, with progress
        others = [await c.create_instance(AGENT, name=f"n{i}") for i in range(3)]
        listed = await c.list_instances(AGENT, limit=2)
        assert len(listed.instances) == 2 and listed.next_page_token  # paged
        everything = await c.all_instances(AGENT, limit=2)
        assert {i.id for i in everything} >= {made.id, *(o.id for o in others)}
        assert (await c.rename(made.id, "renamed")).name == "renamed"
        await c.suspend(made.id)
        assert (await c.get_instance(made.id)).state == SUSPENDED
        opened = await c.open(made.id)  # a suspended conversation is resumed on open
        assert opened.state == READY
        await c.delete(made.id)
        assert made.id not in {i.id for i in await c.all_instances(AGENT)}
        with pytest.raises(GrpcError) as info:
            await c.get_instance(made.id)
        assert info.value.code == "NOT_FOUND"
    async with Kagent1Controller(base, user_id="bob") as other:
        assert not {i.id for i in await other.all_instances(AGENT)} & {o.id for o in others}


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
        assert (await agent_texts(client, fork.context_id))[-1].startswith("You said: again (turn 3; history: ['one', 'two', 'again']")
        fork_task_ids = {t["id"] for t in await tasks_of(client, fork.context_id)}
        assert not fork_task_ids & {t["id"] for t in await tasks_of(client, iid)}  # new task ids
        # undo: back to the original, which kept all three turns
        assert rewind.fork_of(fork.id) is not None and rewind.undo(fork.id) == iid
        assert rewind.fork_of(fork.id) is None  # undone: the record went (the fork stays)
        assert (await agent_texts(client, iid))[-1].startswith("You said: three (turn 3; history: ['one', 'two', 'three']")
        assert "checkpoint" in rewind.costs() and "fork" in rewind.costs()


async def test_checkpoints_are_idempotent_per_turn(kagent1):
    double, base = kagent1
    async with Kagent1Controller(base, user_id="alice") as c, a2a(base) as client:
        rewind = Kagent1Rewind(c, AGENT)
        iid = await conversation(c, client, rewind, ["one"])
        again = await rewind.after_turn(iid, 1, "completed")
        assert again.checkpoint is not None
        assert [cp.id for cp in await c.checkpoints("kagent", iid)] == [again.checkpoint.id]


async def test_a_checkpoint_is_refused_while_a_question_waits(kagent1):
    double, base = kagent1
    async with Kagent1Controller(base, user_id="alice") as c, a2a(base) as client:
        rewind = Kagent1Rewind(c, AGENT)
        iid = await conversation(c, client, rewind, ["one"])
        state = await turn(client, iid, "please delete notes.txt")
        assert state == "input-required"
        skipped = await rewind.after_turn(iid, 2, state)
        assert skipped.checkpoint is None and "input-required" in skipped.note
        # the controller itself refuses it too (the head task is not terminal)
        with pytest.raises(GrpcError) as info:
            await c.checkpoint("kagent", iid, "by-hand")
        assert info.value.code == "FAILED_PRECONDITION" and "not terminal" in info.value.message
        off = Kagent1Rewind(c, AGENT, auto_checkpoints=False)
        assert (await off.after_turn(iid, 2, "completed")).note == "auto-checkpoints are off"


async def test_a_failed_fork_leaves_everything_as_it_was(kagent1):
    double, base = kagent1
    async with Kagent1Controller(base, user_id="alice") as c, a2a(base) as client:
        rewind = Kagent1Rewind(c, AGENT)
        iid = await conversation(c, client, rewind, ["one", "two"])
        before = set(double.instances)
        double.fail_next_fork = "out of sandbox capacity"
        with pytest.raises(RewindRefused) as info:
            await rewind.rewind(iid, 2)
        assert str(info.value) == "the fork failed: out of sandbox capacity; nothing changed"
        assert set(double.instances) == before
        with pytest.raises(RewindRefused, match="before the first turn"):
            await rewind.rewind(iid, 1)


async def test_a_read_only_share_reads_but_cannot_send(kagent1):
    double, base = kagent1
    async with Kagent1Controller(base, user_id="alice") as c, a2a(base) as client:
        iid = await conversation(c, client, Kagent1Rewind(c, AGENT), ["one", "two"])
        token = await c.share(iid, read_only=True)
    async with Kagent1Controller(base, user_id="carol", share_token=token) as shared, a2a(base, "carol", token) as reader:
        assert (await shared.get_instance(iid)).id == iid
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
        async with Kagent1Controller(f"grpc://127.0.0.1:{native.port}", user_id="erin") as grpc_c, Kagent1Controller(base, user_id="erin") as web:
            made = await grpc_c.create_instance(AGENT, name="over grpc")
            assert (await web.get_instance(made.id)).name == "over grpc"
            assert made.id in {i.id for i in await grpc_c.all_instances(AGENT)}
            with pytest.raises(GrpcError) as info:
                await grpc_c.get_instance("no-such-instance")
            assert info.value.code == "NOT_FOUND" and "not found" in info.value.message
            async with a2a(base, "erin") as client:
                await grpc_c.open(made.id)
                state = await turn(client, made.context_id, "one")
                await turn(client, made.context_id, "two")
                checkpoint = await grpc_c.checkpoint("kagent", made.id, "native-1")
                assert state == "completed" and checkpoint.history_sequence == 2
