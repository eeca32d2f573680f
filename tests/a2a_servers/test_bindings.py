"""Both HTTP bindings, end to end over loopback: JSON-RPC and HTTP+JSON, chosen from the card or
forced, against a plain a2a-sdk server serving both (``binding_servers.py``) and against the
embedded server. Files and data go out as parts and come back; history, stop and rewind work
through each binding."""

from __future__ import annotations

import asyncio
import contextlib
from pathlib import Path

import pytest
from binding_servers import REPORT_BYTES, REPORT_NAME, Recorder, both_bindings_app, card_json_10, card_only_app

from asgi_thread import ServeInThread
from kit.servers import embedded_fixture
from rewindtui.a2a.parts import part_bytes, part_info
from rewindtui.chat import Chat
from rewindtui.client.a2a_client import A2AClient, ClientError, RpcError, ServerConfig, Unsupported
from rewindtui.client.attachments import DataAttachment, FileAttachment, attach, save_parts
from rewindtui.model import ItemKind

BINDINGS = ["JSONRPC", "HTTP+JSON"]


@pytest.fixture(scope="module")
def both():
    served = ServeInThread(factory=lambda url: both_bindings_app(url + "/")).start()
    yield served
    served.stop()


@pytest.fixture(scope="module")
def rest_first():
    served = ServeInThread(factory=lambda url: both_bindings_app(url + "/", order=("HTTP+JSON", "JSONRPC"))).start()
    yield served
    served.stop()


embedded = embedded_fixture("bindings-data", scope="module", demo_delay=0.02)


def config(url: str, tmp_path: Path, **kw) -> ServerConfig:
    return ServerConfig(url=url, local_store=tmp_path / "sessions.db", **kw)


def agent_parts(chat: Chat) -> list:
    return [p for i in chat.conversation.items if i.role == "agent" for p in i.other_parts]


def user_parts(chat: Chat) -> list:
    return [p for i in chat.conversation.items if i.role == "user" for p in i.other_parts]


async def test_the_card_order_picks_the_binding(both, rest_first, tmp_path):
    async with A2AClient(config(both.url + "/", tmp_path)) as client:
        caps = await client.connect()
        assert (caps.binding, caps.endpoint) == ("JSONRPC", both.url + "/")
    async with A2AClient(config(rest_first.url + "/", tmp_path)) as client:
        caps = await client.connect()
        assert (caps.binding, caps.endpoint) == ("HTTP+JSON", rest_first.url + "/rest")


@pytest.mark.parametrize("binding", BINDINGS)
async def test_files_and_data_round_trip(both, tmp_path, binding):
    (tmp_path / "notes.md").write_text("# notes\n" * 50)
    attachments = [
        attach(str(tmp_path / "notes.md")),
        attach("https://example.test/paper.pdf"),
        DataAttachment({"priority": 2, "tags": ["a", "b"]}),
    ]
    async with A2AClient(config(both.url + "/", tmp_path, binding=binding)) as client:
        chat = Chat(client)
        await chat.open(None)
        await chat.send("here you go", attachments)
        assert client.capabilities.binding == binding
        assert chat.conversation.turn_state == "completed"
        # what the agent received, as it reports it in its data part
        (data,) = [part_info(p).data for p in agent_parts(chat) if part_info(p).kind == "data"]
        assert data["count"] == 3
        got = {d["kind"]: d for d in data["received"]}
        assert got["raw"]["filename"] == "notes.md" and got["raw"]["size"] == len("# notes\n" * 50)
        assert got["raw"]["mediaType"] == "text/markdown"
        assert got["url"]["url"] == "https://example.test/paper.pdf" and got["url"]["mediaType"] == "application/pdf"
        assert got["data"]["data"] == {"priority": 2, "tags": ["a", "b"]}
        # what it sent back: a file inline, a file by URL, readable without decoding
        infos = {part_info(p).name: part_info(p) for p in agent_parts(chat) if part_info(p).kind == "file"}
        assert infos[REPORT_NAME].size == len(REPORT_BYTES) and infos[REPORT_NAME].media_type == "text/plain"
        assert infos["chart.png"].url == "https://files.example/chart.png" and infos["chart.png"].size is None
        sid = chat.session_id
        # saved to disk: the inline file byte for byte, the data part as JSON, the link reported
        saved = await save_parts(agent_parts(chat), tmp_path / "out")
        assert (tmp_path / "out" / REPORT_NAME).read_bytes() == REPORT_BYTES
        assert [p.name for p in saved.written] == [REPORT_NAME, "data-3.json"]
        assert len(saved.skipped) == 1 and "chart.png is a link" in saved.skipped[0]
    # history through the same binding (ListTasks) gives both sides' parts back
    async with A2AClient(config(both.url + "/", tmp_path, binding=binding)) as client:
        again = Chat(client)
        await again.open(sid)
        assert [part_info(p).name for p in user_parts(again) if part_info(p).kind == "file"] == [
            "notes.md",
            "paper.pdf",
        ]
        assert part_bytes(user_parts(again)[0]) == ("# notes\n" * 50).encode()
        assert [part_info(p).label() for p in agent_parts(again)] == [part_info(p).label() for p in agent_parts(chat)]


