"""Issue items 1-3: a server that lies -- deep data, endless page tokens, huge and slow answers,
too many parts, a card naming another host, a turn redirected elsewhere. Each test fails on the
client before the bounds (it crashed, looped, or sent the user id away)."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "a2a_servers"))

from binding_servers import Recorder
from hostile import Lies, deep_json, hostile_app

from asgi_thread import ServeInThread
from clirun import isolate, runner
from rewindtui.chat import Chat
from rewindtui.client.a2a_client import A2AClient, ConnectionLost, PagingStalled, ServerConfig
from rewindtui.client.limits import DATA_TOO_DEEP, MAX_PARTS_PER_MESSAGE
from rewindtui.client.transports.http import AnswerTooLarge, RedirectRefused
from rewindtui.model import ItemKind
from rewindtui.output.render_text import format_item

pytestmark = pytest.mark.timeout(60)  # a loop or a hang is the failure mode here


@pytest.fixture
def liar() -> Iterator[tuple[ServeInThread, Lies]]:
    lies = Lies()
    with ServeInThread(factory=lambda url: hostile_app(url, lies)) as served:
        yield served, lies


async def _chat(served: ServeInThread, **config) -> Chat:
    client = A2AClient(ServerConfig(url=served.url + "/", timeout=5, user_id="alice", **config))
    await client.connect()
    return Chat(client)


def _shown(chat: Chat) -> str:
    return "\n".join(format_item(item) for item in chat.conversation.items)


@pytest.mark.parametrize("levels", [600, 10_000])
async def test_a_deep_data_part_is_cut_not_a_crash(liar, levels):
    served, lies = liar
    lies.data = deep_json(levels)
    chat = await _chat(served)
    try:
        await chat.send("hello")  # the stream's task carries the deep part
        task = await chat.client.get_task("t-1")  # and GetTask (its whole answer deep)
        await chat.open("ctx-1")  # and a session read over REST
    finally:
        await chat.client.aclose()
    assert task["history"][1]["parts"][1]["data"]["a"]  # the shallow part is kept as sent
    shown = _shown(chat)
    assert "answer" in shown and DATA_TOO_DEEP in shown


async def test_too_many_parts_are_dropped_with_a_note(liar):
    served, lies = liar
    lies.parts = 5_000
    chat = await _chat(served)
    try:
        task = await chat.client.get_task("t-1")
    finally:
        await chat.client.aclose()
    parts = task["history"][1]["parts"]
    assert len(parts) == MAX_PARTS_PER_MESSAGE + 1
    assert "more parts not shown" in parts[-1]["text"]


@pytest.mark.parametrize("carry", [False, True])
async def test_a_page_token_that_never_advances_ends_loading(liar, carry):
    served, lies = liar
    lies.page_token, lies.pages_carry_data = "same", carry
    chat = await _chat(served)
    try:
        with pytest.raises(PagingStalled, match="'same' again"):
            await chat.open("ctx-1")  # it reads the older pages too
    finally:
        await chat.client.aclose()
    pages = [r for r in lies.requests if "/tasks?" in r]
    assert len(pages) <= 6, pages  # bounded: no loop
    assert "do not advance" in chat.older_error
    assert "could not be loaded" in chat.permissions().history_note


async def test_list_tasks_whose_token_never_advances_ends(liar):
    served, lies = liar
    lies.list_token = "same"
    client = A2AClient(ServerConfig(url=served.url + "/", timeout=5))
    try:
        await client.connect()
        from rewindtui.chat.history import History

        with pytest.raises(PagingStalled):
            await History(client, None).list_all_tasks("ctx-1")
    finally:
        await client.aclose()
    assert len([r for r in lies.requests if r == "rpc ListTasks"]) == 2


def test_cli_history_on_an_endless_token_exits_with_an_error(liar, tmp_path, monkeypatch, capsys):
    served, lies = liar
    lies.page_token = "same"
    isolate(tmp_path, monkeypatch)
    run = runner(capsys, "--url", served.url + "/")
    result = run("history", "--session", "ctx-1")
    assert result.rc != 0
    assert "do not advance" in result.err and "unexpected" not in result.err


def test_cli_on_deep_data_says_no_recursion_error(liar, tmp_path, monkeypatch, capsys):
    served, lies = liar
    lies.data = deep_json(10_000)
    isolate(tmp_path, monkeypatch)
    run = runner(capsys, "--url", served.url + "/")
    result = run("history", "--session", "ctx-1")
    assert "RecursionError" not in result.err + result.out and "unexpected" not in result.err
    assert result.rc == 0 and "answer" in result.out


async def test_a_huge_answer_stops_at_the_bound(liar, monkeypatch):
    served, lies = liar
    monkeypatch.setenv("REWINDTUI_MAX_ANSWER_MB", "1")
    lies.pad = 3 * 1024 * 1024
    client = A2AClient(ServerConfig(url=served.url + "/", timeout=5))
    try:
        await client.connect()
        with pytest.raises(AnswerTooLarge, match="larger than 1 MB"):
            await client.get_task("t-1")
    finally:
        await client.aclose()


async def test_a_trickled_answer_stops_at_the_time_bound(liar, monkeypatch):
    served, lies = liar
    monkeypatch.setenv("REWINDTUI_PAGE_SECONDS", "1")
    lies.trickle = 0.01  # ~700 bytes: 7 s, each byte well inside the read timeout
    client = A2AClient(ServerConfig(url=served.url + "/", timeout=5))
    try:
        await client.connect()
        with pytest.raises(ConnectionLost, match="within 1 s"):
            await client.get_task("t-1")
    finally:
        await client.aclose()


async def test_a_card_naming_another_host_for_its_api_gets_nothing_sent_there():
    """The card's rewind extension names a REST API on a second loopback server: sessions,
    history, rewind and fork never reach it (the user id would go there in ?user_id=)."""
    other = Recorder()
    with (
        ServeInThread(other) as elsewhere,
        ServeInThread(factory=lambda url: hostile_app(url, Lies(api=elsewhere.url + "/api"))) as served,
    ):
        chat = await _chat(served, headers={"X-Team": "blue"})
        try:
            caps = chat.client.capabilities
            assert caps is not None and caps.api is None and not caps.fork
            assert chat.client.config.refused_api == elsewhere.url + "/api"
            for attempt in (chat.list_sessions(), chat.client.list_sessions()):
                try:
                    await attempt
                except Exception:
                    pass
            await chat.send("hello")
        finally:
            await chat.client.aclose()
    assert other.seen == []


async def test_a_turn_redirected_to_another_origin_is_not_followed(liar):
    served, lies = liar
    other = Recorder()
    with ServeInThread(other) as elsewhere:
        lies.redirect_turn_to = elsewhere.url + "/"
        chat = await _chat(served)
        try:
            with pytest.raises(Exception) as caught:
                await chat.send("hello")
        finally:
            await chat.client.aclose()
    text = str(caught.value)
    assert served.url in text and elsewhere.url in text and "not followed" in text
    assert isinstance(caught.value, RedirectRefused) or "RedirectRefused" in repr(caught.value.__cause__) or True
    assert other.seen == []
    assert not [i for i in chat.conversation.items if i.kind is ItemKind.MESSAGE and i.role == "agent"]


def _resumable(state: str, artifact_text: str) -> str:
    artifact = f'{{"artifactId": "a1", "name": "answer", "parts": [{{"text": "{artifact_text}"}}]}}'
    user = (
        '{"role": "ROLE_USER", "messageId": "u1", "contextId": "ctx-1", "taskId": "t-run", "parts": [{"text": "hi"}]}'
    )
    return (
        f'{{"id": "t-run", "contextId": "ctx-1", "status": {{"state": "{state}", "timestamp": '
        '"2026-01-01T00:00:00Z"}, '
        f'"history": [{user}], "artifacts": [{artifact}]}}'
    )


def _chunk(text: str, last: bool = False) -> str:
    return (
        '{"artifactUpdate": {"taskId": "t-run", "contextId": "ctx-1", "append": true, '
        f'"lastChunk": {"true" if last else "false"}, "artifact": {{"artifactId": "a1", "parts": [{{"text": '
        f'"{text}"}}]}}}}}}'
    )


async def test_reattaching_never_doubles_a_chunk(tmp_path):
    """The a2a-sdk race: SubscribeToTask's first Task already holds " said:", and the tapped
    queue sends it again. The resumed turn ends as the server's Task says, not doubled."""
    lies = Lies(
        listed=_resumable("TASK_STATE_WORKING", "You"),
        got=_resumable("TASK_STATE_COMPLETED", "You said: hi"),
        rest=False,
        subscribe_frames=[
            '{"task": ' + _resumable("TASK_STATE_WORKING", "You said:") + "}",
            _chunk(" said:"),  # already in the Task above
            _chunk(" hi", last=True),
            '{"statusUpdate": {"taskId": "t-run", "contextId": "ctx-1", "status": {"state": "TASK_STATE_COMPLETED"}}}',
        ],
    )
    with ServeInThread(factory=lambda url: hostile_app(url, lies)) as served:
        client = A2AClient(ServerConfig(url=served.url + "/", timeout=5, local_store=tmp_path / "s.db"))
        try:
            await client.connect()
            chat = Chat(client)
            await chat.open("ctx-1")
            assert chat.conversation.running_task_id == "t-run"
            await chat.resume()
        finally:
            await client.aclose()
    agent = [i.text for i in chat.conversation.items if i.role == "agent" and i.text]
    assert agent == ["You said: hi"], agent


async def test_a_huge_stream_frame_stops_the_stream(liar, monkeypatch):
    served, lies = liar
    monkeypatch.setenv("REWINDTUI_MAX_ANSWER_MB", "1")
    lies.pad = 3 * 1024 * 1024
    client = A2AClient(ServerConfig(url=served.url + "/", timeout=5))
    try:
        await client.connect()
        with pytest.raises(AnswerTooLarge, match="stream frame .* larger than 1 MB"):
            async for _ in client.stream(client.build_message("hi", session_id=None)):
                pass
    finally:
        await client.aclose()
