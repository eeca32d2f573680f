"""``rewindtui task get | list | cancel | resubscribe`` and ``rewindtui push set | get | list |
remove | receive`` against a2a-sdk's own server (``full_servers.full_app``): A2A 1.0 over JSON-RPC,
HTTP+JSON and gRPC, and a server speaking A2A 0.3 only (JSON-RPC). Push notifications are sent by
a2a-sdk's ``BasePushNotificationSender`` to ``push receive``'s receiver."""

from __future__ import annotations

import asyncio
import json
import os
import threading
from collections.abc import Iterator
from types import SimpleNamespace

import httpx
import pytest
from full_servers import full_app

from asgi_thread import ServeInThread
from clirun import isolate, runner
from rewindtui.a2a.classify import EventKind
from rewindtui.a2a.dialect import Dialect
from rewindtui.client.a2a_client import A2AClient, ServerConfig

pytestmark = [pytest.mark.slow, pytest.mark.timeout(60)]

LANES = [("JSONRPC", "1.0"), ("HTTP+JSON", "1.0"), ("GRPC", "1.0"), ("JSONRPC", "0.3")]


@pytest.fixture(scope="module", params=LANES, ids=lambda lane: f"{lane[0]}-{lane[1]}")
def lane(request) -> Iterator[SimpleNamespace]:
    binding, dialect = request.param
    served = ServeInThread(factory=lambda url: full_app(url + "/", only_03=dialect == "0.3")).start()
    try:
        yield SimpleNamespace(url=served.url + "/", binding=binding, dialect=dialect)
    finally:
        served.stop()


@pytest.fixture
def run(lane, tmp_path, monkeypatch, capsys):
    isolate(tmp_path, monkeypatch)
    flags = ["--url", lane.url] + (["--binding", lane.binding] if lane.dialect == "1.0" else [])
    return runner(capsys, *flags)


def client_of(lane) -> A2AClient:
    binding = lane.binding if lane.dialect == "1.0" else None
    return A2AClient(ServerConfig(url=lane.url, binding=binding, dialect=Dialect.parse(lane.dialect)))


async def start_turn(lane, text: str) -> tuple[str, str, asyncio.Task]:
    """Send ``text``; return (task id, context id, the task reading the rest of its stream)."""
    client = client_of(lane)
    await client.connect()
    events = client.stream(client.build_message(text, session_id=None))
    first = await events.__anext__()
    assert first.kind is EventKind.TASK

    async def rest() -> None:
        try:
            async for _ in events:
                pass
        finally:
            await client.aclose()

    return first.body["id"], first.body["contextId"], asyncio.ensure_future(rest())


def answer(task: dict) -> str:
    return "".join(p.get("text", "") for a in task.get("artifacts") or () for p in a.get("parts") or ())


def state(task: dict) -> str:
    return str(task["status"]["state"]).lower().replace("task_state_", "").replace("_", "-")


async def test_get_list_and_cancel_by_id(lane, run):
    task_id, context_id, reading = await start_turn(lane, "hello there")
    await reading
    got = await asyncio.to_thread(run, "task", "get", task_id, "--json")
    assert got.rc == 0, got.err
    (task,) = got.records()
    assert task["id"] == task_id and state(task) == "completed" and answer(task) == "You said: hello there (turn 1)"
    text = await asyncio.to_thread(run, "task", "get", task_id)
    assert text.rc == 0 and text.lines[0].startswith(f"{task_id}  completed  context {context_id}")

    listed = await asyncio.to_thread(run, "task", "list", "--context-id", context_id, "--json")
    if lane.dialect == "0.3":
        assert listed.rc == 1 and "A2A 0.3 has no tasks/list" in listed.out
    else:
        assert listed.rc == 0, listed.err
        assert [t["id"] for t in listed.records()] == [task_id]

    slow_id, _, reading = await start_turn(lane, "slow " * 30)
    cancelled = await asyncio.to_thread(run, "task", "cancel", slow_id, "--json")
    assert cancelled.rc == 0, cancelled.err
    await reading
    after = await asyncio.to_thread(run, "task", "get", slow_id, "--json")
    assert state(after.records()[0]) == "canceled"

    missing = await asyncio.to_thread(run, "task", "get", "no-such-task", "--json")
    assert missing.rc == 1 and missing.records()[0]["error"]["message"]


async def test_resubscribe_follows_a_running_task_to_its_end(lane, run):
    task_id, _, reading = await start_turn(lane, "slow words " * 4)
    followed = await asyncio.to_thread(run, "task", "resubscribe", task_id, "--json")
    await reading
    assert followed.rc == 0, followed.err
    records = followed.records()
    assert records and all(r["kind"] != "error" for r in records)
    last = records[-1]["event"]
    assert state(last) == "completed"
    pieces = "".join(
        p.get("text", "")
        for r in records
        if r["kind"] == "artifact-update"
        for p in r["event"]["artifact"].get("parts", [])
    )
    assert "(turn 1)" in pieces  # the words streamed while we followed, to the last one