@pytest.mark.parametrize("binding", BINDINGS)
async def test_stop_and_task_calls_through_the_binding(both, tmp_path, binding):
    async with A2AClient(config(both.url + "/", tmp_path, binding=binding)) as client:
        chat = Chat(client)
        await chat.open(None)
        running = asyncio.ensure_future(chat.send("a slow answer with many many words to say"))
        while not any(i.kind is ItemKind.ARTIFACT for i in chat.conversation.items):
            await asyncio.sleep(0.02)
        await chat.stop(grace=2.0)
        await running
        assert chat.conversation.turn_state == "canceled"
        task_id = chat.conversation.items[0].task_id
        task = await client.get_task(task_id)
        assert task["status"]["state"] == "TASK_STATE_CANCELED"
        page = await client.list_tasks(chat.session_id)
        assert [t["id"] for t in page.tasks] == [task_id]


async def test_an_unknown_task_is_the_same_error_on_both(both, tmp_path):
    codes = []
    for binding in BINDINGS:
        async with A2AClient(config(both.url + "/", tmp_path, binding=binding)) as client:
            with pytest.raises(RpcError) as info:
                await client.get_task("nope")
            codes.append(info.value.code)
    assert codes == [-32001, -32001]


async def test_ids_stay_one_path_segment(tmp_path):
    """A task or session id is one escaped segment: ``../../x`` cannot reach another route."""
    recorder = Recorder()
    card = card_json_10("http://127.0.0.1:1/rest", binding="HTTP+JSON")
    with ServeInThread(card_only_app(card, recorder)) as served:
        card["supportedInterfaces"][0]["url"] = served.url + "/rest"
        api = served.url + "/api"
        async with A2AClient(config(served.url + "/", tmp_path, api=api)) as client:
            for call in (
                lambda: client.get_task("../../x"),
                lambda: client.cancel_task(".."),
                lambda: client.session_tasks("../../sessions"),
                lambda: client.get_session(".."),
            ):
                with contextlib.suppress(ClientError):  # this recorder answers what it likes
                    await call()
    raw = [s.raw_path for s in recorder.seen if s.path != "/.well-known/agent-card.json"]
    assert raw == [
        "/rest/tasks/..%2F..%2Fx",
        "/rest/tasks/%2E%2E:cancel",
        "/api/sessions/..%2F..%2Fsessions/tasks",
        "/api/sessions/%2E%2E",
    ]


async def test_a_grpc_only_card_is_taken_over_grpc(tmp_path):
    """(tests/grpc/ speaks to such agents; here: the choice, and nothing is asked of the card's host)"""
    card = {
        "name": "grpc-agent",
        "description": "only gRPC",
        "version": "1",
        "supportedInterfaces": [{"url": "grpc.example:443", "protocolBinding": "GRPC", "protocolVersion": "1.0"}],
        "capabilities": {"streaming": True},
        "skills": [],
    }
    with ServeInThread(card_only_app(card)) as served:
        async with A2AClient(config(served.url + "/", tmp_path)) as client:
            caps = await client.connect()
            assert (caps.binding, caps.endpoint) == ("GRPC", "grpc.example:443")


