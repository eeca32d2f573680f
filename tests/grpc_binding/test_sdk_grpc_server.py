"""The gRPC binding against a plain a2a-sdk server that offers only gRPC (``grpc_servers.py``):
the client takes gRPC from the card (today: "offers only gRPC" refused), streams a turn, reads
the session's history with ``ListTasks`` (paged by context), stops a turn with ``CancelTask``,
follows a running one with ``SubscribeToTask``, and refuses rewind, which the card does not offer,
as over any binding. Credentials go to the gRPC port of the configured host, and no
further."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from grpc_servers import grpc_only_app

from asgi_thread import ServeInThread
from rewindtui.a2a.classify import EventKind
from rewindtui.chat import Chat
from rewindtui.client.a2a_client import A2AClient, RpcError, ServerConfig
from rewindtui.client.transports.grpc import GrpcCredentialsWithheld
from rewindtui.model import ItemKind

pytestmark = pytest.mark.timeout(60)


@pytest.fixture
def seen() -> list[dict[str, str]]:
    return []


@pytest.fixture
def served(seen):
    server = ServeInThread(grpc_only_app(seen)).start()
    yield server
    server.stop()


def config(url: str, tmp_path: Path, **kw) -> ServerConfig:
    return ServerConfig(url=url, local_store=tmp_path / "sessions.db", **kw)


async def test_credentials_are_not_sent_to_a_grpc_port_the_user_did_not_configure(served, seen, tmp_path):
    """The card (read from the configured origin) names gRPC on another port of the same host:
    the connection is refused, naming both origins and the setting, and nothing is sent there."""
    headers = {"Authorization": "Bearer grpc-secret-1"}
    async with A2AClient(config(served.url + "/", tmp_path, credentials=headers, user_id="ann")) as client:
        with pytest.raises(GrpcCredentialsWithheld) as refused:
            await client.connect()
    text = f"{refused.value} {refused.value.hint}"
    assert "gRPC at http://127.0.0.1:" in text and f"the host you configured ({served.url})" in text
    assert "Authorization and X-User-Id" in text and "REWINDTUI_GRPC_SAME_HOST=1" in text and "--grpc-same-host" in text
    assert "grpc-secret-1" not in text
    assert seen == []  # no call reached the gRPC port
    # without credentials or a user id there is nothing to withhold: used as it is
    async with A2AClient(config(served.url + "/", tmp_path / "anonymous")) as client:
        assert (await client.connect()).binding == "GRPC"


async def test_a_grpc_only_card_is_used_over_grpc(served, seen, tmp_path):
    headers = {"Authorization": "Bearer grpc-secret-1"}
    async with A2AClient(config(served.url + "/", tmp_path, credentials=headers, user_id="ann")) as client:
        client.scope.grpc_same_host = True  # the user allowed it (--grpc-same-host)
        caps = await client.connect()
        assert caps.binding == "GRPC" and caps.endpoint.startswith("127.0.0.1:")
        chat = Chat(client)
        await chat.open(None)
        await chat.send("hello there")
        await chat.send("and again")
        assert chat.conversation.turn_state == "completed"
        answers = [i.text for i in chat.conversation.items if i.kind is ItemKind.ARTIFACT]
        assert answers == ["You said: hello there (turn 1)", "You said: and again (turn 2)"]
        allowed = chat.permissions()  # the card offers no rewind: the one gate says so
        assert not allowed.can_rewind and "does not support rewind" in allowed.rewind_reason
        sid = chat.session_id
    # the configured host's gRPC port, allowed, got the credentials, the version and the user id
    assert seen and all(m.get("authorization") == "Bearer grpc-secret-1" for m in seen)
    assert all(m.get("a2a-version") == "1.0" and m.get("x-user-id") == "ann" for m in seen)
    # history: ListTasks by context over gRPC, one page at a time
    async with A2AClient(config(served.url + "/", tmp_path)) as client:
        first = await client.list_tasks(sid, page_size=1)
        assert len(first.tasks) == 1 and first.next_page_token
        second = await client.list_tasks(sid, page_size=1, page_token=first.next_page_token)
        assert len(second.tasks) == 1 and second.tasks[0]["id"] != first.tasks[0]["id"]
        again = Chat(client)
        await again.open(sid)
        texts = [i.text for i in again.conversation.items if i.role == "agent"]
        assert texts == ["You said: hello there (turn 1)", "You said: and again (turn 2)"]


async def test_stop_subscribe_and_errors_over_grpc(served, tmp_path):
    async with A2AClient(config(served.url + "/", tmp_path)) as client:
        chat = Chat(client)
        await chat.open(None)
        await chat.send("warm up")
        running = asyncio.ensure_future(chat.send("a slow one with quite a few words to say " * 3))
        while not any(i.kind is ItemKind.ARTIFACT and i.text for i in chat.conversation.items[2:]):
            await asyncio.sleep(0.01)
        task_id = chat.conversation.items[-1].task_id
        # a second reader follows the running task (SubscribeToTask)
        async with A2AClient(config(served.url + "/", tmp_path / "other")) as other:
            follower = other.subscribe(task_id)
            first = await follower.__anext__()
            assert first.kind in (EventKind.TASK, EventKind.STATUS, EventKind.ARTIFACT)
            await chat.stop(grace=3.0)  # CancelTask over gRPC
            states = [e.body.get("status", {}).get("state") async for e in follower if e.kind is not EventKind.ARTIFACT]
        await running
        assert chat.conversation.turn_state == "canceled"
        assert "TASK_STATE_CANCELED" in states
        task = await client.get_task(task_id)
        assert task["status"]["state"] == "TASK_STATE_CANCELED"
        # an A2A error answer reads as over JSON-RPC: the same code, RpcError
        with pytest.raises(RpcError) as missing:
            await client.get_task("no-such-task")
        assert missing.value.code == -32001
        with pytest.raises(RpcError) as done:
            await client.cancel_task(task_id)
        assert done.value.code == -32002


def test_send_push_is_refused_before_sending_when_the_card_offers_none(served, seen, tmp_path, monkeypatch, capsys):
    from clirun import isolate, runner

    isolate(tmp_path, monkeypatch)
    run = runner(capsys, "--url", served.url + "/")
    refused = run("send", "--push", "hello")
    assert refused.rc == 1 and "does not offer push notifications" in refused.err
    assert seen == []  # nothing reached the gRPC server
    sent = run("send", "hello")  # the same over gRPC without --push
    assert sent.rc == 0 and "You said: hello (turn 1)" in sent.out
    assert len(seen) == 1


def test_the_cli_refuses_then_allows_with_the_setting(served, seen, tmp_path, monkeypatch, capsys):
    """``rewindtui send`` with a token: refused (exit 1, both origins and the setting named);
    with ``--grpc-same-host`` or ``REWINDTUI_GRPC_SAME_HOST=1`` the gRPC port gets the token."""
    from clirun import isolate, runner

    isolate(tmp_path, monkeypatch)
    monkeypatch.setenv("AGENT_TOKEN", "grpc-secret-2")
    run = runner(capsys, "--url", served.url + "/", "--bearer-env", "AGENT_TOKEN")
    refused = run("send", "hello")
    assert refused.rc == 1 and "REWINDTUI_GRPC_SAME_HOST=1" in refused.err and served.url in refused.err
    assert "grpc-secret-2" not in refused.err and seen == []
    allowed = run("send", "--json", "--grpc-same-host", "hello")
    assert allowed.rc == 0, allowed.err
    monkeypatch.setenv("REWINDTUI_GRPC_SAME_HOST", "1")
    by_env = run("send", "--json", "again")
    assert by_env.rc == 0, by_env.err
    assert seen and all(m.get("authorization") == "Bearer grpc-secret-2" for m in seen)