async def test_push_configs_set_get_list_remove_and_receive(lane, run, monkeypatch):
    monkeypatch.setenv("HOOK_TOKEN", "tok-" + os.urandom(6).hex())
    ready = threading.Event()
    from rewindtui.cli import tasks_cmd
    from rewindtui.cli.output import Output

    holder: dict = {}

    class Lines:
        def __init__(self) -> None:
            self.lines: list[str] = []

        def write(self, text: str) -> None:
            self.lines += [t for t in text.splitlines() if t]

        def flush(self) -> None:
            pass

    got = Lines()
    args = SimpleNamespace(
        host="127.0.0.1", port=0, path="/hook", token_env="HOOK_TOKEN", forward=None, count=None, until_done=True
    )

    def receiving() -> None:
        asyncio.run(
            tasks_cmd.receive(args, Output(True, stream=got), ready=lambda r: (holder.update(r=r), ready.set()))
        )

    thread = threading.Thread(target=receiving, daemon=True)
    thread.start()
    assert await asyncio.to_thread(ready.wait, 10)
    receiver = holder["r"]
    # a notification without the token is refused by the receiver
    async with httpx.AsyncClient() as http:
        refused = await http.post(receiver.url, json={"task": {"id": "x", "status": {"state": "completed"}}})
    assert refused.status_code == 401

    task_id, _, reading = await start_turn(lane, "slow " * 12)
    made = await asyncio.to_thread(
        run,
        "push",
        "set",
        task_id,
        "--push-url",
        receiver.url,
        "--token-env",
        "HOOK_TOKEN",
        "--config-id",
        "c1",
        "--json",
    )
    assert made.rc == 0, made.err
    (config,) = made.records()
    assert config["url"] == receiver.url and config["id"] == "c1" and config["token"] == "***"
    assert os.environ["HOOK_TOKEN"] not in made.out
    listed = await asyncio.to_thread(run, "push", "list", task_id, "--json")
    assert [c["id"] for c in listed.records()] == ["c1"]
    one = await asyncio.to_thread(run, "push", "get", task_id, "--config-id", "c1", "--json", "--show-token")
    # the server holds the token (the output redacts it anyway: it was registered as a secret here)
    assert one.records()[0]["token"] in (os.environ["HOOK_TOKEN"], "***")
    await reading
    await asyncio.to_thread(thread.join, 30)
    assert not thread.is_alive(), "no notification reached the receiver"
    delivered = [json.loads(line) for line in got.lines]
    assert {d["event"]["taskId"] for d in delivered if d["kind"] != "task"} == {task_id}
    assert delivered[-1]["kind"] == "status-update" and state(delivered[-1]["event"]) == "completed"
    words = "".join(
        p["text"] for d in delivered if d["kind"] == "artifact-update" for p in d["event"]["artifact"]["parts"]
    )
    assert words.endswith("(turn 1)")  # every word after the config was set came by push
    assert receiver.rejected == 1
    removed = await asyncio.to_thread(run, "push", "remove", task_id, "--config-id", "c1", "--json")
    assert removed.rc == 0, removed.out + removed.err
    assert (await asyncio.to_thread(run, "push", "list", task_id, "--json")).records() == []


def test_a_config_is_shown_without_its_secrets_unless_asked():
    from rewindtui.cli.tasks_cmd import shown_config

    config = {
        "id": "c",
        "url": "http://h/",
        "token": "t0k",
        "authentication": {"scheme": "Bearer", "credentials": "s3"},
    }
    assert shown_config(config, False) == {
        **config,
        "token": "***",
        "authentication": {"scheme": "Bearer", "credentials": "***"},
    }
    assert shown_config(config, True) == config


async def test_push_receive_forwards_what_it_accepts_and_stops_at_count():
    """--forward POSTs each accepted notification on as it came (without the token); --count stops."""
    from binding_servers import Recorder, card_only_app

    from rewindtui.cli import tasks_cmd
    from rewindtui.cli.output import Output

    recorder = Recorder()
    target = ServeInThread(card_only_app({"name": "sink"}, recorder)).start()
    printed: list[str] = []

    class Lines:
        def write(self, text: str) -> None:
            printed.extend(t for t in text.splitlines() if t)

        def flush(self) -> None:
            pass

    ready = asyncio.Event()
    holder: dict = {}
    args = SimpleNamespace(
        host="127.0.0.1", port=0, path="/in", token_env=None, forward=target.url + "/out", count=2, until_done=False
    )
    try:
        running = asyncio.ensure_future(
            tasks_cmd.receive(args, Output(True, stream=Lines()), ready=lambda r: (holder.update(r=r), ready.set()))
        )
        await asyncio.wait_for(ready.wait(), 10)
        receiver = holder["r"]
        frames = [
            {"statusUpdate": {"taskId": "t", "contextId": "c", "status": {"state": "TASK_STATE_WORKING"}}},
            {"task": {"id": "t", "contextId": "c", "status": {"state": "TASK_STATE_COMPLETED"}}},
        ]
        async with httpx.AsyncClient() as http:
            refused = await http.post(receiver.url, json=frames[0], headers={"X-A2A-Notification-Token": "wrong"})
            assert refused.status_code == 401
            for frame in frames:
                ok = await http.post(receiver.url, json=frame, headers={"X-A2A-Notification-Token": receiver.token})
                assert ok.status_code == 200
        assert await asyncio.wait_for(running, 10) == 0  # stopped after --count 2
    finally:
        target.stop()
    assert [json.loads(line)["kind"] for line in printed] == ["status-update", "task"]
    forwarded = [s for s in recorder.seen if s.path == "/out"]
    assert len(forwarded) == 2 and all("x-a2a-notification-token" not in s.headers for s in forwarded)