# -- the embedded server, through each binding --------------------------------------------------
@pytest.mark.parametrize("binding", BINDINGS)
async def test_embedded_send_history_rewind_stop(embedded, tmp_path, binding):
    payload = b"\x89PNG\r\n\x1a\n" + bytes(range(256)) * 4
    picture = FileAttachment(name="pixel.png", media_type="image/png", data=payload)
    async with A2AClient(config(embedded.agent_url, tmp_path, binding=binding)) as client:
        chat = Chat(client)
        await chat.open(None)
        assert (await client.connect()).binding == binding
        await chat.send("first", [picture, DataAttachment({"k": [1, 2]})])
        await chat.send("second")
        assert chat.conversation.turn_state == "completed"
        sid = chat.session_id
        first, second = chat.conversation.turn_invocations()
        # the stored task, read through the binding, keeps the file byte for byte
        task_id = next(i.task_id for i in chat.conversation.items if i.role == "user")
        task = await client.get_task(task_id)
        user = next(m for m in task["history"] if m["role"] == "ROLE_USER")
        file_parts = [p for p in user["parts"] if part_info(p).kind == "file"]
        assert part_bytes(file_parts[0]) == payload and part_info(file_parts[0]).name == "pixel.png"
        assert [part_info(p).data for p in user["parts"] if part_info(p).kind == "data"] == [{"k": [1, 2]}]
        # rewind over A2A, through this binding
        await chat.rewind(second)
        assert chat.conversation.turn_invocations() == [first]
        # stop a running turn (CancelTask through this binding)
        running = asyncio.ensure_future(chat.send("a long one " * 30))
        while not any(i.role == "agent" and i.streaming for i in chat.conversation.items):
            await asyncio.sleep(0.01)
        await chat.stop(grace=3.0)
        await running
        assert chat.conversation.turn_state in ("canceled", "completed")
    # history: what the server holds, with the picture still on the first turn
    async with A2AClient(config(embedded.agent_url, tmp_path, binding=binding)) as client:
        again = Chat(client)
        await again.open(sid)
        assert again.conversation.turn_invocations()[0] == first
        assert [part_info(p).name for p in user_parts(again) if part_info(p).kind == "file"] == ["pixel.png"]


async def test_embedded_card_offers_both_and_0_3_cannot_use_http_json(embedded, tmp_path):
    from rewindtui.a2a.dialect import Dialect

    async with A2AClient(config(embedded.agent_url, tmp_path)) as client:
        caps = await client.connect()
        bindings = [(i["protocolBinding"], i["protocolVersion"]) for i in caps.card["supportedInterfaces"]]
        assert ("HTTP+JSON", "1.0") in bindings and caps.binding == "JSONRPC"
    async with A2AClient(config(embedded.agent_url, tmp_path, binding="HTTP+JSON", dialect=Dialect.V03)) as client:
        with pytest.raises(Unsupported, match="no HTTP\\+JSON interface rewindtui can use"):
            await client.connect()


@pytest.mark.parametrize("binding", BINDINGS)
async def test_resume_a_running_task_through_the_binding(both, tmp_path, binding):
    """SubscribeToTask (``POST {url}/tasks/{id}:subscribe`` on HTTP+JSON): a second reader follows
    a running turn to its end."""
    async with A2AClient(config(both.url + "/", tmp_path, binding=binding)) as client:
        chat = Chat(client)
        await chat.open(None)
        running = asyncio.ensure_future(chat.send("a slow answer with several words"))
        while not any(i.kind is ItemKind.ARTIFACT for i in chat.conversation.items):
            await asyncio.sleep(0.02)
        task_id = chat.conversation.items[0].task_id
        states = []
        async with A2AClient(config(both.url + "/", tmp_path / "second", binding=binding)) as other:
            async for event in other.subscribe(task_id):
                body = event.body if isinstance(event.body, dict) else {}
                state = (body.get("status") or {}).get("state")
                if state:
                    states.append(state)
        await running
        assert states[-1] == "TASK_STATE_COMPLETED"
        assert chat.conversation.turn_state == "completed"


async def test_the_embedded_server_takes_a2a_json_and_still_refuses_pages(embedded):
    """The HTTP+JSON binding's media type is JSON too; what a browser page may send is not."""
    import httpx

    body = {"message": {"messageId": "m-a2a-json", "role": "ROLE_USER", "parts": [{"text": "hi"}]}}
    async with httpx.AsyncClient() as http:
        ok = await http.post(
            embedded.agent_url + "message:send",
            json=body,
            headers={"A2A-Version": "1.0", "Content-Type": "application/a2a+json"},
        )
        assert ok.status_code == 200, ok.text
        assert ok.json()["task"]["status"]["state"] == "TASK_STATE_COMPLETED"
        page = await http.post(
            embedded.agent_url + "message:send", content=b"{}", headers={"Content-Type": "text/plain"}
        )
        assert page.status_code == 415
